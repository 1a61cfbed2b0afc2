/**
 * The gateway's downstream transports: stdio (one session: the process is the session) and
 * Streamable HTTP on 127.0.0.1 by default (one session per `Mcp-Session-Id`, each its own
 * takeover). HTTP requests are checked (method, the clients' bearer, Host, Origin, Content-Type, Accept:
 * http-guard.ts)
 * before anything else, and bodies parsed strictly (src/core/json.ts: duplicate members refused).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { BatonError, errorCodeOf, isBatonError } from '../core/errors.js';
import { parseStrictJson, type JsonValue } from '../core/json.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { httpAllow, isLoopbackAddress, refuseHttp, type HttpAllowOptions } from './http-guard.js';

/**
 * What the transports need of a gateway: a new MCP session's Server (for `baton mcp`, each a
 * takeover of the lineage: `Gateway.session`). Narrow so the MCP bench's ceiling gateway is served
 * by the same transport code, and its floor holds the same per-request work (strict JSON parsing).
 */
export interface SessionSource {
  /**
   * A takeover of the lineage (its executor's generation) and a Server for one session. A source
   * without executors (a bench's ceiling gateway) has its sessions ordered by arrival instead.
   */
  session(): Promise<{ readonly server: Server; readonly executor?: { readonly generation: number } }>;
}

/** An HTTP session and the generation its takeover produced. */
interface HttpSession {
  readonly transport: StreamableHTTPServerTransport;
  readonly generation: number;
}

/**
 * Closes and forgets every session below the newest generation registered (or `floor`), except
 * `keep`: the takeover retired them (AOC-REQ-006) — left open, each would keep serving
 * pass-through tools. Never a session of the newest generation, whatever order concurrent
 * `initialize` requests finish in.
 */
function retireOlder(
  sessions: Map<string, HttpSession>,
  floor: number,
  log?: (line: string) => void,
  keep?: StreamableHTTPServerTransport,
): void {
  const newest = Math.max(floor, ...[...sessions.values()].map((s) => s.generation));
  for (const [sid, old] of [...sessions]) {
    if (old.generation >= newest || old.transport === keep) continue;
    sessions.delete(sid);
    log?.(`mcp: session ${sid} closed: a new session took the lineage over`);
    void old.transport.close().catch(() => undefined);
  }
}

/** Serve one session on stdin/stdout until the agent closes stdin. */
export async function serveStdio(gateway: SessionSource): Promise<{ closed: Promise<void> }> {
  const session = await gateway.session();
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await session.server.connect(transport);
  return { closed };
}

export interface HttpGateway {
  readonly url: string;
  close(): Promise<void>;
}

const MAX_BODY = 4 * 1024 * 1024;
/** How much of an oversized body is read (and dropped) so its 413 reaches the client. */
const MAX_DRAIN = 64 * 1024 * 1024;

/**
 * The request body, or `too_large` past MAX_BODY. An oversized body is drained (read and dropped,
 * up to MAX_DRAIN; the connection is then cut) rather than cut at once: a client still sending
 * would see a reset instead of the 413 that names the limit.
 */
function readBody(req: IncomingMessage): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
      else if (size > MAX_DRAIN) req.destroy();
    });
    req.on('end', () => resolve(size > MAX_BODY ? 'too_large' : Buffer.concat(chunks)));
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) resolve('too_large');
    });
  });
}

function jsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  res.writeHead(status, { ...headers, 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/**
 * A new session for an `initialize` that passed `refuseHttp`: the takeover (AOC-REQ-006), then the
 * SDK's transport. Should the SDK still refuse the request (no session id issued), the session's
 * server and transport are closed, never left behind. Two `initialize` requests close together
 * may finish in either order: only sessions of a LOWER generation are closed, so an older
 * takeover finishing last closes itself, never the live session.
 */
async function openHttpSession(
  gateway: SessionSource,
  sessions: Map<string, HttpSession>,
  exchange: { req: IncomingMessage; res: ServerResponse; body: JsonValue | undefined; arrival: number },
  log?: (line: string) => void,
): Promise<void> {
  const session = await gateway.session();
  const generation = session.executor?.generation ?? exchange.arrival;
  retireOlder(sessions, generation, log);
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (sid) => {
      sessions.set(sid, { transport, generation });
      // Its own initialize is still being answered: this session, if retired, is closed after.
      retireOlder(sessions, generation, log, transport);
    },
  });
  transport.onclose = () => {
    if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
  };
  await session.server.connect(transport);
  await transport.handleRequest(exchange.req, exchange.res, exchange.body);
  if (transport.sessionId === undefined) await session.server.close();
  else retireOlder(sessions, generation, log);
}

export async function serveHttp(
  gateway: SessionSource,
  port: number,
  host: string,
  log?: (line: string) => void,
  options: HttpAllowOptions = {},
): Promise<HttpGateway> {
  if (options.bearer === undefined && !isLoopbackAddress(host))
    throw new BatonError(
      'usage',
      `${host} is not a loopback address: serving it needs a clients' bearer (anyone who reaches it could open a session)`,
    );
  const sessions = new Map<string, HttpSession>();
  let arrivals = 0;
  const allow = httpAllow(host, options);
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp')
      return jsonRpcError(res, 404, -32000, 'not found: use /mcp');
    // Before the body is read or a session opened: a refused request changes nothing.
    const refusal = refuseHttp(req, allow);
    if (refusal !== undefined)
      return jsonRpcError(res, refusal.status, -32000, refusal.message, refusal.headers);
    const id = req.headers['mcp-session-id'];
    let body: JsonValue | undefined;
    if (req.method === 'POST') {
      const bytes = await readBody(req);
      if (bytes === 'too_large') {
        const limit = `request body over ${MAX_BODY} bytes (4 MiB), the gateway's limit`;
        return jsonRpcError(res, 413, -32600, limit, { connection: 'close' });
      }
      try {
        body = parseStrictJson(bytes);
      } catch (error) {
        return jsonRpcError(
          res,
          400,
          -32700,
          isBatonError(error) ? `parse error: ${error.code}` : 'parse error',
        );
      }
    }
    const existing = typeof id === 'string' ? sessions.get(id) : undefined;
    if (existing !== undefined) return existing.transport.handleRequest(req, res, body);
    // An unknown (or retired) session is 404, as the Streamable HTTP transport specifies: the
    // client starts a new session with a fresh initialize.
    if (id !== undefined) return jsonRpcError(res, 404, -32001, 'session not found: initialize again');
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return jsonRpcError(res, 400, -32000, 'no valid session: initialize first');
    }
    arrivals += 1;
    await openHttpSession(gateway, sessions, { req, res, body, arrival: arrivals }, log);
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log?.(`mcp: http request failed: ${errorCodeOf(error)}`);
      if (!res.headersSent)
        jsonRpcError(res, 500, -32603, isBatonError(error) ? `baton: ${error.code}` : 'internal error');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${bound}/mcp`,
    close: async () => {
      await Promise.allSettled([...sessions.values()].map((s) => s.transport.close()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}
