/**
 * Operational endpoints, open without a token: liveness, readiness (the store answers and carries
 * every migration this build knows), Prometheus metrics and the OpenAPI document. They disclose
 * counts and the API's shape, never records; `baton serve` binds to 127.0.0.1 by default.
 */
import { BatonError } from '../../core/errors.js';
import { migrations } from '../../store/migrations/index.js';
import { appliedMigrations, supersededError, type AppliedMigrations } from '../../store/schema-watch.js';
import { readOpenGauges, type OpenGauges } from '../../store/occurrences-gauges.js';
import { METRICS_CONTENT_TYPE } from '../metrics.js';
import type { RouteSpec, ServerDeps } from '../route.js';
import { anyObject, count, object, type Schema } from '../schemas/common.js';

const status: Schema = { type: 'string', enum: ['ok', 'ready'] };

async function schemaVersion(deps: ServerDeps): Promise<number> {
  let found: AppliedMigrations;
  try {
    found = await deps.engine.read(appliedMigrations);
  } catch (cause) {
    // The engine's own refusal (a newer Baton migrated the store: schema-watch.ts) says why.
    if (cause instanceof BatonError && cause.code === 'unavailable') throw cause;
    throw new BatonError('unavailable', 'the store cannot be read', {}, { cause });
  }
  // A newer Baton migrated the shared database (a rolling upgrade): this server's build cannot
  // read that schema safely, so it reports not ready and a load balancer drains it.
  if (found.newer.length > 0) throw supersededError(found.newer);
  const missing = migrations.filter((m) => !found.applied.includes(m.id)).map((m) => m.id);
  if (missing.length > 0) throw new BatonError('unavailable', 'the store is not fully migrated', { missing });
  return Math.max(0, ...found.applied);
}

/** Cheap reads only (no table count per scrape; store/occurrences-gauges.ts). */
async function gaugesOrUndefined(deps: ServerDeps): Promise<OpenGauges | undefined> {
  try {
    return await readOpenGauges(deps.engine);
  } catch {
    return undefined; // rendered as baton_store_up 0: a scrape must not fail with the store
  }
}

export function opsRoutes(deps: ServerDeps, openapi: () => unknown): RouteSpec[] {
  return [
    {
      method: 'GET',
      url: '/healthz',
      operationId: 'healthz',
      summary: 'The process is up',
      tag: 'ops',
      roles: 'public',
      schema: { response: { 200: object({ status }) } },
      handler: () => Promise.resolve({ body: { status: 'ok' } }),
    },
    {
      method: 'GET',
      url: '/readyz',
      operationId: 'readyz',
      summary: 'The store is reachable and fully migrated',
      tag: 'ops',
      roles: 'public',
      schema: { response: { 200: object({ status, schemaVersion: count }) } },
      handler: async () => ({ body: { status: 'ready', schemaVersion: await schemaVersion(deps) } }),
    },
    {
      method: 'GET',
      url: '/metrics',
      operationId: 'metrics',
      summary: 'Prometheus text exposition',
      tag: 'ops',
      roles: 'public',
      produces: METRICS_CONTENT_TYPE,
      schema: { response: { 200: { type: 'string' } } },
      handler: async () => ({
        body: await deps.metrics.render(await gaugesOrUndefined(deps), deps.engine.commitStats?.()),
      }),
    },
    {
      method: 'GET',
      url: '/openapi.json',
      operationId: 'openapi',
      summary: 'This API as an OpenAPI 3.1 document',
      tag: 'ops',
      roles: 'public',
      schema: { response: { 200: anyObject } },
      handler: () => Promise.resolve({ body: openapi() }),
    },
  ];
}
