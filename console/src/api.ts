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

const csrfMiddleware: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET' && request.method !== 'HEAD' && csrf !== undefined) {
      request.headers.set('x-baton-csrf', csrf);
    }
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: location.origin, credentials: 'same-origin' });
api.use(csrfMiddleware);

export type Problem = components['schemas']['Problem'];

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem | undefined,
  ) {
    super(problem === undefined ? `HTTP ${status}` : `${problem.code}: ${problem.detail}`);
  }
}

/** The data of a 2xx answer, or an ApiError carrying the problem (never a silent empty value). */
export function ok<T>(r: { data?: T; error?: unknown; response: Response }): T {
  if (r.data !== undefined && r.response.ok) return r.data;
  throw new ApiError(r.response.status, r.error as Problem | undefined);
}
