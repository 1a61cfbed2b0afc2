/**
 * The continuity report (OBS-18, OBS-26, B3.8, B6 `baton report`): what Baton observed, what it
 * cannot observe, and how far its figures reach. Pure: the store gathers the facts.
 */
import type { BypassPath } from '../occurrences/index.js';
import type { CifResult, FicResult } from './metrics.js';
import { WITNESS_LIMITATION } from './handoff.js';
import type { VerificationClass } from './model.js';
import { recordClass, weakest } from './record-class.js';

export { recordClass };
import type { StudySummary } from './study.js';

/**
 * OBS-06 labels of the report itself (¶17: classify each dataset "as appropriate"). `records` is
 * the weakest class of the records the report counts — OBSERVED_WITH_STATED_EVIDENCE only when
 * every one is; `records_source` says whether they all come from Baton's own evidence log (its
 * producer, signed) or include records others submitted, which Baton did not observe — and, above
 * both, `conflicts_with_evidence_log` when the log now contradicts some of them (the projector
 * re-derived other bytes: B3.2, OBS-13; they count UNKNOWN in CIF and are listed in
 * `records.conflicting`).
 */
export interface ReportLabels {
  readonly records: VerificationClass;
  readonly records_source:
    'baton_evidence_log' | 'includes_submitted_records' | 'conflicts_with_evidence_log';
  readonly independent_reproduction: 'NOT_RUN';
  readonly runner: 'same-team';
}

/** Where Baton sees events (B6): everything else is a blind spot. */
export const EVENT_SURFACES = [
  'HTTP API routes under /v1 (takeover, create, enter, release, observe, remedy)',
  'SDK (BatonClient and its in-process twin)',
  'SET receiver (Mission Signals), when missions are configured',
  'Mission Status polling, when missions are configured',
  'reconcile (Baton’s own pinned status sources)',
] as const;

export interface SeriesPoint {
  /** RFC 3339 instant of the handoff (or window end) the point describes. */
  readonly at: string;
  readonly label: string;
  readonly fic: string | null;
  readonly cif: string | null;
}

export interface ContinuityReport {
  readonly type: 'baton.continuity-report/1';
  readonly generated_at: string;
  readonly producer: string;
  readonly labels: ReportLabels;
  readonly records: {
    readonly total: number;
    /** Baton's own handoff records (its producer, signed): the takeovers it observed. */
    readonly handoff: number;
    /** Baton's own revocation-barrier records (its producer, signed), counted as `handoff` is. */
    readonly revocation_barrier: number;
    readonly signed: number;
    /**
     * Signed records of other producers whose producer's current pin no longer holds the signing
     * key (replaced or unpinned since): kept, counted UNKNOWN `producer_key_unpinned` in CIF.
     */
    readonly producer_unpinned: number;
    readonly corrections: number;
    readonly by_event_type: Readonly<Record<string, number>>;
    readonly by_verification: Readonly<Record<string, number>>;
    /** Records under another producer than Baton's (submitted, not observed by Baton). */
    readonly submitted: number;
    /** Ids of Baton's records the evidence log now contradicts (never overwritten, counted UNKNOWN). */
    readonly conflicting: readonly string[];
  };
  readonly fic_obs: FicResult;
  readonly cif: CifResult;
  readonly series: readonly SeriesPoint[];
  readonly event_surfaces: readonly string[];
  readonly blind_spots: {
    readonly bypass_paths: readonly BypassPath[];
    readonly executor_local_code: string;
    readonly memory: string;
  };
  readonly retention: string;
  readonly sampling: string;
  readonly witness_dependence: readonly string[];
  readonly planned_cases: StudySummary | null;
}

export interface ReportInput {
  readonly now: string;
  readonly producer: string;
  readonly records: readonly {
    readonly event_type: string;
    readonly signed: boolean;
    readonly correction: boolean;
    readonly producer: string;
    readonly verification: VerificationClass;
    /** Signed by a key its producer's current pin no longer holds (CIF: `producer_key_unpinned`). */
    readonly producer_unpinned?: boolean;
  }[];
  readonly fic: FicResult;
  readonly cif: CifResult;
  readonly series: readonly SeriesPoint[];
  readonly bypassPaths: readonly BypassPath[];
  readonly plannedCases?: StudySummary;
  /** Ids of records the projector found contradicted by the evidence log (its `conflicts`). */
  readonly conflicts?: readonly string[];
}

export function buildReport(input: ReportInput): ContinuityReport {
  const byType: Record<string, number> = {};
  const byClass: Record<string, number> = {};
  for (const r of input.records) {
    byType[r.event_type] = (byType[r.event_type] ?? 0) + 1;
    byClass[r.verification] = (byClass[r.verification] ?? 0) + 1;
  }
  const submitted = input.records.filter((r) => r.producer !== input.producer || !r.signed).length;
  const conflicts = [...(input.conflicts ?? [])].sort();
  const sample = input.fic.sample;
  return {
    type: 'baton.continuity-report/1',
    generated_at: input.now,
    producer: input.producer,
    labels: {
      records: weakest(input.records.map((r) => r.verification)),
      records_source:
        conflicts.length > 0
          ? 'conflicts_with_evidence_log'
          : submitted === 0
            ? 'baton_evidence_log'
            : 'includes_submitted_records',
      independent_reproduction: 'NOT_RUN',
      runner: 'same-team',
    },
    records: {
      total: input.records.length,
      // Baton's own handoff records, one per takeover (its producer, signed); a `handoff` record
      // others submitted is in `by_event_type` and `submitted`, not a takeover Baton observed.
      handoff: input.records.filter(
        (r) => r.event_type === 'handoff' && r.producer === input.producer && r.signed,
      ).length,
      // Counted as `handoff` is: Baton's own barrier records (its producer, signed).
      revocation_barrier: input.records.filter(
        (r) => r.event_type === 'revocation_barrier' && r.producer === input.producer && r.signed,
      ).length,
      signed: input.records.filter((r) => r.signed).length,
      producer_unpinned: input.records.filter((r) => r.producer_unpinned === true).length,
      corrections: input.records.filter((r) => r.correction).length,
      by_event_type: byType,
      by_verification: byClass,
      submitted,
      conflicting: conflicts,
    },
    fic_obs: input.fic,
    cif: input.cif,
    series: input.series,
    event_surfaces: [...EVENT_SURFACES],
    blind_spots: {
      bypass_paths: input.bypassPaths,
      executor_local_code: 'code that runs inside an executor between Baton calls is not observed',
      memory: 'executor memory and context are not observed (memory is always UNKNOWN)',
    },
    retention:
      'evidence events and observation records are append-only and never deleted by Baton; provider status sources keep their own retention horizons (see each provider profile)',
    sampling:
      sample === null
        ? 'FIC_obs audited every entered occurrence in the window'
        : input.fic.audited_all
          ? `FIC_obs audited every entered occurrence in the window: the seeded sample of ${sample.size} (seed ${JSON.stringify(sample.seed)}) is at least the universe`
          : `FIC_obs audited a seeded sample of ${sample.size} (seed ${JSON.stringify(sample.seed)}): a sample, not the universe`,
    witness_dependence: [
      WITNESS_LIMITATION,
      'one witness (Baton’s evidence log); a witness count is not coverage',
    ],
    planned_cases: input.plannedCases ?? null,
  };
}
