/**
 * One declarative shape for every route: method, path, roles, JSON schemas and a handler that
 * returns `{ status, body }`. The same spec registers the Fastify route (validation, serialization,
 * authentication in `onRequest`, before any body is parsed) and feeds the OpenAPI document, so the
 * published contract cannot drift from what the server enforces.
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../core/clock.js';
import type { CursorCodec } from '../core/cursor.js';
import { BatonError } from '../core/errors.js';
import type { MissionsService } from '../missions/index.js';
import type { OccurrencesService } from '../occurrences/index.js';
import type { KeyResolver, StatusSources } from '../providers/index.js';
import type { StoreEngine } from '../store/engine.js';
import type { ContinuityStore } from '../store/observations-service.js';
import {
  authenticate,
  authenticateCookie,
  authenticateForCommand,
  authorize,
  type ExecutorPrincipal,
  type Principal,
  type Role,
  type TokenPrincipal,
} from './auth.js';
import type { Metrics } from './metrics.js';
import { cookieValue, CSRF_HEADER, SESSION_COOKIE } from './sessions.js';
import type { MissionConsumer } from './mission-consumer.js';
import { problem, type Schema } from './schemas/common.js';
import { emptyBody } from './schemas/inputs.js';
import { repeatedHeader } from './transport.js';

export interface ServerDeps {
  readonly engine: StoreEngine;
  readonly service: OccurrencesService;
  readonly clock: Clock;
  /** Issues and reads every paged route's cursors: the service's codec (src/core/cursor.ts). */
  readonly cursors: CursorCodec;
  readonly metrics: Metrics;
  /** Baton's trusted status-source layer, for reconcile. */
  readonly sources: StatusSources;
  /** The secrets this server holds (the same the sources read): profile registration checks origins. */
  readonly keys: KeyResolver;
  /** The Mission-aware harness (docs/harness.md); its routes answer 503 without one. */
  readonly harness?: MissionsService;
  /** The Mission consumer (routes/missions.ts); present with the harness. */
  readonly missions?: MissionConsumer;
  /** Continuity records (routes/continuity.ts); absent when the server was given no signing key. */
  readonly continuity?: ContinuityStore;
  /**
   * The console's session cookie is `Secure` on every answer, not only over https: for a server
   * behind a TLS-terminating proxy, where every request reaches it as plain http.
   */
  readonly secureCookies?: boolean;
}

export interface HandlerInput {
  readonly principal: Principal | undefined;
  readonly body: unknown;
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  /** Whether cookies are `Secure`: the request came over https, or `secureCookies` says so. */
  readonly secure: boolean;
  /** Aborted when the client goes away; only for `streams` routes (server-sent events). */
  readonly closed?: AbortSignal;
  /**
   * Authenticates and authorizes the request's credential again, as `onRequest` did (a revoked
   * token or an ended session is refused): only for `streams` routes that are not `public`, which
   * call it while their stream lasts.
   */
  readonly reauthenticate?: () => Promise<void>;
  /** The request headers (routes that authenticate themselves: the RFC 8935 push receiver). */
  readonly headers?: Readonly<Record<string, string | string[] | undefined>>;
  /** The request's logger (Fastify's): for a failure the answer names only by its code. */
  readonly log: FastifyBaseLogger;
  /**
   * A header that must come once but came more than once (src/server/transport.ts), lower-case:
   * only for the `ssf-stream` route, which answers it in RFC 8935's form. Every other route was
   * refused `400 http_malformed` before it ran.
   */
  readonly repeatedHeader?: string;
}

export interface Reply {
  readonly status?: number;
  readonly body: unknown;
  /** Extra response headers (Set-Cookie on sign-in and sign-out). */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface RouteSchema {
  readonly body?: Schema;
  readonly params?: Schema;
  readonly querystring?: Schema;
  readonly response: Readonly<Record<number, Schema>>;
}

export interface RouteSpec {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly url: string;
  readonly operationId: string;
  readonly summary: string;
  readonly tag: string;
  /** Who may call it; `public` routes take no token (health, metrics, the OpenAPI document). */
  readonly roles: readonly Role[] | 'public';
  readonly schema: RouteSchema;
  /** The success content type when it is not JSON. */
  readonly produces?: string;
  /** The body is a long-lived stream (server-sent events): the handler gets `closed`. */
  readonly streams?: boolean;
  /** The request content type when it is not JSON (its parser is in app.ts). */
  readonly consumes?: string;
  /**
   * Media types the JSON body is also accepted in, read by the same strict JSON parser (app.ts
   * `strictJsonBodies`) and listed beside `application/json` in the OpenAPI request body.
   */
  readonly alsoConsumes?: readonly string[];
  /**
   * The handler reads the body's bytes itself: it gets them as a Buffer (empty when there are
   * none), size-limited and charset-checked by the same parser (app.ts `strictJsonBodies`) but not
   * parsed, so a byte-level refusal is the route's own (`POST /v1/continuity/records`: rule `bytes`
   * of `observation_record_invalid`, counted as a submission refused). `schema.body` then only
   * documents the body (OpenAPI); Fastify validates none.
   */
  readonly readsBodyBytes?: true;
  /**
   * `ssf-stream`: a `public` route for Baton's principals that checks an SSF stream bearer itself
   * (RFC 8935 push); documented with bearer security all the same.
   */
  readonly auth?: 'ssf-stream';
  readonly handler: (input: HandlerInput) => Promise<Reply>;
  /**
   * The handler's command authenticates an executor credential inside its own transaction
   * (issue 16 §1): onRequest then reads nothing for one (principal kind `executor-bearer`).
   */
  readonly authenticatesExecutor?: true;
}

const principals = new WeakMap<FastifyRequest, Principal>();

export function registerRoute(app: FastifyInstance, deps: ServerDeps, spec: RouteSpec): void {
  const roles = spec.roles;
  app.route({
    method: spec.method,
    url: spec.url,
    config: { answersRepeatedHeaders: spec.auth === 'ssf-stream' },
    schema: {
      ...spec.schema,
      ...(spec.method !== 'GET' && spec.readsBodyBytes !== true && { body: spec.schema.body ?? emptyBody }),
      response: { ...spec.schema.response, '4xx': problem, '5xx': problem },
    },
    preValidation: spec.method === 'GET' ? refuseBody : undefined,
    onRequest:
      roles === 'public'
        ? undefined
        : async (request) => {
            const principal =
              spec.authenticatesExecutor === true && request.headers.authorization !== undefined
                ? await authenticateForCommand(deps.engine, request.headers.authorization)
                : await principalOf(deps, request);
            authorize(principal, roles);
            principals.set(request, principal);
          },
    handler: async (request, reply) => {
      const out = await spec.handler({
        principal: principals.get(request),
        body: spec.readsBodyBytes === true && !Buffer.isBuffer(request.body) ? Buffer.alloc(0) : request.body,
        params: request.params as Record<string, string>,
        query: request.query as Record<string, string>,
        secure: deps.secureCookies === true || request.protocol === 'https',
        ...(spec.streams === true && { closed: closedSignal(request) }),
        ...(spec.streams === true &&
          roles !== 'public' && {
            reauthenticate: async () => authorize(await principalOf(deps, request), roles),
          }),
        headers: request.headers,
        log: request.log,
        ...(spec.auth === 'ssf-stream' && { repeatedHeader: repeatedHeader(request.raw.rawHeaders) }),
      });
      reply.code(out.status ?? 200);
      if (out.headers !== undefined) reply.headers(out.headers);
      if (spec.produces !== undefined) reply.type(spec.produces);
      return out.body;
    },
  });
}

/**
 * A GET takes no body, and one sent is refused like an unknown member, never ignored (docs/api.md,
 * opening paragraphs): Fastify does not read a GET's body, so its framing headers are what tell.
 * (Every other route without a body schema validates against `emptyBody`: none, `{}` or `null`.)
 */
function refuseBody(request: FastifyRequest): Promise<void> {
  const length = request.headers['content-length'];
  const sent = request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  if (!sent) return Promise.resolve();
  return Promise.reject(
    new BatonError('input_invalid', 'body: a GET request takes no body', { in: 'body', path: 'body' }),
  );
}

/** The bearer token when there is an Authorization header, else the console session cookie. */
export async function principalOf(deps: ServerDeps, request: FastifyRequest): Promise<Principal> {
  const header = request.headers.authorization;
  const cookie = cookieValue(request.headers.cookie, SESSION_COOKIE);
  if (header !== undefined || cookie === undefined) return authenticate(deps.engine, header);
  const csrf = request.headers[CSRF_HEADER];
  return authenticateCookie(deps.engine, cookie, {
    method: request.method,
    csrf: typeof csrf === 'string' ? csrf : undefined,
    now: deps.clock.wallMs(),
  });
}

function closedSignal(request: FastifyRequest): AbortSignal {
  const controller = new AbortController();
  request.raw.socket.once('close', () => controller.abort());
  return controller.signal;
}

/** Run one service command, recording its duration (one command = one transaction). */
export async function timed<T>(deps: ServerDeps, operation: string, fn: () => Promise<T>): Promise<T> {
  // Real elapsed time, not the injected clock: this is an observation, never a decision.
  const started = performance.now();
  try {
    return await fn();
  } finally {
    deps.metrics.observeTransaction(operation, (performance.now() - started) / 1000);
  }
}

export function executorOf(input: HandlerInput): ExecutorPrincipal {
  if (input.principal?.kind !== 'executor')
    throw new BatonError('forbidden', 'an executor credential is required');
  return input.principal;
}

/** The executor credential of a route whose command authenticates it (`authenticatesExecutor`). */
export function executorCredential(input: HandlerInput): string {
  const p = input.principal;
  if (p?.kind !== 'executor' && p?.kind !== 'executor-bearer')
    throw new BatonError('forbidden', 'an executor credential is required');
  return p.credential;
}

export function tokenOf(input: HandlerInput): TokenPrincipal {
  if (input.principal?.kind !== 'token')
    throw new BatonError('forbidden', 'an operator or admin token is required');
  return input.principal;
}

export function param(input: HandlerInput, name: string): string {
  const value = input.params[name];
  if (value === undefined) throw new BatonError('internal', `route parameter ${name} is missing`);
  return value;
}

/** The body as an object (schemas already refused anything else); `{}` for an absent body. */
export function bodyObject(input: HandlerInput): Record<string, unknown> {
  const b = input.body;
  return typeof b === 'object' && b !== null && !Array.isArray(b) ? (b as Record<string, unknown>) : {};
}
