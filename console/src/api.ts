/**
 * The console's only way to the server: the public /v1 API through a client typed from the
 * server's own OpenAPI document (src/generated/api.ts, generated at build time). The session
 * cookie goes along by itself (same origin); every state-changing call adds the session's CSRF
 * token in X-Baton-CSRF (docs/console.md "Sign-in").
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './generated/api.js';

let csrf: string | undefined;

export function setCsrf(token: string | undefined): void {
  csrf = token;
}

let sessionEnded: (() => void) | undefined;

/**
 * Who is told when the server answers 401 while signed in: the session is unknown, expired,
 * signed out elsewhere or its token revoked, so nothing the console shows can be refreshed and
 * it must go back to sign-in (docs/console.md "Sign-in"). Undefined while signed out.
 */
export function onSessionEnded(fn: (() => void) | undefined): void {
  sessionEnded = fn;
}

/** Tells the listener the session ended (a 401, or the live stream's `end` event). */
export function endSession(): void {
  sessionEnded?.();
}

let csrfRefused: (() => void) | undefined;

/**
 * Who is told when the server refuses a call `403 csrf_invalid`: the browser's cookie now names
 * another session than the one this page holds the token of (another tab signed in), so the page
 * must re-read who is signed in (docs/console.md "Sign-in").
 */
export function onCsrfRefused(fn: (() => void) | undefined): void {
  csrfRefused = fn;
}

/** Sign-in and sign-out reach every tab of the console (they share the one cookie). */
const tabs =
  typeof BroadcastChannel === 'undefined' ? undefined : new BroadcastChannel('baton-console-session');

export function tellOtherTabs(what: 'signed-in' | 'signed-out'): void {
  tabs?.postMessage(what);
}

export function onOtherTab(fn: (() => void) | undefined): void {
  if (tabs !== undefined) tabs.onmessage = fn === undefined ? null : () => fn();
}

async function problemCode(response: Response): Promise<string | undefined> {
  try {
    const body = (await response.clone().json()) as unknown;
    return isProblem(body) ? body.code : undefined;
  } catch {
    return undefined;
  }
}

const csrfMiddleware: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET' && request.method !== 'HEAD' && csrf !== undefined) {
      request.headers.set('x-baton-csrf', csrf);
    }
    return request;
  },
  async onResponse({ request, response }) {
    // A refused sign-in (a wrong token) is a 401 too, but no session had started.
    const signIn = request.method === 'POST' && new URL(request.url).pathname === '/v1/session';
    if (response.status === 401 && !signIn) endSession();
    if (response.status === 403 && (await problemCode(response)) === 'csrf_invalid') csrfRefused?.();
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: location.origin, credentials: 'same-origin' });
api.use(csrfMiddleware);

export type Problem = components['schemas']['Problem'];

function isProblem(body: unknown): body is Problem {
  if (typeof body !== 'object' || body === null) return false;
  const b = body as Record<string, unknown>;
  return typeof b['code'] === 'string' && typeof b['detail'] === 'string';
}

/**
 * The server's refusal of a request carrying more than one `baton_session` cookie (src/server/
 * sessions.ts `cookieValue`: fail closed, never one of them chosen). Cookies are not isolated by
 * port, so any page on another port of the same host can plant the second one; only the operator
 * can remove it, so the console says how rather than offering a retry that cannot succeed.
 */
export function twoSessionCookies(problem: Problem | undefined): boolean {
  return problem?.code === 'http_malformed' && problem.details?.['cookie'] === 'baton_session';
}

export class ApiError extends Error {
  readonly problem: Problem | undefined;
  constructor(
    readonly status: number,
    body: unknown,
  ) {
    // A proxy's or gateway's answer (a 502 page) is no problem document: say what is known.
    const problem = isProblem(body) ? body : undefined;
    super(
      problem === undefined
        ? `HTTP ${status}: the server did not answer with an API error (a proxy or gateway failed, or the server is not reachable)`
        : problem.code === 'csrf_invalid'
          ? `${problem.code}: ${problem.detail}. The browser's session changed (signed in or out in another tab); the console has re-read who is signed in: check it and try again.`
          : twoSessionCookies(problem)
            ? `${problem.code}: ${problem.detail}. This browser holds two baton_session cookies for this server (a page on another port of ${location.hostname} can set one, e.g. with path /v1), so the server cannot tell which session is yours and refuses every call. Trying again or signing in again does not help: clear this site's cookies for ${location.hostname} in the browser's settings (site data), then reload this page and sign in.`
            : `${problem.code}: ${problem.detail}`,
    );
    this.problem = problem;
  }
}

/** The data of a 2xx answer, or an ApiError carrying the problem (never a silent empty value). */
export function ok<T>(r: { data?: T; error?: unknown; response: Response }): T {
  if (r.data !== undefined && r.response.ok) return r.data;
  throw new ApiError(r.response.status, r.error);
}

/** A console input (a deep link's query) that cannot be sent: shown like an API refusal. */
export class InputError extends Error {
  readonly code = 'input_invalid';
  constructor(detail: string) {
    super(`input_invalid: ${detail}`);
  }
}

/** `YYYY-MM-DDTHH:MM[:SS]`, no zone: the viewer's local time (a `datetime-local` value). */
const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;
/** RFC 3339 `date-time` (section 5.6): full date, `T`, full time with seconds, `Z` or an offset. */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * A time typed in a filter or carried by a link, as epoch ms; undefined for anything that is not
 * RFC 3339 or a strict local `YYYY-MM-DDTHH:MM[:SS]` naming a real calendar date and clock time.
 * `new Date(text)` is no parser for this: it reads "1", "Dec 7" or "x 2030" as some date and rolls
 * 2026-02-31 over into March, so a mistyped link would silently filter by a time nobody meant
 * (fail closed: refused instead). A local time the viewer's zone skips (a DST gap) is refused too.
 */
export function strictTime(value: string): number | undefined {
  const z = RFC3339.exec(value);
  if (z !== null) {
    const [y, mo, d, h, mi, s] = z.slice(1, 7).map(Number) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    const ms = Math.floor(Number(`0${z[7] ?? ''}`) * 1000);
    const base = Date.UTC(y, mo - 1, d, h, mi, s, ms);
    const t = new Date(base);
    // A leap second (:60) is refused: no JavaScript time names it.
    const real =
      t.getUTCFullYear() === y &&
      t.getUTCMonth() === mo - 1 &&
      t.getUTCDate() === d &&
      t.getUTCHours() === h &&
      t.getUTCMinutes() === mi &&
      t.getUTCSeconds() === s;
    if (!real) return undefined;
    if (z[8] !== undefined) return base;
    const oh = Number(z[10]);
    const om = Number(z[11]);
    if (oh > 23 || om > 59) return undefined;
    return base - (z[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  const l = LOCAL_TIME.exec(value);
  if (l === null) return undefined;
  const [y, mo, d, h, mi] = l.slice(1, 6).map(Number) as [number, number, number, number, number];
  const s = Number(l[6] ?? '0');
  const t = new Date(y, mo - 1, d, h, mi, s);
  const real =
    t.getFullYear() === y &&
    t.getMonth() === mo - 1 &&
    t.getDate() === d &&
    t.getHours() === h &&
    t.getMinutes() === mi &&
    t.getSeconds() === s;
  return real ? t.getTime() : undefined;
}

/**
 * A `datetime-local` value (the viewer's zone) as the UTC instant a deep link holds, so a shared
 * link names the same rows in every zone; a value that is no time stays as typed (refused on read).
 */
export function linkTime(local: string): string {
  const t = strictTime(local);
  return t === undefined ? local : new Date(t).toISOString().replace('.000Z', 'Z');
}

/** A deep link's time as a `datetime-local` value in the viewer's zone (the form shows it so). */
export function localInput(value: string | null): string {
  if (value === null) return '';
  const ms = strictTime(value);
  if (ms === undefined) return value;
  const t = new Date(ms);
  const pad = (n: number): string => String(n).padStart(2, '0');
  const secs = t.getSeconds() === 0 ? '' : `:${pad(t.getSeconds())}`;
  return `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())}T${pad(t.getHours())}:${pad(t.getMinutes())}${secs}`;
}

/**
 * A deep link's time as RFC 3339, or an InputError naming the field (`strictTime`). Links carry
 * the UTC instant (`linkTime`); an older link's zone-less value is still read in the viewer's zone.
 */
export function inputTime(field: string, value: string): string {
  const t = strictTime(value);
  if (t === undefined)
    throw new InputError(
      `${field} is not a date and time: ${value} (RFC 3339 such as 2026-12-01T09:30:00Z, or YYYY-MM-DDTHH:MM[:SS] in your time zone, a real calendar date)`,
    );
  return new Date(t).toISOString();
}
