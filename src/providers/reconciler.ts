/**
 * The reconciler (DESIGN.md §4, AOC-REQ-007, -009): it revisits unresolved occurrences, asks their
 * pinned status sources, and appends what they say as observations. It holds no executor
 * credential and no adapter, so it cannot enter a provider — reconciliation is evidence, never a
 * new attempt (AOC-REQ-010). Passes repeat with bounded exponential backoff until nothing is
 * unresolved or the pass budget is spent; what stays unresolved stays so, with its reasons. One
 * occurrence whose visit fails is counted (`error`) and reported; the others are still visited.
 */
import { setTimeout as sleepMs } from 'node:timers/promises';
import type {
  MissingKnowledgeReason,
  NotRecorded,
  ObserveResult,
  OccurrencesService,
  OccurrenceView,
  StatusSourceKind,
} from '../occurrences/index.js';
import {
  ACTIVE_KINDS,
  recordReading,
  type SourceReading,
  type StatusSources,
} from './status-sources/index.js';

/** What the reconciler may use of the service: reads and observations, nothing that enters. */
export type ReconcilerService = Pick<OccurrencesService, 'observe' | 'getProfile'>;

export interface ReconcileProgress {
  readonly pass: number;
  readonly occurrenceId: string;
  readonly source: string;
  readonly detail: string;
  readonly effective: boolean;
  /** The profile's interpretation of an effective answer (accepted, success, …). */
  readonly interpretation: string | null;
  readonly missingKnowledge: MissingKnowledgeReason | null;
  readonly unresolved: boolean;
  /** The source's kind, and the provider's `Retry-After` on its answer when it sent one. */
  readonly kind?: StatusSourceKind;
  readonly retryAfter?: string;
}

/** What one recorded reading tells a progress listener (one visit, one source). */
export function readingProgress(
  source: { readonly id: string; readonly kind: StatusSourceKind },
  reading: SourceReading,
  result: ObserveResult,
): ReconcileProgress {
  return {
    pass: 1,
    occurrenceId: result.occurrence.id,
    source: source.id,
    kind: source.kind,
    detail: reading.detail,
    effective: result.effective,
    interpretation: result.interpretation,
    missingKnowledge: result.missingKnowledge,
    unresolved: result.occurrence.unresolved,
    ...(reading.retryAfter !== undefined && { retryAfter: reading.retryAfter }),
  };
}

export interface ReconcileReport {
  readonly passes: number;
  readonly visited: number;
  readonly observations: number;
  readonly effective: number;
  readonly resolved: readonly string[];
  readonly unresolved: readonly string[];
  /** Observations per missing-knowledge reason, plus `effective`; `error`: visits that failed. */
  readonly byReason: Readonly<Record<string, number>>;
}

export interface ReconcilerOptions {
  readonly service: ReconcilerService;
  readonly sources: StatusSources;
  /** The unresolved occurrences to revisit: one lineage (lineageLister) or all (store wiring). */
  readonly list: () => Promise<readonly OccurrenceView[]>;
  readonly kinds?: readonly StatusSourceKind[];
  /** At most this many passes (default 5); the first runs at once. */
  readonly maxPasses?: number;
  /** Backoff before pass n+1: min(initialMs · 2^(n-1), maxMs). Defaults 250 ms and 8 s. */
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly onProgress?: (p: ReconcileProgress) => void;
  /**
   * One occurrence's visit failed (a source could not be asked, an observation not recorded): it is
   * counted as `error` in the report, stays unresolved, and the run goes on to the next one.
   */
  readonly onError?: (error: unknown, occurrenceId: string) => void;
  /** Who asked for this run (a principal's evidence actor), recorded in each observation. */
  readonly requestedBy?: string;
}

/** The unresolved occurrences of one lineage (AOC-REQ-005: what a successor must look at first). */
export function lineageLister(
  service: Pick<OccurrencesService, 'listUnresolved'>,
  lineage: string,
): () => Promise<readonly OccurrenceView[]> {
  return () => service.listUnresolved(lineage);
}

export function backoffMs(pass: number, initialMs: number, maxMs: number): number {
  return Math.min(initialMs * 2 ** Math.max(0, pass - 1), maxMs);
}

class Tally {
  readonly byReason: Record<string, number> = {};
  readonly visited = new Set<string>();
  readonly resolved = new Set<string>();
  observations = 0;
  effective = 0;

  count(reason: string | null): void {
    this.observations += 1;
    if (reason === null) this.effective += 1;
    this.#add(reason ?? 'effective');
  }

  /** A visit that failed: no observation of its own, never resolved, counted as `error`. */
  failed(): void {
    this.#add('error');
  }

  #add(key: string): void {
    this.byReason[key] = (this.byReason[key] ?? 0) + 1;
  }
}

export class Reconciler {
  readonly #o: ReconcilerOptions;

  constructor(options: ReconcilerOptions) {
    this.#o = options;
  }

  async run(): Promise<ReconcileReport> {
    const o = this.#o;
    const maxPasses = o.maxPasses ?? 5;
    const tally = new Tally();
    let pass = 0;
    let open: readonly OccurrenceView[] = await o.list();
    while (open.length > 0 && pass < maxPasses) {
      if (pass > 0)
        await (o.sleep ?? sleepMs)(backoffMs(pass, o.initialBackoffMs ?? 250, o.maxBackoffMs ?? 8000));
      pass += 1;
      for (const occurrence of open) await this.#visit(pass, occurrence, tally);
      open = await o.list();
    }
    return {
      passes: pass,
      visited: tally.visited.size,
      observations: tally.observations,
      effective: tally.effective,
      resolved: [...tally.resolved],
      unresolved: open.map((x) => x.id),
      byReason: tally.byReason,
    };
  }

  /**
   * Ask the sources in order until one answer is effective or the occurrence is resolved. A failure
   * is this occurrence's alone: it is reported and counted, and the pass goes on to the others
   * (one unreadable profile or broken source must not leave every later occurrence unvisited).
   * What the visit recorded before it failed stays recorded and counted.
   */
  async #visit(pass: number, occurrence: OccurrenceView, tally: Tally): Promise<void> {
    const o = this.#o;
    tally.visited.add(occurrence.id);
    try {
      await visitOccurrence(o, occurrence, (p) => {
        tally.count(p.missingKnowledge);
        if (!p.unresolved) tally.resolved.add(p.occurrenceId);
        o.onProgress?.({ ...p, pass });
      });
    } catch (error) {
      tally.failed();
      o.onError?.(error, occurrence.id);
    }
  }
}

/**
 * One pass of the applicable pinned sources over one occurrence, in order, until one answer is
 * effective or the occurrence is resolved (the reconciler's visit; serve's background reconciler
 * calls it once per claimed occurrence). Evidence only: it never enters (AOC-REQ-010).
 */
export async function visitOccurrence(
  o: Pick<ReconcilerOptions, 'service' | 'sources' | 'kinds' | 'requestedBy'>,
  occurrence: OccurrenceView,
  onProgress: (p: ReconcileProgress) => void,
): Promise<OccurrenceView> {
  const { provider } = occurrence;
  const profile = (await o.service.getProfile(provider.profileId, provider.profileVersion)).document;
  let current = occurrence;
  for (const source of o.sources.applicable(profile, current, o.kinds ?? ACTIVE_KINDS)) {
    const reading = await o.sources.query(profile, current, source.id);
    const result = await recordReading(o.service, reading, o.requestedBy);
    current = result.occurrence;
    onProgress(readingProgress(source, reading, result));
    if (result.effective || !current.unresolved) return current;
  }
  return current;
}

/** One occurrence after one reconciler pass over it, and what the pass saw. */
export interface OccurrenceReconciled {
  readonly occurrence: OccurrenceView;
  readonly report: ReconcileReport;
  /**
   * What the pass's last status answer left unknown (null when it was effective, or when no
   * source was asked: the occurrence was not unresolved, or no source applies).
   */
  readonly missingKnowledge: MissingKnowledgeReason | null;
}

/**
 * One pass of the pinned status sources over one occurrence, while it is unresolved (the
 * `reconcile` route and `executor.reconcile`). Evidence only: it never enters (AOC-REQ-010).
 * `target`: the occurrence's id, or the occurrence as the caller just read it (the route reads it
 * once, with the caller's authentication: issue 16 §1). The occurrence is read at most once here;
 * afterwards it is what the last observation's own transaction returned, never re-read.
 */
export async function reconcileOccurrence(
  service: ReconcilerService & Pick<OccurrencesService, 'getOccurrenceView' | 'observeAsked'>,
  sources: StatusSources,
  target: string | OccurrenceView,
  requestedBy?: string,
  /** Told of each reading answered but not appended (a repeat, or past the cap): the route counts it. */
  onNotRecorded?: (why: NotRecorded) => void,
): Promise<OccurrenceReconciled> {
  let latest = typeof target === 'string' ? await service.getOccurrenceView(target) : target;
  let missingKnowledge: MissingKnowledgeReason | null = null;
  // One occurrence, asked for by name: its failure is the caller's answer, as it always was.
  const failures: unknown[] = [];
  const observing: ReconcilerService = {
    getProfile: (id, version) => service.getProfile(id, version),
    // Asked for by a caller: a reading that moves nothing is bounded (ack-bound.ts).
    observe: async (...args) => {
      const r = await service.observeAsked(...args);
      if (r.notRecorded !== undefined) onNotRecorded?.(r.notRecorded);
      latest = r.occurrence;
      return r;
    },
  };
  const reconciler = new Reconciler({
    service: observing,
    sources,
    maxPasses: 1,
    list: () => Promise.resolve(latest.unresolved ? [latest] : []),
    onProgress: (p) => void (missingKnowledge = p.missingKnowledge),
    onError: (error) => void failures.push(error),
    ...(requestedBy === undefined ? {} : { requestedBy }),
  });
  const report = await reconciler.run();
  if (failures.length > 0) throw failures[0];
  return { occurrence: latest, report, missingKnowledge };
}
