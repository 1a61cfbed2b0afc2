/**
 * One declarative shape for every route: method, path, roles, JSON schemas and a handler that
 * returns `{ status, body }`. The same spec registers the Fastify route (validation, serialization,
 * authentication in `onRequest`, before any body is parsed) and feeds the OpenAPI document, so the
 * published contract cannot drift from what the server enforces.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../core/clock.js';
import { BatonError } from '../core/errors.js';
import type { MissionsService } from '../missions/index.js';
import type { OccurrencesService } from '../occurrences/index.js';
import type { StatusSources } from '../providers/index.js';
import type { StoreEngine } from '../store/engine.js';
import type { ContinuityStore } from '../store/observations-service.js';
import {
  authenticate,
  authenticateForCommand,
  authorize,
  type ExecutorPrincipal,
  type Principal,
  type Role,
  type TokenPrincipal,
} from './auth.js';
import type { Metrics } from './metrics.js';
import { problem, type Schema } from './schemas/common.js';

export interface ServerDeps {
  readonly engine: StoreEngine;
  readonly service: OccurrencesService;
  readonly clock: Clock;
  readonly metrics: Metrics;
  /** Baton's trusted status-source layer, for reconcile. */
  readonly sources: StatusSources;
  /** The Mission-aware harness (docs/harness.md); its routes answer 503 without one. */
  readonly harness?: MissionsService;
  /** Continuity records (routes/continuity.ts); absent when the server was given no signing key. */
  readonly continuity?: ContinuityStore;
}

export interface HandlerInput {
  readonly principal: Principal | undefined;
  readonly body: unknown;
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
}

export interface Reply {
  readonly status?: number;
  readonly body: unknown;
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
    schema: {
      ...spec.schema,
      response: { ...spec.schema.response, '4xx': problem, '5xx': problem },
    },
    onRequest:
      roles === 'public'
        ? undefined
        : async (request) => {
            const header = request.headers.authorization;
            const principal =
              spec.authenticatesExecutor === true
                ? await authenticateForCommand(deps.engine, header)
                : await authenticate(deps.engine, header);
            authorize(principal, roles);
            principals.set(request, principal);
          },
    handler: async (request, reply) => {
      const out = await spec.handler({
        principal: principals.get(request),
        body: request.body,
        params: request.params as Record<string, string>,
        query: request.query as Record<string, string>,
      });
      reply.code(out.status ?? 200);
      if (spec.produces !== undefined) reply.type(spec.produces);
      return out.body;
    },
  });
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
