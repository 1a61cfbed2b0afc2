/**
 * The gateway's upstream side: one SDK `Client` per upstream MCP server, reached by Streamable HTTP
 * (a URL) or stdio (a command the gateway starts). Tool, resource and prompt lists are read through
 * every page, so routing and the policy check at start see everything the upstream offers.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type ServerCapabilities,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { BatonError } from '../core/errors.js';
import { perRequestSignalFetch } from './http-fetch.js';

export type UpstreamSpec =
  | { readonly name: string; readonly url: string }
  | {
      readonly name: string;
      readonly command: string;
      readonly args: readonly string[];
      /** The started upstream's whole environment; default `upstreamEnvironment(process.env)`. */
      readonly env?: Readonly<Record<string, string>>;
    };

/**
 * The environment a stdio upstream is started with: the gateway's own (the upstream's API key,
 * base URL, proxy settings), less Baton's secrets — every `BATON_*` variable (the operator token
 * the gateway polices the upstream with, BATON_HMAC_SECRETS…) and the variables `withheld` names
 * (what a `--credentials` document references: a status source's secret in the upstream's hands
 * could forge the authenticated reading that settles its own calls, AOC-REQ-009).
 */
export function upstreamEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  withheld: Iterable<string> = [],
): Record<string, string> {
  const drop = new Set(withheld);
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || name.toUpperCase().startsWith('BATON_') || drop.has(name)) continue;
    kept[name] = value;
  }
  return kept;
}

export interface Upstream {
  readonly name: string;
  /** The SDK client of the current connection (replaced when the gateway reconnects). */
  readonly client: Client;
  /** The capabilities the upstream declared at start (routing is fixed then). */
  readonly capabilities: ServerCapabilities;
  /**
   * Connected now, or an error (`BatonError` `upstream_unavailable`): a lost connection (the
   * transport closed, an error was reported, a request failed) is re-established first. With
   * `verify`, an MCP ping proves the connection before the caller commits to anything — the
   * consequential path, before create-and-enter: a dead upstream must be found while nothing is
   * entered, never after (AOC-REQ-010: an entered call is never sent again).
   */
  ready(options?: { readonly verify?: boolean; readonly timeoutMs?: number }): Promise<void>;
  /** A request to it failed: the connection is checked (and re-established) before the next one. */
  suspect(): void;
  close(): Promise<void>;
}

export const GATEWAY_INFO = { name: 'baton-mcp-gateway', version: '0.1.0' } as const;

/** How long a liveness ping may take before the upstream counts as unavailable. */
export const PING_TIMEOUT_MS = 5_000;

function transportFor(spec: UpstreamSpec): Transport {
  return 'url' in spec
    ? new StreamableHTTPClientTransport(new URL(spec.url), { fetch: perRequestSignalFetch() })
    : new StdioClientTransport({
        command: spec.command,
        args: [...spec.args],
        // Explicit: the SDK's default passes only HOME, PATH, SHELL, TERM… (no API key, no base URL).
        env: spec.env ?? upstreamEnvironment(process.env),
        stderr: 'inherit',
      });
}

type State = 'connected' | 'suspect' | 'closed';

/** One connection: an initialized SDK client whose losses are noted in `state`. */
async function open(spec: UpstreamSpec, noteLoss: (c: Client, s: State) => void): Promise<Client> {
  const client = new Client(GATEWAY_INFO, { capabilities: {} });
  client.onclose = () => noteLoss(client, 'closed');
  client.onerror = () => noteLoss(client, 'suspect');
  try {
    await client.connect(transportFor(spec));
  } catch (cause) {
    await client.close().catch(() => undefined);
    throw new BatonError(
      'upstream_unavailable',
      `cannot connect to upstream ${spec.name}`,
      { upstream: spec.name },
      { cause },
    );
  }
  return client;
}

/**
 * `open`, tried up to three times: after an HTTP upstream restarted, a kept-alive socket to the
 * old process can fail the first request ("other side closed"). An `initialize` sends nothing
 * consequential, so trying it again is safe.
 */
async function openRetried(spec: UpstreamSpec, noteLoss: (c: Client, s: State) => void): Promise<Client> {
  for (let tries = 1; ; tries++) {
    try {
      return await open(spec, noteLoss);
    } catch (error) {
      if (tries === 3) throw error;
    }
  }
}

/**
 * An HTTP upstream answered 404 for the gateway's session: the MCP Streamable HTTP transport's
 * "session not found" (the upstream restarted or expired it), sent before the request is processed.
 */
export function sessionGone(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code === 404;
}

/** A ping that timed out: the upstream may be busy, not gone, so its connection is kept. */
function timedOut(error: unknown): boolean {
  return error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number);
}

export async function connectUpstream(spec: UpstreamSpec): Promise<Upstream> {
  let state: State = 'connected';
  let closing = false;
  let reconnecting: Promise<void> | undefined;
  const noteLoss = (c: Client, s: State): void => {
    // Only the current connection's losses count; a replaced one's close is expected.
    if (c !== client || state === 'closed') return;
    state = s;
  };
  let client: Client;
  try {
    client = await open(spec, noteLoss);
  } catch (error) {
    // At start, an upstream that cannot be reached is a start error (exit 2), as before.
    throw new BatonError(
      'mcp_upstream_invalid',
      `cannot connect to upstream ${spec.name}`,
      { upstream: spec.name },
      { cause: error },
    );
  }
  const capabilities = client.getServerCapabilities() ?? {};
  const unavailable = (why: string, cause?: unknown): BatonError =>
    new BatonError(
      'upstream_unavailable',
      `upstream ${spec.name} is unavailable (${why})`,
      { upstream: spec.name },
      cause === undefined ? undefined : { cause },
    );
  const reconnect = (): Promise<void> => {
    reconnecting ??= (async () => {
      const old = client;
      state = 'closed';
      await old.close().catch(() => undefined);
      if (closing) throw unavailable('the gateway is stopping');
      const next = await openRetried(spec, noteLoss);
      if (closing) {
        // Closed while reconnecting: the new connection (a started stdio child) is not left behind.
        await next.close().catch(() => undefined);
        throw unavailable('the gateway is stopping');
      }
      client = next;
      state = 'connected';
    })().finally(() => {
      reconnecting = undefined;
    });
    return reconnecting;
  };
  const ping = async (timeoutMs: number): Promise<'ok' | 'busy' | 'lost'> => {
    try {
      await client.ping({ timeout: timeoutMs });
      return 'ok';
    } catch (error) {
      return timedOut(error) ? 'busy' : 'lost';
    }
  };
  return {
    name: spec.name,
    get client() {
      return client;
    },
    capabilities,
    async ready(options = {}) {
      if (closing) throw unavailable('the gateway is stopping');
      if (reconnecting !== undefined) await reconnecting;
      if (state === 'closed') return reconnect();
      if (state === 'connected' && options.verify !== true) return;
      // Suspect, or verifying before a consequential call: an HTTP upstream that restarted answers
      // 404 (its session is gone) and one that stopped refuses the connection — both "lost".
      const seen = await ping(options.timeoutMs ?? PING_TIMEOUT_MS);
      if (seen === 'ok') {
        state = 'connected';
        return;
      }
      if (seen === 'busy') throw unavailable('its ping timed out');
      return reconnect();
    },
    suspect() {
      if (state === 'connected') state = 'suspect';
    },
    close: () => {
      closing = true;
      return client.close();
    },
  };
}

/** Every page of a cursor-paged list. */
async function allPages<T>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; next?: string }>,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 1000; i += 1) {
    const p = await page(cursor);
    items.push(...p.items);
    if (p.next === undefined) return items;
    cursor = p.next;
  }
  throw new BatonError('mcp_upstream_invalid', 'an upstream list did not end within 1000 pages');
}

export function listTools(u: Upstream): Promise<Tool[]> {
  if (u.capabilities.tools === undefined) return Promise.resolve([]);
  return allPages(async (cursor) => {
    const r = await u.client.listTools(cursor === undefined ? {} : { cursor });
    return { items: r.tools, ...(r.nextCursor === undefined ? {} : { next: r.nextCursor }) };
  });
}

export function listResources(u: Upstream): Promise<Resource[]> {
  if (u.capabilities.resources === undefined) return Promise.resolve([]);
  return allPages(async (cursor) => {
    const r = await u.client.listResources(cursor === undefined ? {} : { cursor });
    return { items: r.resources, ...(r.nextCursor === undefined ? {} : { next: r.nextCursor }) };
  });
}

export function listResourceTemplates(u: Upstream): Promise<ResourceTemplate[]> {
  if (u.capabilities.resources === undefined) return Promise.resolve([]);
  return allPages(async (cursor) => {
    const r = await u.client.listResourceTemplates(cursor === undefined ? {} : { cursor });
    return { items: r.resourceTemplates, ...(r.nextCursor === undefined ? {} : { next: r.nextCursor }) };
  });
}

export function listPrompts(u: Upstream): Promise<Prompt[]> {
  if (u.capabilities.prompts === undefined) return Promise.resolve([]);
  return allPages(async (cursor) => {
    const r = await u.client.listPrompts(cursor === undefined ? {} : { cursor });
    return { items: r.prompts, ...(r.nextCursor === undefined ? {} : { next: r.nextCursor }) };
  });
}
