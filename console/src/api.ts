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

/**
 * A `datetime-local` value (the viewer's zone) as the UTC instant a deep link holds, so a shared
 * link names the same rows in every zone; a value that is no time stays as typed (refused on read).
 */
export function linkTime(local: string): string {
  const t = new Date(local);
  return Number.isNaN(t.getTime()) ? local : t.toISOString().replace('.000Z', 'Z');
}

/** A deep link's time as a `datetime-local` value in the viewer's zone (the form shows it so). */
export function localInput(value: string | null): string {
  if (value === null) return '';
  const t = new Date(value);
  if (Number.isNaN(t.getTime())) return value;
  const pad = (n: number): string => String(n).padStart(2, '0');
  const secs = t.getSeconds() === 0 ? '' : `:${pad(t.getSeconds())}`;
  return `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())}T${pad(t.getHours())}:${pad(t.getMinutes())}${secs}`;
}

/**
 * A deep link's time as RFC 3339, or an InputError naming the field. Links carry the UTC instant
 * (`linkTime`); an older link's zone-less value is still read in the viewer's zone.
 */
export function inputTime(field: string, value: string): string {
  const t = new Date(value);
  if (Number.isNaN(t.getTime())) throw new InputError(`${field} is not a date and time: ${value}`);
  return t.toISOString();
}
