/**
 * The MCP gateway (DESIGN.md §1 `src/mcp/`, docs/mcp.md): an MCP server in front of one or more
 * upstream MCP servers. Tools, resources and prompts pass through; consequential tools (the policy's)
 * run under occurrences. Each MCP session is one executor generation of the policy's lineage: a
 * session starts with a takeover (AOC-REQ-006), so a restarted gateway, or a second one, retires its
 * predecessor, and the predecessor's in-doubt calls are reported (AOC-REQ-005), never repeated.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type ServerCapabilities,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Executor } from '../client/index.js';
import { systemClock } from '../core/clock.js';
import { BatonError } from '../core/errors.js';
import { callConsequential, type Ctx } from './consequential.js';
import { MISSIONS_NOT_ENFORCED, OutcomeCache, type GatewayOptions } from './gateway-types.js';
import { handoverReport } from './handover.js';
import { toolError } from './results.js';
import { Running } from './stopping.js';
import { annotateTool } from './annotate.js';
import type { McpPolicy } from './policy.js';
import { ToolSchemas, type Listing } from './schemas.js';
import {
  connectUpstream,
  GATEWAY_INFO,
  listPrompts,
  listResources,
  listResourceTemplates,
  listTools,
  sessionGone,
  type Upstream,
  type UpstreamSpec,
} from './upstream.js';

export const DEFAULT_UPSTREAM_TIMEOUT_MS = 30_000;
/**
 * The shortest upstream timeout the gateway accepts: below it, every consequential call would fail
 * `upstream_unavailable` (its ping alone takes longer), so such a setting is refused at start.
 */
export const MIN_UPSTREAM_TIMEOUT_MS = 100;
/** The longest: an hour. */
export const MAX_UPSTREAM_TIMEOUT_MS = 3_600_000;

export interface GatewaySession {
  readonly server: Server;
  readonly executor: Executor;
}

export interface Gateway {
  readonly upstreams: readonly Upstream[];
  /** A new MCP session: a takeover of the lineage, then a Server to connect to a transport. */
  session(): Promise<GatewaySession>;
  /**
   * Stop taking work: new consequential calls are refused (`gateway_stopping`, nothing created or
   * sent) and new sessions too; the running ones are waited for, at most the upstream timeout plus
   * STOP_GRACE_MS to record their answers. Resolves with how many were still running (logged as
   * left in doubt). `close` stops first.
   */
  stop(): Promise<number>;
  close(): Promise<void>;
}

interface Routes {
  readonly tools: Map<string, { upstream: Upstream; tool: Tool }>;
}

type StartListings = Map<Upstream, { listing: Listing; tools: Tool[] }>;

async function routeTools(
  upstreams: readonly Upstream[],
): Promise<{ routes: Routes; listed: StartListings }> {
  const tools = new Map<string, { upstream: Upstream; tool: Tool }>();
  const listed: StartListings = new Map();
  for (const u of upstreams) {
    // The tools epoch before the listing: a change announced while it is read makes it stale.
    const listing = { epoch: u.toolsEpoch, seq: 0 };
    const offered = await listTools(u);
    listed.set(u, { listing, tools: offered });
    for (const tool of offered) {
      if (tools.has(tool.name)) {
        throw new BatonError('mcp_upstream_invalid', `tool ${tool.name} is offered by two upstreams`, {
          tool: tool.name,
        });
      }
      tools.set(tool.name, { upstream: u, tool });
    }
  }
  return { routes: { tools }, listed };
}

function checkTimeout(ms: number | undefined): void {
  if (ms === undefined) return;
  if (!Number.isInteger(ms) || ms < MIN_UPSTREAM_TIMEOUT_MS || ms > MAX_UPSTREAM_TIMEOUT_MS)
    throw new BatonError(
      'usage',
      `upstreamTimeoutMs must be a whole number from ${MIN_UPSTREAM_TIMEOUT_MS} to ${MAX_UPSTREAM_TIMEOUT_MS} (ms): below it every consequential call would fail upstream_unavailable`,
    );
}

/** A tool the policy lists but no upstream offers is an error at start (issue 15, item 2). */
function checkPolicy(policy: McpPolicy, routes: Routes): void {
  for (const p of policy.tools.values()) {
    const route = routes.tools.get(p.tool);
    if (route === undefined)
      throw new BatonError('mcp_upstream_invalid', `policy tool ${p.tool} is not offered upstream`, {
        tool: p.tool,
      });
    if (p.upstream !== null && route.upstream.name !== p.upstream) {
      throw new BatonError(
        'mcp_upstream_invalid',
        `policy tool ${p.tool} is not offered by upstream ${p.upstream}`,
        { tool: p.tool },
      );
    }
    const read = p.settle.readTool;
    if (read !== null && routes.tools.get(read.name)?.upstream !== route.upstream) {
      throw new BatonError(
        'mcp_upstream_invalid',
        `read tool ${read.name} is not offered by ${p.tool}'s upstream`,
        { tool: read.name },
      );
    }
    // Called after a lost answer, so it must be a tool the upstream itself declares read-only: any
    // other could apply an effect — the consequential call sent again (AOC-REQ-010).
    if (read !== null && routes.tools.get(read.name)?.tool.annotations?.readOnlyHint !== true) {
      throw new BatonError(
        'mcp_upstream_invalid',
        `read tool ${read.name} is not declared read-only by its upstream (annotations.readOnlyHint: true)`,
        { tool: read.name },
      );
    }
  }
}

function capabilities(upstreams: readonly Upstream[]): ServerCapabilities {
  const any = (k: 'resources' | 'prompts'): boolean => upstreams.some((u) => u.capabilities[k] !== undefined);
  return {
    tools: {},
    ...(any('resources') ? { resources: {} } : {}),
    ...(any('prompts') ? { prompts: {} } : {}),
  };
}

export async function startGateway(
  options: GatewayOptions & { readonly upstreams: readonly UpstreamSpec[] },
): Promise<Gateway> {
  if (options.upstreams.length === 0)
    throw new BatonError('usage', 'the gateway needs at least one upstream');
  checkTimeout(options.upstreamTimeoutMs);
  const upstreams: Upstream[] = [];
  const running = new Running();
  let stopped: Promise<number> | undefined;
  const stop = (): Promise<number> => {
    stopped ??= drain(running, options);
    return stopped;
  };
  const close = async (): Promise<void> => {
    await stop();
    await Promise.allSettled(upstreams.map((u) => u.close()));
  };
  try {
    for (const spec of options.upstreams) upstreams.push(await connectUpstream(spec));
    const { routes, listed } = await routeTools(upstreams);
    checkPolicy(options.policy, routes);
    // Each policy tool's check, compiled from its upstream's input schema now (a schema that cannot
    // be compiled is an error at start, `mcp_upstream_invalid`) and kept to the latest listing.
    const schemas = new ToolSchemas(
      options.policy,
      (tool) => routes.tools.get(tool)?.upstream,
      (u) => passThrough(u, () => listTools(u)),
      listed,
      options.log,
    );
    const shared: Shared = { cache: new OutcomeCache(), routes, schemas, running };
    return {
      upstreams,
      session: () => openSession(options, upstreams, shared),
      stop,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** How long past the upstream timeout a stop waits for the running calls' answers to be recorded. */
export const STOP_GRACE_MS = 5_000;

async function drain(running: Running, options: GatewayOptions): Promise<number> {
  const timeoutMs = options.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const left = await running.drain(timeoutMs + STOP_GRACE_MS);
  if (left > 0)
    options.log?.(
      `mcp: stopped with ${left} consequential call(s) still running; their occurrences stay in doubt for the next gateway or an operator to reconcile`,
    );
  return left;
}

interface Shared {
  readonly cache: OutcomeCache;
  readonly routes: Routes;
  readonly schemas: ToolSchemas;
  readonly running: Running;
}

async function openSession(
  options: GatewayOptions,
  upstreams: readonly Upstream[],
  shared: Shared,
): Promise<GatewaySession> {
  // A takeover now would retire the generation whose calls the stop is waiting for (AOC-REQ-006).
  if (shared.running.stopping) throw new BatonError('unavailable', 'the gateway is stopping');
  const executor = await options.baton.takeover(options.policy.lineage);
  const report = handoverReport(executor);
  options.log?.(report.line);
  const server = new Server(GATEWAY_INFO, {
    capabilities: capabilities(upstreams),
    instructions: report.instructions,
  });
  const inflight = new Map<string, Promise<CallToolResult>>();
  const ctxFor = (name: string): Ctx | undefined => {
    const p = options.policy.tools.get(name);
    const route = shared.routes.tools.get(name);
    if (p === undefined || route === undefined) return undefined;
    const latest = shared.schemas.entry(name);
    // Compiled at start for every policy tool; a policy tool is never passed through unchecked.
    if (latest === undefined)
      throw new BatonError('mcp_upstream_invalid', `tool ${name} has no arguments check`);
    return {
      executor,
      baton: options.baton,
      upstream: route.upstream,
      policy: p,
      cache: shared.cache,
      inflight,
      leaseKeys: options.leaseKeys,
      missions: options.missions ?? MISSIONS_NOT_ENFORCED,
      clock: options.clock ?? systemClock,
      upstreamTimeoutMs: options.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS,
      hasOutputSchema: (latest.tool ?? route.tool).outputSchema !== undefined,
      argumentsCheck: latest.check,
      currentSchema: async () => {
        const epoch = await shared.schemas.fresh(route.upstream);
        const now = shared.schemas.entry(name);
        if (now === undefined)
          throw new BatonError('mcp_upstream_invalid', `tool ${name} has no arguments check`);
        const hasOutputSchema = (now.tool ?? route.tool).outputSchema !== undefined;
        return { check: now.check, hasOutputSchema, epoch };
      },
      ...(options.log === undefined ? {} : { log: options.log }),
    };
  };
  const enforced = options.missions !== undefined && options.missions !== MISSIONS_NOT_ENFORCED;
  registerTools(server, options.policy, upstreams, shared, ctxFor, enforced);
  registerResources(server, upstreams);
  registerPrompts(server, upstreams);
  return { server, executor };
}

const STOPPING = toolError(
  'gateway_stopping',
  'the gateway is stopping; nothing was created or sent upstream; the same call may be repeated on the next gateway',
);

/**
 * A pass-through request on the upstream's current connection, re-established first when it was
 * lost; a transport failure marks it for a check before the next request — an answer (a JSON-RPC
 * error from the upstream) or the agent's cancellation says nothing about the connection. Retried
 * once only when the upstream provably did not process it — an HTTP upstream's 404 for the
 * gateway's session (it restarted): the session is re-initialized and the request sent on the new
 * one. Any other failure is the agent's to repeat or not.
 */
async function passThrough<T>(
  u: Upstream,
  call: (c: Client) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const held = async (verify: boolean): Promise<T> => {
    let release: () => void;
    try {
      release = await u.ready({ verify, hold: true });
    } catch (error) {
      const why = error instanceof BatonError ? error.message : `upstream ${u.name} is unavailable`;
      throw new McpError(ErrorCode.InternalError, `upstream_unavailable: ${why}`);
    }
    try {
      return await call(u.client);
    } finally {
      release();
    }
  };
  try {
    return await held(false);
  } catch (error) {
    if (transportFailure(error, signal)) u.suspect();
    if (!sessionGone(error)) throw error;
  }
  return held(true);
}

/**
 * Not an answer from the upstream nor the agent's cancellation: the SDK's own timeout or closed
 * connection, an HTTP status, a network error.
 */
function transportFailure(error: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted === true) return false;
  if (!(error instanceof McpError)) return true;
  const local: number[] = [ErrorCode.RequestTimeout, ErrorCode.ConnectionClosed];
  return local.includes(error.code);
}

function registerTools(
  server: Server,
  policy: McpPolicy,
  upstreams: readonly Upstream[],
  shared: Shared,
  ctxFor: (name: string) => Ctx | undefined,
  missionsEnforced = false,
): void {
  const { routes, running, schemas } = shared;
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const tools: Tool[] = [];
    for (const u of upstreams) {
      const listing = schemas.begin(u);
      const offered = await passThrough(u, () => listTools(u));
      // What the agent is shown is what its consequential calls are checked against.
      schemas.seen(u, listing, offered);
      for (const tool of offered) {
        const p = policy.tools.get(tool.name);
        tools.push(p === undefined ? tool : annotateTool(tool, p, policy.lineage, missionsEnforced));
      }
    }
    return { tools };
  });
  /**
   * The upstream's latest schema first (schemas.ts): after a `tools/list_changed`, the tools are
   * listed again before anything is derived; a failed re-listing refuses the call, nothing sent.
   * A restart this does not see yet is found by the call's connection check, after which the call
   * is checked again (consequential.ts `run`) before anything is created.
   */
  const consequential = async (
    u: Upstream,
    params: Parameters<typeof callConsequential>[1],
  ): Promise<CallToolResult> => {
    try {
      await schemas.fresh(u);
    } catch (error) {
      if (!(error instanceof BatonError)) throw error;
      return toolError(error.code, `${error.message}; nothing was created or sent upstream`);
    }
    const ctx = ctxFor(params.name);
    if (ctx === undefined) throw new BatonError('mcp_upstream_invalid', `tool ${params.name} is not routed`);
    return callConsequential(ctx, params);
  };
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const route = routes.tools.get(request.params.name);
    // A consequential call ignores the agent's cancellation: Baton's record must be completed.
    if (route !== undefined && policy.tools.has(request.params.name)) {
      if (running.stopping) return STOPPING;
      return running.track(consequential(route.upstream, request.params));
    }
    if (route === undefined)
      throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    return passThrough(
      route.upstream,
      (c) =>
        c.request({ method: 'tools/call', params: request.params }, CallToolResultSchema, {
          signal: extra.signal,
        }),
      extra.signal,
    );
  });
}

function registerResources(server: Server, upstreams: readonly Upstream[]): void {
  const owners = upstreams.filter((u) => u.capabilities.resources !== undefined);
  if (owners.length === 0) return;
  const byUri = new Map<string, Upstream>();
  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const resources = [];
    for (const u of owners) {
      for (const r of await passThrough(u, () => listResources(u))) {
        byUri.set(r.uri, u);
        resources.push(r);
      }
    }
    return { resources };
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => {
    const resourceTemplates = [];
    for (const u of owners) resourceTemplates.push(...(await passThrough(u, () => listResourceTemplates(u))));
    return { resourceTemplates };
  });
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    // One upstream with resources owns every URI; with several, only a listed URI is routed.
    const u = byUri.get(request.params.uri) ?? (owners.length === 1 ? owners[0] : undefined);
    if (u === undefined) throw new McpError(ErrorCode.InvalidParams, 'Resource not listed by any upstream');
    return passThrough(u, (c) => c.readResource(request.params, { signal: extra.signal }), extra.signal);
  });
}

function registerPrompts(server: Server, upstreams: readonly Upstream[]): void {
  const owners = upstreams.filter((u) => u.capabilities.prompts !== undefined);
  if (owners.length === 0) return;
  const byName = new Map<string, Upstream>();
  server.setRequestHandler(ListPromptsRequestSchema, async () => {
    const prompts = [];
    for (const u of owners) {
      for (const p of await passThrough(u, () => listPrompts(u))) {
        byName.set(p.name, u);
        prompts.push(p);
      }
    }
    return { prompts };
  });
  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    const u = byName.get(request.params.name) ?? (owners.length === 1 ? owners[0] : undefined);
    if (u === undefined) throw new McpError(ErrorCode.InvalidParams, 'Prompt not listed by any upstream');
    return passThrough(u, (c) => c.getPrompt(request.params, { signal: extra.signal }), extra.signal);
  });
}
