/**
 * Coding rules (B3.2, OBS-02, OBS-13): `code(dimension, observed, reference, profile)`.
 * Missing reference evidence, stale or unavailable context, absent calibration ⇒ UNKNOWN with a
 * reason, never MATCH; a change inside the profile's authorized updates ⇒ MATCH
 * `authorized_update`; disagreeing evidence ⇒ UNKNOWN `conflicting_evidence`, both kept.
 */
import type { Invariant } from './model.js';

export interface Observed {
  /** The value observed after the event, or null when it could not be observed. */
  readonly value: string | null;
  /** Other observations of the same value; any disagreement is a conflict, never averaged. */
  readonly others?: readonly string[];
  readonly stale?: boolean;
  readonly calibrated?: boolean;
}

export interface Reference {
  /** A locator of the reference evidence (a hash, an evidence URN). */
  readonly locator: string;
  readonly expected: string;
}

export interface DimensionRule {
  /** Values the profile allows the dimension to change to (OBS-02: permitted updates). */
  readonly authorizedUpdates: readonly string[];
}

export function code(
  dimension: string,
  observed: Observed,
  reference: Reference | null,
  rule: DimensionRule,
): Invariant {
  const unknown = (reason: string): Invariant => ({
    dimension,
    status: 'UNKNOWN',
    reference: reference?.locator ?? null,
    reason,
  });
  if (reference === null) return unknown('no reference evidence');
  if (observed.value === null) return unknown('observation unavailable');
  if (observed.stale === true) return unknown('stale snapshot');
  if (observed.calibrated === false) return unknown('absent calibration');
  const disagreeing = (observed.others ?? []).filter((o) => o !== observed.value);
  if (disagreeing.length > 0) {
    return unknown(`conflicting_evidence: ${observed.value} vs ${disagreeing.join(', ')}`);
  }
  if (observed.value === reference.expected) {
    return { dimension, status: 'MATCH', reference: reference.locator, reason: null };
  }
  if (rule.authorizedUpdates.includes(observed.value)) {
    return { dimension, status: 'MATCH', reference: reference.locator, reason: 'authorized_update' };
  }
  return {
    dimension,
    status: 'MISMATCH',
    reference: reference.locator,
    reason: `expected ${reference.expected}`,
  };
}
