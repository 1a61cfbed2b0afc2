/**
 * How two readings of one attempt relate (AOC-CASE-009): which outcome ranks further, what effect a
 * mapped status claims, and which pairs cannot both be true. One table for the two places that
 * judge it: a new answer against the occurrence's state (observe.ts) and the items of one answer
 * against each other (assess.ts).
 */
import type { Effect, Interpretation, Outcome } from '../model.js';
import type { StatusMapping } from '../profile-types.js';

/** Outcomes only rank up: `accepted` is on the way to any terminal reading. */
export const OUTCOME_RANK: Readonly<Record<Outcome, number>> = {
  unknown: 0,
  accepted: 1,
  success: 2,
  not_accepted: 2,
  final_failure: 2,
};

/** The effect a mapped status claims: a success occurred; a no-effect reading confirms none. */
export function effectClaim(m: StatusMapping): Effect {
  if (m.interpretation === 'success') return 'occurred';
  return m.establishesNoEffect ? 'none_confirmed' : 'unresolved';
}

/** Pairs of interpretations that cannot both be true of one attempt. */
export function interpretationsContradict(current: Outcome, next: Interpretation): boolean {
  if (current === 'unknown' || current === next) return false;
  if (current === 'accepted') return next === 'not_accepted';
  if (next === 'accepted') return current === 'not_accepted';
  return true; // two different terminal interpretations
}

/** Two effects both claimed, and different. */
export function effectsDisagree(a: Effect, b: Effect): boolean {
  return a !== 'unresolved' && b !== 'unresolved' && a !== b;
}

/** Two mapped readings that cannot both be true of one attempt. */
export function readingsContradict(a: StatusMapping, b: StatusMapping): boolean {
  return (
    interpretationsContradict(a.interpretation, b.interpretation) ||
    effectsDisagree(effectClaim(a), effectClaim(b))
  );
}
