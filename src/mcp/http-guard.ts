/**
 * What the Streamable HTTP downstream refuses before it reads a body or opens a session
 * (docs/mcp.md "Sessions and generations"). A session is a takeover that retires the live
 * generation (AOC-REQ-006), so nothing short of a well-formed MCP request from an allowed
 * place may reach it: a CORS "simple" request (text/plain, no preflight) any web page can send,
 * or a DNS-rebound page on another name, must change no state. The MCP transport spec: servers
 * MUST validate `Origin`; the SDK answers 406/415 only after the gateway opened the session. With
 * a clients' bearer configured, a request without it is refused 401 before anything else.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { allowedHostNames, hostAllowed, isLoopbackAddress } from '../core/http-host.js';

export { isLoopbackAddress };

export interface HttpAllow {
  /** Host names (no port) a request's `Host` may name; IPv6 in brackets, as in a URL. */
  readonly hosts: ReadonlySet<string>;
  /** Exact origins a browser's `Origin` may carry besides those on an allowed host name. */
  readonly origins: ReadonlySet<string>;
  /** SHA-256 of the clients' bearer every request must present; undefined: none asked. */
  readonly bearer?: Buffer;
}

export interface HttpRefusal {
  readonly status: number;
  readonly message: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface HttpAllowOptions {
  readonly allowedHosts?: readonly string[];
  readonly allowedOrigins?: readonly string[];
  /**
   * The bearer every request must carry (`Authorization: Bearer …`), checked before anything else
   * is read: without it, any process that reaches the port could open a session (a takeover that
   * retires the live agent's generation) and make consequential calls under the gateway's Baton
   * credential. Required to bind a non-loopback address (`isLoopbackAddress`).
   */
  readonly bearer?: string;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

const METHODS = ['GET', 'POST', 'DELETE'];

/**
 * Loopback names, the address the server is bound to (unless a wildcard), and what the caller
 * adds: the rule the API server shares (src/core/http-host.ts).
 */
export function httpAllow(bound: string, options: HttpAllowOptions = {}): HttpAllow {
  const hosts = allowedHostNames(bound, options.allowedHosts ?? []);
  const origins = new Set(options.allowedOrigins ?? []);
  return options.bearer === undefined
    ? { hosts, origins }
    : { hosts, origins, bearer: sha256(options.bearer) };
}

/** Digests compared in constant time: neither the bearer's length nor a prefix leaks by timing. */
function checkBearer(req: IncomingMessage, allow: HttpAllow): HttpRefusal | undefined {
  if (allow.bearer === undefined) return undefined;
  const m = /^Bearer[ ]+([^\s]+)[ ]*$/i.exec(req.headers.authorization ?? '');
  if (m !== null && timingSafeEqual(sha256(m[1] ?? ''), allow.bearer)) return undefined;
  return {
    status: 401,
    message: "Unauthorized: this gateway needs its clients' bearer (Authorization: Bearer …)",
    headers: { 'www-authenticate': 'Bearer realm="baton-mcp"' },
  };
}

function checkHost(req: IncomingMessage, allow: HttpAllow): HttpRefusal | undefined {
  const host = req.headers.host;
  if (hostAllowed(host, allow.hosts)) return undefined;
  return { status: 403, message: `Host not allowed: ${host ?? '(none)'}` };
}

/** No `Origin`: not a browser. Present: its host must be allowed, or the origin listed exactly. */
function checkOrigin(req: IncomingMessage, allow: HttpAllow): HttpRefusal | undefined {
  const origin = req.headers.origin;
  if (origin === undefined || allow.origins.has(origin)) return undefined;
  let name: string | undefined;
  try {
    name = new URL(origin).hostname;
  } catch {
    name = undefined; // `null` and other opaque origins
  }
  if (name !== undefined && allow.hosts.has(name)) return undefined;
  return { status: 403, message: `Origin not allowed: ${origin}` };
}

function isJsonMediaType(value: string | undefined): boolean {
  const type = value?.split(';', 1)[0]?.trim().toLowerCase();
  return type === 'application/json';
}

/** A POST is one JSON-RPC message or batch in JSON, from a client that reads both answer forms. */
function checkPost(req: IncomingMessage): HttpRefusal | undefined {
  if (!isJsonMediaType(req.headers['content-type']))
    return { status: 415, message: 'Unsupported Media Type: Content-Type must be application/json' };
  const accept = req.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream'))
    return {
      status: 406,
      message: 'Not Acceptable: Accept must list application/json and text/event-stream',
    };
  return undefined;
}

/** The first reason to refuse `req`, or undefined. Reads headers only: nothing has changed yet. */
export function refuseHttp(req: IncomingMessage, allow: HttpAllow): HttpRefusal | undefined {
  const method = req.method ?? '';
  if (!METHODS.includes(method))
    return { status: 405, message: `Method not allowed: ${method}`, headers: { allow: METHODS.join(', ') } };
  const placed = checkBearer(req, allow) ?? checkHost(req, allow) ?? checkOrigin(req, allow);
  if (placed !== undefined) return placed;
  return method === 'POST' ? checkPost(req) : undefined;
}
