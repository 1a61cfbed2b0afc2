/**
 * Study reporting rules (OBS-24, OBS-26, B3.8; C-B11: reporting and labelling only, no experiment
 * runner). Every planned case is accounted for; a case that did not complete is never coded as a
 * result (a malformed answer is not HALT); zero denominators stay null; the complete-case rate
 * comes with worst-case bounds over the cases that did not complete.
 */
import { BatonError } from '../core/index.js';
import { rational, type Rational } from './rational.js';

export const CASE_STATUSES = [
  'completed',
  'interrupted',
  'not_attempted',
  'malformed',
  'refused',
  'failed_transport',
] as const;
export type CaseStatus = (typeof CASE_STATUSES)[number];

export interface PlannedCase {
  readonly id: string;
  readonly status: CaseStatus;
  /** The coded outcome of a completed case (e.g. HALT, CONTINUE); null otherwise. */
  readonly outcome: string | null;
}

export interface CaseRow extends PlannedCase {
  /** Only completed cases carry an outcome; everything else is null, never HALT. */
  readonly coded: string | null;
}

export interface StudySummary {
  readonly planned: number;
  readonly rows: readonly CaseRow[];
  readonly byStatus: Readonly<Record<CaseStatus, number>>;
  /** Rate of `target` among completed cases; null when none completed. */
  readonly completeCaseRate: Rational | null;
  /** [target among all planned, target + not completed among all planned]; null when none planned. */
  readonly worstCaseBounds: { readonly lower: Rational; readonly upper: Rational } | null;
  readonly target: string;
}

export function summarizeCases(cases: readonly PlannedCase[], target = 'HALT'): StudySummary {
  const ids = new Set<string>();
  const byStatus = Object.fromEntries(CASE_STATUSES.map((s) => [s, 0])) as Record<CaseStatus, number>;
  const rows = cases.map((c) => {
    if (ids.has(c.id)) throw new BatonError('input_invalid', `case ${c.id} is planned twice`);
    ids.add(c.id);
    if (!(CASE_STATUSES as readonly string[]).includes(c.status)) {
      throw new BatonError('input_invalid', `case ${c.id} has an unknown status`);
    }
    byStatus[c.status]++;
    return { ...c, coded: c.status === 'completed' ? c.outcome : null };
  });
  const completed = rows.filter((r) => r.status === 'completed');
  const hits = completed.filter((r) => r.coded === target).length;
  const planned = rows.length;
  return {
    planned,
    rows,
    byStatus,
    target,
    completeCaseRate: completed.length === 0 ? null : rational(hits, completed.length),
    worstCaseBounds:
      planned === 0
        ? null
        : { lower: rational(hits, planned), upper: rational(hits + planned - completed.length, planned) },
  };
}

/** An AOC or harness conformance label set (OBS-06, B6): what was run, simulated or attested. */
export interface RunLabels {
  readonly provider: 'SIMULATED' | 'OBSERVED_WITH_STATED_EVIDENCE';
  readonly independent_reproduction: 'NOT_RUN';
  readonly runner: 'same-team';
}

/**
 * OBS-06: a stubbed or synthetic response is SIMULATED; the builder refuses a claim of observed
 * evidence for it, and a local run never satisfies independent reproduction.
 */
export function runLabels(input: {
  readonly syntheticProvider: boolean;
  readonly claimed?: string;
}): RunLabels {
  if (input.syntheticProvider && input.claimed !== undefined && input.claimed !== 'SIMULATED') {
    throw new BatonError(
      'input_invalid',
      `a synthetic provider's results cannot be labelled ${input.claimed}`,
    );
  }
  return {
    provider: input.syntheticProvider ? 'SIMULATED' : 'OBSERVED_WITH_STATED_EVIDENCE',
    independent_reproduction: 'NOT_RUN',
    runner: 'same-team',
  };
}
