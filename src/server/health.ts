/**
 * What this server process has seen of reconciliation and of webhook deliveries since it started
 * (issue 14 §3 "the reconciler's and the webhook receiver's health"): the console's overview
 * panels read it through GET /v1/health/reconciler and /v1/health/webhooks. It holds counts and
 * the latest times only — never a request, a body or a secret — and it is per process, like the
 * Prometheus counters it sits beside (reconcile-metrics.ts): a restart starts it again, which the
 * API says with `since`.
 */

/** Counts by label, in first-seen order; bounded by the labels' closed sets (verdicts, results). */
type Counts = Record<string, number>;

export interface ReconcilerHealthView {
  readonly since: number;
  /** serve's --reconcile-every settings, or null when no background reconciler runs here. */
  readonly background: { readonly everyMs: number; readonly concurrency: number } | null;
  readonly ticks: number;
  readonly lastTickAt: number | null;
  /** Occurrences the last tick asked about. */
  readonly lastTickAsked: number;
  readonly lookups: number;
  readonly lastLookupAt: number | null;
  readonly lookupsBySourceKind: Counts;
  /** Answers by verdict: `effective`, or the missing-knowledge reason. */
  readonly answersByVerdict: Counts;
}

export interface WebhookHealthView {
  readonly since: number;
  readonly deliveries: number;
  readonly deliveriesByResult: Counts;
  readonly lastDelivery: { readonly at: number; readonly result: string } | null;
  /** When a delivery was last recorded as evidence. */
  readonly lastRecordedAt: number | null;
}

function bump(c: Counts, key: string): void {
  c[key] = (c[key] ?? 0) + 1;
}

export class ReconcileHealth {
  readonly #now: () => number;
  readonly #since: number;
  #background: ReconcilerHealthView['background'] = null;
  #ticks = 0;
  #lastTickAt: number | null = null;
  #lastTickAsked = 0;
  #lookups = 0;
  #lastLookupAt: number | null = null;
  readonly #bySource: Counts = {};
  readonly #byVerdict: Counts = {};
  #deliveries = 0;
  readonly #byResult: Counts = {};
  #lastDelivery: WebhookHealthView['lastDelivery'] = null;
  #lastRecordedAt: number | null = null;

  constructor(now: () => number) {
    this.#now = now;
    this.#since = now();
  }

  backgroundStarted(everyMs: number, concurrency: number): void {
    this.#background = { everyMs, concurrency };
  }

  tick(asked: number): void {
    this.#ticks += 1;
    this.#lastTickAt = this.#now();
    this.#lastTickAsked = asked;
  }

  lookup(sourceKind: string, verdict: string): void {
    this.#lookups += 1;
    this.#lastLookupAt = this.#now();
    bump(this.#bySource, sourceKind);
    bump(this.#byVerdict, verdict);
  }

  delivery(result: string): void {
    const at = this.#now();
    this.#deliveries += 1;
    bump(this.#byResult, result);
    this.#lastDelivery = { at, result };
    if (result === 'recorded') this.#lastRecordedAt = at;
  }

  reconciler(): ReconcilerHealthView {
    return {
      since: this.#since,
      background: this.#background,
      ticks: this.#ticks,
      lastTickAt: this.#lastTickAt,
      lastTickAsked: this.#lastTickAsked,
      lookups: this.#lookups,
      lastLookupAt: this.#lastLookupAt,
      lookupsBySourceKind: { ...this.#bySource },
      answersByVerdict: { ...this.#byVerdict },
    };
  }

  webhooks(): WebhookHealthView {
    return {
      since: this.#since,
      deliveries: this.#deliveries,
      deliveriesByResult: { ...this.#byResult },
      lastDelivery: this.#lastDelivery,
      lastRecordedAt: this.#lastRecordedAt,
    };
  }
}
