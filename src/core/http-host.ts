/**
 * Which `Host` a local HTTP server answers: the DNS-rebinding rule the MCP gateway's Streamable
 * HTTP downstream (src/mcp/http-guard.ts, docs/mcp.md "Sessions and generations") and the API
 * server (src/server/transport.ts, docs/api.md "Host") share.
 *
 * A web page the local user visits can point its own name at 127.0.0.1 once it has loaded (DNS
 * rebinding): the browser then sends the page's requests to the local server as same-origin ones,
 * with the page's name in `Host`. Only the name tells such a request from the user's own, so a
 * server answers only the names it is known by: the loopback names, the address it was bound to
 * (unless a wildcard, which names no host) and what its operator adds. The port is not compared:
 * a browser sends the port of the URL it fetched, which is the port the request reached.
 */
import { isIP } from 'node:net';

/** The names every local server answers to (IPv6 in brackets, as in a URL and a `Host`). */
export const LOOPBACK_HOST_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

const WILDCARD = new Set(['0.0.0.0', '::', '[::]', '']);

/** Whether binding `host` keeps the server to this machine (127.0.0.0/8, ::1, localhost). */
export function isLoopbackAddress(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/**
 * The host names (lower case, no port) a server bound to `bound` answers: the loopback names, the
 * bound address itself unless it is a wildcard (`0.0.0.0`, `::`), and `extra` (an operator's
 * `--allowed-host`).
 */
export function allowedHostNames(bound: string, extra: readonly string[] = []): ReadonlySet<string> {
  const own = bound.includes(':') && !bound.startsWith('[') ? `[${bound}]` : bound;
  const hosts = new Set([...LOOPBACK_HOST_NAMES, ...extra.map((h) => h.toLowerCase())]);
  if (!WILDCARD.has(bound)) hosts.add(own.toLowerCase());
  return hosts;
}

/**
 * The host name of a `Host` header (RFC 9110 §7.2: `uri-host [ ":" port ]`), lower case, or
 * undefined when the header is absent or is not that form (user info, a path, two ports): such a
 * header is refused, never read some lenient way.
 */
export function hostNameOf(host: string | undefined): string | undefined {
  if (host === undefined) return undefined;
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~!$&'()*+,;=%-]+)(?::[0-9]{0,5})?$/.exec(host);
  return m?.[1]?.toLowerCase();
}

/** Whether a request's `Host` names one of `names` (from `allowedHostNames`). */
export function hostAllowed(host: string | undefined, names: ReadonlySet<string>): boolean {
  const name = hostNameOf(host);
  return name !== undefined && names.has(name);
}
