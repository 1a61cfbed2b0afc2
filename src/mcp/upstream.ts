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
  ToolListChangedNotificationSchema,
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
   * entered, never after (AOC-REQ-010: an entered call is never sent again). A connection other
   * requests are still using is never closed for a failed ping: only the new caller is refused
   * (AOC-REQ-005: the gateway never itself loses an entered call's answer). With `hold`, the
   * connection counts as in use until the returned release is called, so the caller's own request
   * — sent after entry — goes out on the connection it verified.
   */
  ready(options?: {
    readonly verify?: boolean;
    readonly timeoutMs?: number;
    readonly hold?: boolean;
  }): Promise<() => void>;
  /** A request to it failed: the connection is checked (and re-established) before the next one. */
  suspect(): void;
  /**
   * Counts the times the upstream's tools may have changed since start: each
   * `notifications/tools/list_changed` it sent, and each new connection (a restarted upstream may
   * offer other tools). The gateway lists the tools again before a consequential call when this
   * moved since its last listing (docs/mcp.md "A consequential call", step 1).
   */
  readonly toolsEpoch: number;
  /** Called each time `toolsEpoch` moves. */
  onToolsChanged(listener: () => void): void;
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

/** One connection, and how many requests (or held calls about to be sent) are using it. */
interface Conn {
  readonly client: Client;
  users: number;
}

/**
 * Every request on the client but a ping counts as a user of the connection while it runs: a
 * connection with users is never closed by the gateway (`connectUpstream`'s `ready`).
 */
function counted(client: Client): Conn {
  const conn: Conn = { client, users: 0 };
  const request = client.request.bind(client);
  client.request = (async (...args: Parameters<typeof request>): Promise<unknown> => {
    if (args[0].method === 'ping') return request(...args);
    conn.users += 1;
    try {
      return await request(...args);
    } finally {
      conn.users -= 1;
    }
  }) as typeof client.request;
  return conn;
}

/** One connection: an initialized SDK client whose losses are noted in `state`. */
async function open(
  spec: UpstreamSpec,
  noteLoss: (c: Client, s: State) => void,
  noteToolsChanged: (c: Client) => void,
): Promise<Conn> {
  const client = new Client(GATEWAY_INFO, { capabilities: {} });
  client.onclose = () => noteLoss(client, 'closed');
  client.onerror = () => noteLoss(client, 'suspect');
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => noteToolsChanged(client));
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
  return counted(client);
}

/**
 * `open`, tried up to three times: after an HTTP upstream restarted, a kept-alive socket to the
 * old process can fail the first request ("other side closed"). An `initialize` sends nothing
 * consequential, so trying it again is safe.
 */
async function openRetried(
  spec: UpstreamSpec,
  noteLoss: (c: Client, s: State) => void,
  noteToolsChanged: (c: Client) => void,
): Promise<Conn> {
  for (let tries = 1; ; tries++) {
    try {
      return await open(spec, noteLoss, noteToolsChanged);
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

type Seen = { readonly seen: 'ok' } | { readonly seen: 'busy' | 'lost'; readonly why: string };

/**
 * What a failed ping says about the connection. Lost — re-established when nothing else uses it —
 * only when the transport is closed or cannot reach the upstream (the SDK's "Not connected" or
 * "Connection closed", a refused connection) or an HTTP upstream answered 404 for the gateway's
 * session (it restarted). Any answer — a 5xx or 429 from the upstream or a proxy, a JSON-RPC error
 * — and a timeout mean an upstream that is there but busy or unavailable: its connection is kept.
 */
function pingFailure(error: unknown): Seen {
  if (error instanceof McpError) {
    if (error.code === (ErrorCode.RequestTimeout as number))
      return { seen: 'busy', why: 'its ping timed out' };
    if (error.code === (ErrorCode.ConnectionClosed as number))
      return { seen: 'lost', why: 'its connection closed' };
    return { seen: 'busy', why: `its ping was answered with error ${error.code}` };
  }
  if (error instanceof StreamableHTTPError) {
    if (error.code === 404) return { seen: 'lost', why: 'its session is gone (HTTP 404)' };
    return { seen: 'busy', why: `its ping was answered HTTP ${error.code}` };
  }
  return { seen: 'lost', why: 'its connection failed' };
}

const NOTHING_HELD = (): void => undefined;

/** The connection counts as in use until the returned function is called (once). */
function holdOn(conn: Conn): () => void {
  conn.users += 1;
  let held = true;
  return () => {
    if (held) conn.users -= 1;
    held = false;
  };
}

export async function connectUpstream(spec: UpstreamSpec): Promise<Upstream> {
  let state: State = 'connected';
  let closing = false;
  let reconnecting: Promise<void> | undefined;
  const noteLoss = (c: Client, s: State): void => {
    // Only the current connection's losses count; a replaced one's close is expected.
    if (c !== conn.client || state === 'closed') return;
    state = s;
  };
  let toolsEpoch = 0;
  const toolsListeners: (() => void)[] = [];
  const toolsChanged = (): void => {
    toolsEpoch += 1;
    for (const l of toolsListeners) l();
  };
  // A replaced connection's notification still says the upstream's tools changed: it counts too.
  const noteToolsChanged = (): void => toolsChanged();
  let conn: Conn;
  try {
    conn = await open(spec, noteLoss, noteToolsChanged);
  } catch (error) {
    // At start, an upstream that cannot be reached is a start error (exit 2), as before.
    throw new BatonError(
      'mcp_upstream_invalid',
      `cannot connect to upstream ${spec.name}`,
      { upstream: spec.name },
      { cause: error },
    );
  }
  const capabilities = conn.client.getServerCapabilities() ?? {};
  const unavailable = (why: string, cause?: unknown): BatonError =>
    new BatonError(
      'upstream_unavailable',
      `upstream ${spec.name} is unavailable (${why})`,
      { upstream: spec.name },
      cause === undefined ? undefined : { cause },
    );
  /** Replaces `from` — unless another caller already did. */
  const reconnect = (from: Conn): Promise<void> => {
    if (conn !== from) return Promise.resolve();
    reconnecting ??= (async () => {
      state = 'closed';
      await from.client.close().catch(() => undefined);
      if (closing) throw unavailable('the gateway is stopping');
      const next = await openRetried(spec, noteLoss, noteToolsChanged);
      if (closing) {
        // Closed while reconnecting: the new connection (a started stdio child) is not left behind.
        await next.client.close().catch(() => undefined);
        throw unavailable('the gateway is stopping');
      }
      conn = next;
      state = 'connected';
      // A new connection may be a restarted upstream whose tools (and input schemas) changed.
      toolsChanged();
    })().finally(() => {
      reconnecting = undefined;
    });
    return reconnecting;
  };
  const ping = async (c: Conn, timeoutMs: number): Promise<Seen> => {
    try {
      await c.client.ping({ timeout: timeoutMs });
      return { seen: 'ok' };
    } catch (error) {
      return pingFailure(error);
    }
  };
  const ready: Upstream['ready'] = async (options = {}) => {
    if (closing) throw unavailable('the gateway is stopping');
    if (reconnecting !== undefined) await reconnecting;
    const held = (): (() => void) => (options.hold === true ? holdOn(conn) : NOTHING_HELD);
    const c = conn;
    // Closed by the transport: its requests were already failed by the SDK, nothing more is cut.
    if (state === 'closed') return reconnect(c).then(held);
    if (state === 'connected' && options.verify !== true) return held();
    // Suspect, or verifying before a consequential call.
    const seen = await ping(c, options.timeoutMs ?? PING_TIMEOUT_MS);
    // Replaced, or being replaced, by another caller's reconnect while this ping ran: never hold
    // (and send an entered call on) a connection that is closing; ask again on its successor.
    if (conn !== c || reconnecting !== undefined) return ready(options);
    if (seen.seen === 'ok') {
      state = 'connected';
      return held();
    }
    if (seen.seen === 'busy') throw unavailable(seen.why);
    // Lost — but closing a connection that others still use would fail their requests, entered
    // consequential calls included, with answers the upstream may have applied (AOC-REQ-005/010).
    // Only this caller is refused; the connection is replaced once it is idle.
    if ((state as State) !== 'closed' && c.users > 0)
      throw unavailable(`${seen.why}; its connection is kept for ${c.users} call(s) in flight`);
    return reconnect(c).then(held);
  };
  return {
    name: spec.name,
    get client() {
      return conn.client;
    },
    capabilities,
    ready,
    suspect() {
      if (state === 'connected') state = 'suspect';
    },
    get toolsEpoch() {
      return toolsEpoch;
    },
    onToolsChanged(listener) {
      toolsListeners.push(listener);
    },
    close: () => {
      closing = true;
      return conn.client.close();
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
