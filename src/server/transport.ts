/**
 * What every request and answer of the API meets at the HTTP level, whatever its route
 * (docs/api.md, opening paragraphs "Host", "Headers sent once" and "Caching", and "Errors"):
 * - a header that carries a credential, says how to read the body or names the server is sent
 *   once: two Authorization, Content-Type, X-Baton-CSRF or Host headers, or two session cookies,
 *   are `400 http_malformed` before any authentication (RFC 9112 §3.2: a server MUST answer 400
 *   to a request with more than one Host). Node keeps only the first copy of some headers; a proxy
 *   in front may keep the last, so two copies would let the two disagree on who is calling or
 *   which server is asked (the refusal names the header, never its value);
 * - the `Host` (or an absolute-form target's authority, which RFC 9112 §3.2.2 says wins) names
 *   this server (src/core/http-host.ts, the rule the MCP gateway shares): a
 *   loopback name, the address `baton serve --host` bound (unless a wildcard) or a name given to
 *   `--allowed-host`; any other, or none, is `421 host_not_allowed` before any authentication or
 *   route, on every path (/v1, /console/, /metrics, /openapi.json, health): a web page that
 *   rebound its own name to this machine (DNS rebinding) reads and changes nothing;
 * - a JSON body is UTF-8 (RFC 8259 §8.1): a declared charset other than utf-8 is `415`, never a
 *   body read as something the client did not send;
 * - every answer is `Cache-Control: no-store` unless its route says otherwise (the console's
 *   files): /v1 answers carry one-time secrets (tokens, takeover credentials, CSRF tokens) and
 *   authenticated data, and the router reaches /v1 by other spellings of the path too;
 * - every answer is `X-Content-Type-Options: nosniff`, as the console's page and assets are
 *   (src/console/static.ts): a JSON answer echoes client-chosen text (names, keys, reasons), and a
 *   browser that sniffed it as HTML or script would run that text in the server's origin.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BatonError } from '../core/errors.js';
import { hostAllowed } from '../core/http-host.js';
import { cookieValue, CSRF_HEADER, SESSION_COOKIE } from './sessions.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route answers a repeated header itself, in its own error form (the RFC 8935 push
     * receiver: `400 {"err":"invalid_request"}`), from `HandlerInput.repeatedHeader`.
     */
    readonly answersRepeatedHeaders?: boolean;
  }
}

/** The headers that must come once, by lower-case name, with the name a refusal shows. */
const SINGLE: ReadonlyMap<string, string> = new Map([
  ['authorization', 'Authorization'],
  ['content-type', 'Content-Type'],
  [CSRF_HEADER, 'X-Baton-CSRF'],
  ['host', 'Host'],
]);

/** The first header that must come once but came more than once (from Node's `rawHeaders`). */
export function repeatedHeader(rawHeaders: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] ?? '').toLowerCase();
    if (!SINGLE.has(name)) continue;
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

/** `Authorization` for `authorization`: how a refusal names the header. */
export function headerName(lowerCase: string): string {
  return SINGLE.get(lowerCase) ?? lowerCase;
}

/** Throws `http_malformed` for a repeated single header or a second session cookie. */
export function refuseRepeated(request: FastifyRequest): void {
  const header = repeatedHeader(request.raw.rawHeaders);
  if (header !== undefined)
    throw new BatonError('http_malformed', `more than one ${headerName(header)} header`, { header });
  // Throws on a second session cookie (Node joins repeated Cookie headers with "; ").
  cookieValue(request.headers.cookie, SESSION_COOKIE);
}

/**
 * The authority a request names: an absolute-form target's own (`GET http://name/v1/…`), which
 * RFC 9112 §3.2.2 says a server MUST use instead of `Host`; else the `Host` header. A target
 * that is absolute-form but not a parseable http(s) URL names nothing (refused).
 */
function namedAuthority(request: FastifyRequest): string | undefined {
  const target = request.raw.url ?? '';
  if (target.startsWith('/')) return request.headers.host;
  if (!/^https?:\/\//i.test(target) || !URL.canParse(target)) return undefined;
  return new URL(target).host;
}

/**
 * Throws `host_not_allowed` unless the authority the request names (its one `Host`, or its
 * absolute-form target's) is this server's (`hosts`).
 */
export function refuseForeignHost(request: FastifyRequest, hosts: ReadonlySet<string>): void {
  if (!hostAllowed(namedAuthority(request), hosts))
    throw new BatonError(
      'host_not_allowed',
      'the Host header (or the request target) does not name this server (baton serve --allowed-host adds a name)',
    );
}

/**
 * The hooks, added to the root before any route so every route meets them (the routes in their
 * own parser scopes too): the repeated-header refusal first of all `onRequest` work, then the
 * Host check, and `no-store` and `nosniff` on the way out, problems included. `hosts`: the host
 * names this server answers (`allowedHostNames`).
 */
export function transportRules(app: FastifyInstance, hosts: ReadonlySet<string>): void {
  app.addHook('onRequest', (request, _reply, done) => {
    try {
      const ownForm = request.routeOptions.config.answersRepeatedHeaders === true;
      if (!ownForm) refuseRepeated(request);
      // The SET receiver answers a repeated Host itself (400 in its own form), as any other.
      if (!ownForm || repeatedHeader(request.raw.rawHeaders) !== 'host') refuseForeignHost(request, hosts);
      done();
    } catch (error) {
      done(error as Error);
    }
  });
  // Every answer, not only those whose raw path reads `/v1…`: the router also matches a
  // percent-encoded path (`/%761/tokens`) or an absolute-form target, and such an answer may carry
  // a new token or a session cookie. Only a route that says its own caching (the console's files)
  // keeps it.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    reply.header('x-content-type-options', 'nosniff');
    done(null, payload);
  });
}

/**
 * Why a JSON body's declared charset is refused, or undefined when it is UTF-8 or not declared.
 * Every `charset` parameter must say utf-8 (any case, quoted or not); anything else — another
 * charset, a malformed quote — is refused rather than guessed.
 */
export function charsetRefusal(contentType: string | undefined): BatonError | undefined {
  for (const param of (contentType ?? '').split(';').slice(1)) {
    const eq = param.indexOf('=');
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    const value = param.slice(eq + 1).trim();
    const unquoted = /^"[^"]*"$/.test(value) ? value.slice(1, -1) : value;
    if (unquoted.toLowerCase() !== 'utf-8')
      return new BatonError(
        'media_type_unsupported',
        'a JSON body is UTF-8: the only charset taken is utf-8',
      );
  }
  return undefined;
}
