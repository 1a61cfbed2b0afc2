/**
 * The background reconciler of `baton serve --reconcile-every` (issue 13 §4, docs/providers.md
 * "Reconciliation in serve"). Every tick it lists the unresolved occurrences that are due, claims
 * each one (src/store/reconciliation.ts: one atomic conditional upsert with an expiry, so several
 * servers on one PostgreSQL never ask about one occurrence at once), asks its pinned status
 * sources once (providers/reconcile-stages.ts: evidence only, never an entry — AOC-REQ-010), and
 * gives the claims back (a tick claims and releases in one transaction each) with the next ask's earliest time: exponential backoff with jitter per
 * occurrence, never sooner than the provider's Retry-After. At most `concurrency` asks run at once.
 * `stop()` (the SIGTERM drain) lets the asks in flight finish and starts no new one.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { OccurrencesService } from '../occurrences/index.js';
import type { OccurrenceView } from '../occurrences/index.js';
import {
  nextAskAt,
  parseRetryAfter,
  type BackoffPolicy,
  type ReconcileProgress,
  type StatusSources,
} from '../providers/index.js';
import { visitInStages, type StagedVisit } from '../providers/reconcile-stages.js';
import type { StoreEngine } from '../store/engine.js';
import { ReconciliationStore, type ClaimRelease, type ClaimTaken } from '../store/reconciliation.js';
import type { ReconcileMetrics } from './reconcile-metrics.js';

export interface BackgroundReconcilerOptions {
  readonly engine: StoreEngine;
  readonly service: OccurrencesService;
  readonly sources: StatusSources;
  readonly clock: Clock;
  /** How often a tick starts (after the previous one ended). */
  readonly everyMs: number;
  /** At most this many occurrences asked about at once (default 4). */
  readonly concurrency?: number;
  /** Backoff per occurrence (default: initial = everyMs, max = 1 h). */
  readonly backoff?: BackoffPolicy;
  /** Jitter source in [0, 1) (default Math.random: jitter spreads load, it decides nothing). */
  readonly random?: () => number;
  /** A claim lapses after this long if its holder died mid-ask (default 120 s). */
  readonly claimTtlMs?: number;
  /** Occurrences considered per tick (default 8 × concurrency). */
  readonly batch?: number;
  readonly metrics?: ReconcileMetrics;
  /** This server's claim holder id (default: random). */
  readonly holder?: string;
  /** A visit that failed (store, profile): reported, then backed off like an unanswered ask. */
  readonly onError?: (error: unknown, occurrenceId: string) => void;
  readonly onVisit?: (visit: VisitReport) => void;
}

export interface VisitReport {
  readonly occurrenceId: string;
  readonly holder: string;
  readonly asks: number;
  readonly resolved: boolean;
  /** Unanswered asks so far, and when the next may come (absent once resolved). */
  readonly attempts?: number;
  readonly nextAt?: number;
}

const HOUR_MS = 3_600_000;

export class BackgroundReconciler {
  readonly holder: string;
  readonly #o: BackgroundReconcilerOptions;
  readonly #store: ReconciliationStore;
  #timer: NodeJS.Timeout | undefined;
  #tick: Promise<void> | undefined;
  #stopped = false;

  constructor(options: BackgroundReconcilerOptions) {
    this.#o = options;
    this.#store = new ReconciliationStore(options.engine);
    this.holder = options.holder ?? `srv_${randomBytes(8).toString('hex')}`;
  }

  start(): void {
    if (this.#stopped || this.#timer !== undefined || this.#tick !== undefined) return;
    this.#schedule(0);
  }

  /** Start no new ask; resolve when the asks in flight have answered (or timed out). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#tick;
  }

  #schedule(ms: number): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#tick = this.tick()
        .then(() => undefined)
        .finally(() => {
          this.#tick = undefined;
          if (!this.#stopped) this.#schedule(this.#o.everyMs);
        });
    }, ms);
  }

  /**
   * One tick: claim every due occurrence (one transaction), ask about each (bounded concurrency,
   * each stage's observations recorded in one transaction), give every claim back
   * (one transaction); how many were asked about.
   */
  async tick(): Promise<number> {
    const o = this.#o;
    const concurrency = Math.max(1, o.concurrency ?? 4);
    const now = o.clock.wallMs();
    let claims: ClaimTaken[];
    try {
      const due = await this.#store.dueOccurrences(now, o.batch ?? 8 * concurrency);
      claims = await this.#store.claim(due, this.holder, now, now + (o.claimTtlMs ?? 120_000));
    } catch (error) {
      o.onError?.(error, '*');
      return 0;
    }
    const visits = await this.#visitAll(claims, concurrency);
    const releases: ClaimRelease[] = [];
    const reports: VisitReport[] = [];
    for (const claim of claims) {
      const visit = visits.get(claim.occurrenceId);
      if (visit === undefined || (!visit.started && !visit.resolved)) {
        releases.push({ kind: 'unvisited', occurrenceId: claim.occurrenceId });
        continue;
      }
      if (visit.error !== undefined) o.onError?.(visit.error, claim.occurrenceId);
      const { release, report } = this.#outcome(claim, visit);
      releases.push(release);
      reports.push(report);
    }
    try {
      await this.#store.release(this.holder, releases);
    } catch (error) {
      // The claims then lapse at their expiry: another server (or this one) asks again later.
      o.onError?.(error, '*');
    }
    for (const r of reports) o.onVisit?.(r);
    o.metrics?.health.tick(reports.length);
    return reports.length;
  }

  /** Read each claimed occurrence, then ask in stages (providers/reconcile-stages.ts). */
  async #visitAll(claims: readonly ClaimTaken[], concurrency: number): Promise<Map<string, StagedVisit>> {
    const o = this.#o;
    const views: OccurrenceView[] = [];
    const failed = new Map<string, StagedVisit>();
    for (const { occurrenceId } of claims) {
      try {
        views.push(await o.service.getOccurrenceView(occurrenceId));
      } catch (error) {
        failed.set(occurrenceId, { occurrenceId, started: true, asks: 0, resolved: false, error });
      }
    }
    const by = { service: o.service, sources: o.sources, requestedBy: `reconciler:${this.holder}` };
    const visits = await visitInStages(by, views, {
      concurrency,
      stopped: () => this.#stopped,
      onProgress: (p: ReconcileProgress) =>
        o.metrics?.countLookup(p.kind ?? 'unknown', p.missingKnowledge ?? 'effective'),
    });
    for (const [id, v] of failed) visits.set(id, v);
    return visits;
  }

  #outcome(claim: ClaimTaken, visit: StagedVisit): { release: ClaimRelease; report: VisitReport } {
    const o = this.#o;
    const { occurrenceId, asks, resolved, retryAfter } = visit;
    const report = { occurrenceId, holder: this.holder, asks, resolved };
    if (resolved) return { release: { kind: 'resolved', occurrenceId }, report };
    const now = o.clock.wallMs();
    const policy = o.backoff ?? { initialMs: o.everyMs, maxMs: HOUR_MS };
    const attempts = claim.attempts + 1;
    const nextAt = nextAskAt(
      now,
      attempts,
      policy,
      o.random ?? Math.random,
      parseRetryAfter(retryAfter, now),
    );
    return {
      release: { kind: 'asked', occurrenceId, attempts, nextAt },
      report: { ...report, attempts, nextAt },
    };
  }
}
