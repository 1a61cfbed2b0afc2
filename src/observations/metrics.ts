/**
 * Metrics that cannot flatter (OBS-14..17, B3.5–B3.7). They are reports only: nothing in
 * occurrences, missions or leases imports this module (OBS-15, lint rule in eslint.boundaries.js).
 */
import { BatonError, sha256 } from '../core/index.js';
import type { ObservationRecord } from './model.js';
import { addFractions, rational, type Rational } from './rational.js';
import { MICRO, type Weights } from './weights.js';

/** C-B7: the five criteria of "complete verified lineage" for one consequential action. */
export const FIC_CRITERIA = ['C1', 'C2', 'C3', 'C4', 'C5'] as const;
export type FicCriterion = (typeof FIC_CRITERIA)[number];

export interface AuditedAction {
  readonly occurrence: string;
  /** The criteria this action fails; empty = verified lineage. */
  readonly failed: readonly FicCriterion[];
}

export interface FicInput {
  /** |U|: occurrences entered in scope and window. */
  readonly universe: number;
  /** The audited subset (all of U, or a seeded sample). */
  readonly audited: readonly AuditedAction[];
  readonly sample: { readonly size: number; readonly seed: string } | null;
  /** True only when every AOC bypass-path kind is disclosed `absent` (then N is known). */
  readonly everyBypassAbsent: boolean;
}

export interface FicResult {
  readonly n: number;
  readonly v: number;
  readonly value: Rational | null;
  readonly reason: 'undefined_n_zero' | null;
  /** N when known, else null. */
  readonly universe: number | null;
  readonly q: Rational | null;
  readonly global_bound: { readonly lower: Rational; readonly upper: Rational } | null;
  readonly global_reason: 'universe_unknown' | 'undefined_n_zero' | null;
  readonly sample: { readonly size: number; readonly seed: string } | null;
  readonly failures: readonly AuditedAction[];
}

export function ficObs(input: FicInput): FicResult {
  const n = input.audited.length;
  const v = input.audited.filter((a) => a.failed.length === 0).length;
  const failures = input.audited.filter((a) => a.failed.length > 0);
  const universe = input.everyBypassAbsent ? input.universe : null;
  const base = { n, v, sample: input.sample, failures, universe };
  if (n === 0) {
    return {
      ...base,
      value: null,
      reason: 'undefined_n_zero',
      q: null,
      global_bound: null,
      global_reason: 'undefined_n_zero',
    };
  }
  const value = rational(v, n);
  if (universe === null || universe < n) {
    return { ...base, value, reason: null, q: null, global_bound: null, global_reason: 'universe_unknown' };
  }
  // OBS-17: q·F ≤ completeness ≤ q·F + (1 − q), with q = n/N: [v/N, (v + N − n)/N].
  return {
    ...base,
    value,
    reason: null,
    q: rational(n, universe),
    global_bound: { lower: rational(v, universe), upper: rational(v + universe - n, universe) },
    global_reason: null,
  };
}

/** A seeded sample of `size` ids: ordered by SHA-256(seed ‖ id), so anyone can redraw it. */
export function seededSample(ids: readonly string[], size: number, seed: string): string[] {
  if (!Number.isSafeInteger(size) || size < 0)
    throw new BatonError('input_invalid', 'sample size must be a non-negative integer');
  return [...ids]
    .map((id) => ({ id, key: sha256(`${seed}\u0000${id}`).toString('hex') }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .slice(0, size)
    .map((x) => x.id)
    .sort();
}

export interface DimensionTally {
  readonly match: number;
  readonly mismatch: number;
  readonly unknown: number;
  readonly d: Rational | null;
  readonly unresolved: boolean;
}

export interface CifResult {
  readonly complete: boolean;
  readonly value: Rational | null;
  readonly unresolved: readonly string[];
  readonly per_dimension: Readonly<Record<string, DimensionTally>>;
  readonly weights_version: string;
  /** OBS-15: stated in every answer. */
  readonly authorizes: false;
}

/** CIF = Σ wᵢdᵢ, dᵢ = mismatchᵢ / (matchᵢ + mismatchᵢ); missing never imputed as 0 (OBS-14). */
export function cif(
  records: readonly ObservationRecord[],
  weights: Weights,
  required: readonly string[],
  weightsVersion: string,
): CifResult {
  const perDimension: Record<string, DimensionTally> = {};
  const unresolved: string[] = [];
  const terms: [bigint, bigint][] = [];
  for (const dim of weights.names) {
    const statuses = records.flatMap((r) =>
      r.invariants.filter((i) => i.dimension === dim).map((i) => i.status),
    );
    const match = statuses.filter((s) => s === 'MATCH').length;
    const mismatch = statuses.filter((s) => s === 'MISMATCH').length;
    const unknown = statuses.filter((s) => s === 'UNKNOWN').length;
    const open = match + mismatch === 0 || (required.includes(dim) && unknown > 0);
    perDimension[dim] = {
      match,
      mismatch,
      unknown,
      d: match + mismatch === 0 ? null : rational(mismatch, match + mismatch),
      unresolved: open,
    };
    if (open) unresolved.push(dim);
    else
      terms.push([
        BigInt(weights.micro[dim] ?? 0) * BigInt(mismatch),
        BigInt(MICRO) * BigInt(match + mismatch),
      ]);
  }
  const complete = unresolved.length === 0;
  const [num, den] = addFractions(terms);
  return {
    complete,
    value: complete ? rational(num, den) : null,
    unresolved,
    per_dimension: perDimension,
    weights_version: weightsVersion,
    authorizes: false,
  };
}

/** B3.7: E_mock = P·(1 − G·R), P, G, R ∈ {0, 1}; always SIMULATED (OBS-24). */
export function eMock(
  p: 0 | 1,
  g: 0 | 1,
  r: 0 | 1,
): { readonly value: 0 | 1; readonly classification: 'SIMULATED' } {
  return { value: p === 1 && !(g === 1 && r === 1) ? 1 : 0, classification: 'SIMULATED' };
}
