/**
 * Prometheus metrics through prom-client (docs/api.md, /metrics): the process and Node.js defaults
 * (`process_*`, `nodejs_*`), per-process counters and histograms, and gauges of the store's open
 * work. A scrape never counts a table: the gauges come from store/occurrences-gauges.ts (the limit
 * stripes and an index range over the entered occurrences), so its cost does not grow with the
 * occurrences or evidence ever recorded. Several servers sharing PostgreSQL report the same gauges.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { EVENT_TYPES } from '../observations/index.js';
import type { CommitStats } from '../store/engine.js';
import type { OpenGauges } from '../store/occurrences-gauges.js';
import { MissionMetrics } from './mission-metrics.js';
import { RefusalHistory } from './refusal-history.js';

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Seconds; one command is one transaction, typically well under 10 ms on SQLite. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** A submitted record's event type may be any URI: bound the label set (prometheus cardinality). */
function eventTypeLabel(t: string): string {
  return (EVENT_TYPES as readonly string[]).includes(t) ? t : 'uri';
}

let processRegistry: Registry | undefined;

/** The defaults describe the process, so one registry per process serves every server in it. */
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** A counter whose value is read from elsewhere at scrape time (the engine's commit statistics). */
function mirroredCounter(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

export class Metrics {
  readonly #counters = new Registry();
  readonly #store = new Registry();
  readonly #commitsRegistry = new Registry();
  #commits: CommitStats = { commits: 0, transactions: 0, rolledBack: 0, largestBatch: 0 };
  readonly #attached: Registry[] = [];
  readonly #entries: Counter;
  readonly #refusals: Counter<'code'>;
  readonly #requests: Counter<'method' | 'route' | 'status'>;
  readonly #requestSeconds: Histogram<'method' | 'route' | 'status'>;
  readonly #transactions: Histogram<'operation'>;
  readonly #storeUp: Gauge;
  readonly #unresolved: Gauge;
  readonly #conflicting: Gauge;
  readonly #byPhase: Gauge<'phase'>;
  readonly #continuityWritten: Counter<'event_type' | 'via'>;
  readonly #continuityRefused: Counter<'code' | 'via'>;
  readonly #ackDropped: Counter<'cause'>;
  readonly #reconcileDropped: Counter<'cause'>;
  /** Mission checks, harness stops, SETs received (src/server/mission-metrics.ts). */
  readonly missions: MissionMetrics;
  /** The same refusals over time, since this process started (GET /v1/refusals/histogram). */
  readonly refusalHistory = new RefusalHistory(Date.now());

  constructor() {
    const registers = [this.#counters];
    this.#entries = new Counter({
      name: 'baton_provider_entries_total',
      help: 'Provider entries recorded by this process.',
      registers,
    });
    this.#refusals = new Counter({
      name: 'baton_refusals_total',
      help: 'Requests refused by this process, by BatonError code.',
      labelNames: ['code'],
      registers,
    });
    this.#requests = new Counter({
      name: 'baton_http_requests_total',
      help: 'HTTP requests answered by this process.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.#requestSeconds = new Histogram({
      name: 'baton_http_request_duration_seconds',
      help: 'Time to answer one HTTP request, by route pattern (never the raw URL) and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: BUCKETS,
      registers,
    });
    this.#transactions = new Histogram({
      name: 'baton_transaction_duration_seconds',
      help: 'Duration of one service command (one store transaction).',
      labelNames: ['operation'],
      buckets: BUCKETS,
      registers,
    });
    // Issue 12 §5: continuity records written and refused (docs/observations.md "Metrics").
    this.#continuityWritten = new Counter({
      name: 'baton_continuity_records_written_total',
      help: 'Continuity observation records stored by this process, by event type (a URI type counts as "uri") and path (projector, submit).',
      labelNames: ['event_type', 'via'],
      registers,
    });
    this.#continuityRefused = new Counter({
      name: 'baton_continuity_records_refused_total',
      help: 'Continuity observation records refused by this process, by BatonError code and path (projector, submit).',
      labelNames: ['code', 'via'],
      registers,
    });
    // Unauthenticated acknowledgements answered but not appended (occurrences/service/ack-bound.ts).
    this.#ackDropped = new Counter({
      name: 'baton_acknowledgement_evidence_dropped_total',
      help: 'Unauthenticated acknowledgements answered but not kept as evidence: a repeat, or past the per-occurrence cap.',
      labelNames: ['cause'],
      registers,
    });
    // Both series exist from the start, so an alert on their rate sees a zero before the first drop.
    this.#reconcileDropped = new Counter({
      name: 'baton_reconcile_evidence_dropped_total',
      help: 'Status readings asked for by a caller (reconcile, acknowledge-and-settle) that moved nothing, not kept as evidence: a repeat, or past the per-occurrence cap.',
      labelNames: ['cause'],
      registers,
    });
    for (const cause of ['repeat', 'cap'] as const) {
      this.#ackDropped.inc({ cause }, 0);
      this.#reconcileDropped.inc({ cause }, 0);
    }
    this.#storeUp = new Gauge({
      name: 'baton_store_up',
      help: 'Whether the last scrape could read the store.',
      registers,
    });
    const store = [this.#store];
    this.#unresolved = new Gauge({
      name: 'baton_unresolved_occurrences',
      help: 'Occurrences entered with an open effect.',
      registers: store,
    });
    this.#conflicting = new Gauge({
      name: 'baton_conflicting_occurrences',
      help: 'Occurrences with conflicting evidence.',
      registers: store,
    });
    this.#byPhase = new Gauge({
      name: 'baton_occurrences',
      help: 'Open occurrences by phase (reserved, entered); terminal ones are in GET /v1/counts.',
      labelNames: ['phase'],
      registers: store,
    });
    this.missions = new MissionMetrics(this.#counters);
    this.#commitFamilies();
  }

  #commitFamilies(): void {
    const r = this.#commitsRegistry;
    mirroredCounter(
      r,
      'baton_store_commits_total',
      'Physical COMMITs (one fsync each) of this process.',
      () => this.#commits.commits,
    );
    mirroredCounter(
      r,
      'baton_store_committed_transactions_total',
      'Transactions committed by them (group commit: several per COMMIT).',
      () => this.#commits.transactions,
    );
    // Where a transaction's time goes on SQLite (issue 16, p99 per call): queued before its batch,
    // in COMMIT, and the checkpoint thread's passes and the batches held for them.
    const seconds = (ms: number | undefined) => (ms ?? 0) / 1000;
    const mirrored: readonly [string, string, () => number][] = [
      [
        'baton_store_wait_seconds_total',
        'Time transactions waited, queued, before their batch ran them.',
        () => seconds(this.#commits.waitMs),
      ],
      [
        'baton_store_commit_seconds_total',
        'Time in COMMIT (with the inline SQLite writer, the event loop is blocked meanwhile).',
        () => seconds(this.#commits.commitMs),
      ],
      [
        'baton_store_checkpoint_passes_total',
        'WAL checkpoint passes on the checkpoint thread (SQLite).',
        () => this.#commits.checkpoints?.passes ?? 0,
      ],
      [
        'baton_store_checkpoint_pass_seconds_total',
        'Time of those passes, on the checkpoint thread.',
        () => seconds(this.#commits.checkpoints?.passMs),
      ],
      [
        'baton_store_checkpoint_holds_total',
        'Batches held for the pass that lets the WAL restart.',
        () => this.#commits.checkpoints?.holds ?? 0,
      ],
      [
        'baton_store_checkpoint_hold_seconds_total',
        'Time those batches were held (the event loop was not).',
        () => seconds(this.#commits.checkpoints?.holdMs),
      ],
      [
        'baton_store_checkpoint_held_frames_total',
        'WAL frames those passes copied (SQLite alone copies about 1000 inside one COMMIT).',
        () => this.#commits.checkpoints?.heldFrames ?? 0,
      ],
      [
        'baton_store_wal_restarts_total',
        'WAL restarts seen by the checkpoint thread.',
        () => this.#commits.checkpoints?.restarts ?? 0,
      ],
    ];
    for (const [name, help, read] of mirrored) mirroredCounter(r, name, help, read);
    const stats = (): CommitStats => this.#commits;
    new Gauge({
      name: 'baton_store_largest_commit_batch',
      help: 'The most transactions one COMMIT carried.',
      registers: [r],
      collect() {
        this.set(stats().largestBatch);
      },
    });
  }

  /** Another context's registry, rendered after this one's counters (reconcile-metrics.ts). */
  attach(registry: Registry): void {
    if (!this.#attached.includes(registry)) this.#attached.push(registry);
  }

  countEntry(): void {
    this.#entries.inc();
  }

  /** An acknowledgement answered without being appended (`notRecorded`: repeat, capped). */
  countAcknowledgementDropped(notRecorded: 'repeat' | 'capped' | undefined): void {
    if (notRecorded !== undefined)
      this.#ackDropped.inc({ cause: notRecorded === 'capped' ? 'cap' : 'repeat' });
  }

  /** A reading a caller asked for, answered without being appended. */
  countReconcileDropped(notRecorded: 'repeat' | 'capped'): void {
    this.#reconcileDropped.inc({ cause: notRecorded === 'capped' ? 'cap' : 'repeat' });
  }

  countRefusal(code: string): void {
    this.#refusals.inc({ code });
    this.refusalHistory.record(code, Date.now());
  }

  countContinuityWritten(eventType: string, via: 'projector' | 'submit'): void {
    this.#continuityWritten.inc({ event_type: eventTypeLabel(eventType), via });
  }

  countContinuityRefused(code: string, via: 'projector' | 'submit'): void {
    this.#continuityRefused.inc({ code, via });
  }

  /** One answered request: `route` is the route's pattern (`/v1/occurrences/:id`), never the URL. */
  countRequest(method: string, route: string, status: number, seconds?: number): void {
    const labels = { method, route, status: String(status) };
    this.#requests.inc(labels);
    if (seconds !== undefined) this.#requestSeconds.observe(labels, seconds);
  }

  observeTransaction(operation: string, seconds: number): void {
    this.#transactions.observe({ operation }, seconds);
  }

  /**
   * The exposition; `open` is undefined when the store could not be read (then store_up is 0 and
   * no store gauge is shown), `commits` when the engine does not batch COMMITs itself.
   */
  async render(open: OpenGauges | undefined, commits?: CommitStats): Promise<string> {
    this.#storeUp.set(open === undefined ? 0 : 1);
    const parts = [await this.#counters.metrics()];
    for (const r of this.#attached) parts.push(await r.metrics());
    if (open !== undefined) {
      this.#unresolved.set(open.entered);
      this.#conflicting.set(open.conflicts);
      this.#byPhase.set({ phase: 'reserved' }, open.reserved);
      this.#byPhase.set({ phase: 'entered' }, open.entered);
      parts.push(await this.#store.metrics());
    }
    if (commits !== undefined) {
      this.#commits = commits;
      parts.push(await this.#commitsRegistry.metrics());
    }
    parts.push(await processMetrics().metrics());
    // prom-client separates families with empty lines (the format ignores them: dropped) and
    // writes NaN as `Nan` (an event-loop mean before any sample): spelled as the format does.
    return parts
      .map((p) => (p.endsWith('\n') ? p : `${p}\n`))
      .join('')
      .replace(/\n{2,}/g, '\n')
      .replace(/ Nan$/gm, ' NaN');
  }
}
