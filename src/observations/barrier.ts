/**
 * Revocation barrier coding (B3.4, OBS-20): a bound occurrence's entry time t_e (Baton's clock)
 * against the Mission's `committed_at` t_r (the issuer's clock). With u = 30 s + the recorded
 * uncertainty: t_e < t_r − u ⇒ MATCH; t_e > t_r + u ⇒ MISMATCH; otherwise precedence is
 * undecidable and the authority invariant is UNKNOWN `timing_ambiguous`. Baton claims admission
 * fencing only, never a computation or effective stop. The records themselves need the missions
 * context and are not written yet; this is the pure rule they will use.
 */
import type { Invariant } from './model.js';

export const BARRIER_BASE_UNCERTAINTY_MS = 30_000;

export interface BarrierFacts {
  readonly enteredAt: number;
  readonly committedAt: number;
  /** Uncertainty recorded for the two clocks, in ms (0 when none is known beyond the base). */
  readonly recordedUncertaintyMs: number;
  /** Locator of the evidence both times came from. */
  readonly reference: string;
}

export function codeBarrier(f: BarrierFacts): Invariant {
  const u = BARRIER_BASE_UNCERTAINTY_MS + Math.max(0, f.recordedUncertaintyMs);
  if (f.enteredAt < f.committedAt - u) {
    return {
      dimension: 'authority',
      status: 'MATCH',
      reference: f.reference,
      reason: 'entered before the barrier',
    };
  }
  if (f.enteredAt > f.committedAt + u) {
    return {
      dimension: 'authority',
      status: 'MISMATCH',
      reference: f.reference,
      reason: 'entered after the barrier',
    };
  }
  return { dimension: 'authority', status: 'UNKNOWN', reference: f.reference, reason: 'timing_ambiguous' };
}
