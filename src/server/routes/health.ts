/**
 * What the console's overview shows beside the store's counts (issue 14 §3): the background
 * reconciler's and the webhook receiver's health, and refusals over time — all three kept by this
 * server process since it started (health.ts, refusal-history.ts), so every answer carries
 * `since`, and `now` (the server's clock) to measure ages against. The oldest unresolved
 * occurrence comes from the store (one indexed MIN, as the metrics gauge reads it).
 */
import type { ReconcileMetrics } from '../reconcile-metrics.js';
import type { RouteSpec, ServerDeps } from '../route.js';
import { timed } from '../route.js';
import { count, epochMs, nullable, object, type Schema } from '../schemas/common.js';
import { ReconciliationStore } from '../../store/reconciliation.js';

const counts: Schema = { type: 'object', additionalProperties: count };

const reconcilerHealth = object({
  since: epochMs,
  now: epochMs,
  background: nullable(object({ everyMs: count, concurrency: count })),
  ticks: count,
  lastTickAt: nullable(epochMs),
  lastTickAsked: count,
  lookups: count,
  lastLookupAt: nullable(epochMs),
  lookupsBySourceKind: counts,
  answersByVerdict: counts,
  oldestUnresolvedEnteredAt: nullable(epochMs),
});

const webhookHealth = object({
  since: epochMs,
  now: epochMs,
  deliveries: count,
  deliveriesByResult: counts,
  lastDelivery: nullable(object({ at: epochMs, result: { type: 'string' } })),
  lastRecordedAt: nullable(epochMs),
});

const refusalHistogram = object({
  since: epochMs,
  now: epochMs,
  bucketMs: count,
  buckets: { type: 'array', items: object({ from: epochMs, total: count, byCode: counts }) },
});

export function healthRoutes(deps: ServerDeps, reconcile: ReconcileMetrics): RouteSpec[] {
  const store = new ReconciliationStore(deps.engine);
  return [
    {
      method: 'GET',
      url: '/v1/health/reconciler',
      operationId: 'reconcilerHealth',
      summary:
        'This server’s background reconciler since it started: ticks, status lookups, answers by verdict; the oldest unresolved occurrence',
      tag: 'ops',
      roles: ['operator'],
      schema: { response: { 200: reconcilerHealth } },
      handler: async () => {
        const oldest = await timed(deps, 'oldest_unresolved', () => store.oldestUnresolvedEnteredAt());
        return {
          body: {
            ...reconcile.health.reconciler(),
            now: deps.clock.wallMs(),
            oldestUnresolvedEnteredAt: oldest ?? null,
          },
        };
      },
    },
    {
      method: 'GET',
      url: '/v1/health/webhooks',
      operationId: 'webhookHealth',
      summary: 'This server’s webhook receiver since it started: deliveries by result, the last one',
      tag: 'ops',
      roles: ['operator'],
      schema: { response: { 200: webhookHealth } },
      handler: () => Promise.resolve({ body: { ...reconcile.health.webhooks(), now: deps.clock.wallMs() } }),
    },
    {
      method: 'GET',
      url: '/v1/refusals/histogram',
      operationId: 'refusalHistogram',
      summary:
        'Refusals (problem answers) by code in 5-minute buckets over the last 24 hours, kept in memory since this server started',
      tag: 'ops',
      roles: ['operator'],
      schema: { response: { 200: refusalHistogram } },
      handler: () => {
        // The history is bucketed on the process's wall clock (metrics.ts records with Date.now).
        const now = Date.now();
        return Promise.resolve({ body: { ...deps.metrics.refusalHistory.view(now), now } });
      },
    },
  ];
}
