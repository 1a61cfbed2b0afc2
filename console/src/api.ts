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

const csrfMiddleware: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET' && request.method !== 'HEAD' && csrf !== undefined) {
      request.headers.set('x-baton-csrf', csrf);
    }
    return request;
  },
  onResponse({ request, response }) {
    // A refused sign-in (a wrong token) is a 401 too, but no session had started.
    const signIn = request.method === 'POST' && new URL(request.url).pathname === '/v1/session';
    if (response.status === 401 && !signIn) endSession();
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

/** A `datetime-local` value from the URL as RFC 3339, or an InputError naming the field. */
export function inputTime(field: string, value: string): string {
  const t = new Date(value);
  if (Number.isNaN(t.getTime())) throw new InputError(`${field} is not a date and time: ${value}`);
  return t.toISOString();
}
