/**
 * Metrics of reconciliation in `baton serve` (docs/operations.md "Reconciliation metrics"), in
 * their own prom-client registry that `Metrics` renders with its own: status lookups the
 * background reconciler made, their answers by verdict, webhook deliveries by result, refused
 * deliveries not kept as evidence (a repeat, or past the per-occurrence cap), and the age
 * of the oldest unresolved occurrence (read from the store at scrape time through one indexed
 * MIN over the entered occurrences, which the domain's in-flight limit bounds).
 */
import { Counter, Gauge, Registry } from 'prom-client';
import { ReconcileHealth } from './health.js';

/** What happened to one delivery at `POST /v1/webhooks/{profileId}`. */
export const WEBHOOK_RESULTS = [
  'recorded',
  'duplicate',
  'ignored',
  'unknown_occurrence',
  'unauthenticated',
  'stale',
  'invalid',
  'no_source',
] as const;
export type WebhookResult = (typeof WEBHOOK_RESULTS)[number];

/** Why a refused delivery about a known occurrence was not kept (AOC-CASE-009, bounded). */
export type RefusedDropCause = 'repeat' | 'cap';

export class ReconcileMetrics {
  readonly registry = new Registry();
  readonly #lookups: Counter<'source_kind'>;
  readonly #answers: Counter<'verdict'>;
  readonly #deliveries: Counter<'result'>;
  readonly #refusedDropped: Counter<'cause'>;
  /** The same events with their latest times, for GET /v1/health/* (health.ts). */
  readonly health: ReconcileHealth;

  /** `oldestEnteredAt` reads the store; undefined (no sample) when nothing is unresolved. */
  constructor(oldestEnteredAt: () => Promise<number | undefined>, nowMs: () => number) {
    const registers = [this.registry];
    this.health = new ReconcileHealth(nowMs);
    this.#lookups = new Counter({
      name: 'baton_reconciler_lookups_total',
      help: 'Status-source asks the background reconciler of this process made, by source kind.',
      labelNames: ['source_kind'],
      registers,
    });
    this.#answers = new Counter({
      name: 'baton_reconciler_answers_total',
      help: 'Their answers by verdict: effective, or the missing-knowledge reason.',
      labelNames: ['verdict'],
      registers,
    });
    this.#deliveries = new Counter({
      name: 'baton_webhook_deliveries_total',
      help: 'Webhook deliveries this process answered, by result.',
      labelNames: ['result'],
      registers,
    });
    this.#refusedDropped = new Counter({
      name: 'baton_webhook_refused_evidence_dropped_total',
      help: 'Refused deliveries about a known occurrence not kept as evidence: a repeat, or past the cap.',
      labelNames: ['cause'],
      registers,
    });
    // Both series exist from the start, so an alert on their rate sees a zero before the first drop.
    for (const cause of ['repeat', 'cap'] as const) this.#refusedDropped.inc({ cause }, 0);
    new Gauge({
      name: 'baton_oldest_unresolved_age_seconds',
      help: 'Seconds since the oldest unresolved occurrence was entered (0 when none is).',
      registers,
      async collect() {
        // A store that cannot be read shows no sample here; baton_store_up says why.
        const at = await oldestEnteredAt().catch(() => null);
        if (at === null) return;
        this.set(at === undefined ? 0 : Math.max(0, (nowMs() - at) / 1000));
      },
    });
  }

  countLookup(sourceKind: string, verdict: string): void {
    this.#lookups.inc({ source_kind: sourceKind });
    this.#answers.inc({ verdict });
    this.health.lookup(sourceKind, verdict);
  }

  countDelivery(result: WebhookResult): void {
    this.#deliveries.inc({ result });
    this.health.delivery(result);
  }

  countRefusedDropped(cause: RefusedDropCause): void {
    this.#refusedDropped.inc({ cause });
  }
}
