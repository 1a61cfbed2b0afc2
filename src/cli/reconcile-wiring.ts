/**
 * Store-side wiring for the reconciler: the unresolved occurrences of EVERY lineage (`baton
 * reconcile`), and serve's background reconciler (`--reconcile-every`, `--reconcile-concurrency`,
 * docs/operations.md). The occurrences service only lists one lineage at a time, and
 * src/providers may not import the store, so this small reader lives at the edge (DESIGN.md §1).
 */
import type { Clock } from '../core/clock.js';
import { BatonError } from '../core/errors.js';
import type { OccurrenceView, OccurrencesService } from '../occurrences/index.js';
import { isUnresolved } from '../occurrences/index.js';
import { StatusSources, type KeyResolver } from '../providers/index.js';
import { BackgroundReconciler } from '../server/background-reconciler.js';
import type { ReconcileMetrics } from '../server/reconcile-metrics.js';
import type { StoreEngine } from '../store/index.js';
import { occurrencesUnitOfWork } from '../store/index.js';

export function allUnresolvedLister(engine: StoreEngine, limit = 1000): () => Promise<OccurrenceView[]> {
  const uow = occurrencesUnitOfWork(engine);
  return () =>
    uow.read(async (repo) => {
      const rows = await repo.listOccurrences({ phases: ['entered'], limit });
      return rows.filter(isUnresolved).map((o) => ({ ...o, unresolved: true }));
    });
}

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `500ms`, `30s`, `5m`, `1h` (or bare seconds): 100 ms ≤ d ≤ 24 h, in milliseconds. */
export function parseDuration(text: string, flag: string): number {
  const m = /^([0-9]{1,7}(?:\.[0-9]{1,3})?)(ms|s|m|h)?$/.exec(text.trim());
  const ms = m === null ? NaN : Number(m[1]) * (UNITS[m[2] ?? 's'] ?? NaN);
  if (!Number.isFinite(ms) || ms < 100 || ms > 86_400_000) {
    throw new BatonError('usage', `${flag} must be a duration such as 500ms, 30s or 5m (100ms to 24h)`);
  }
  return Math.round(ms);
}

export function parseConcurrency(text: string | undefined): number {
  if (text === undefined) return 4;
  if (!/^[0-9]{1,3}$/.test(text) || Number(text) < 1 || Number(text) > 256) {
    throw new BatonError('usage', '--reconcile-concurrency (BATON_RECONCILE_CONCURRENCY) must be 1..256');
  }
  return Number(text);
}

export interface ServeReconcilerInput {
  readonly engine: StoreEngine;
  readonly service: OccurrencesService;
  readonly keys: KeyResolver;
  readonly clock: Clock;
  readonly everyMs: number;
  readonly concurrency: number;
  readonly metrics: ReconcileMetrics;
  readonly onError: (error: unknown, occurrenceId: string) => void;
}

/** Serve's background reconciler, started: one per server; several servers share the claims. */
export function startServeReconciler(i: ServeReconcilerInput): BackgroundReconciler {
  const reconciler = new BackgroundReconciler({
    engine: i.engine,
    service: i.service,
    sources: new StatusSources({ keys: i.keys, clock: i.clock }),
    clock: i.clock,
    everyMs: i.everyMs,
    concurrency: i.concurrency,
    metrics: i.metrics,
    onError: i.onError,
  });
  i.metrics.health.backgroundStarted(i.everyMs, i.concurrency);
  reconciler.start();
  return reconciler;
}
