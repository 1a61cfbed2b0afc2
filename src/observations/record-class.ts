/**
 * A record's verification class (OBS-06 ¶17): the one definition CIF (`decidesOnStatedEvidence`)
 * and the report (`records.by_verification`, its labels) both read, so a record is SIMULATED
 * everywhere or nowhere.
 */
import { VERIFICATION_CLASSES, type ObservationRecord, type VerificationClass } from './model.js';

/** Weakest first (OBS-06); a class is never upgraded by the company it keeps. */
const rank = (c: VerificationClass): number => VERIFICATION_CLASSES.indexOf(c);
/** No class at all is nothing observed: NOT_RUN (OBS-06), never observed evidence. */
export const weakest = (classes: readonly VerificationClass[]): VerificationClass =>
  classes.length === 0 ? 'NOT_RUN' : classes.reduce((a, b) => (rank(b) < rank(a) ? b : a));

/**
 * A record's class: its own `classification` when stated, capped by its weakest evidence item; a
 * record without evidence observed nothing (NOT_RUN).
 */
export function recordClass(r: ObservationRecord): VerificationClass {
  if (r.evidence.length === 0) return 'NOT_RUN';
  const evidence = weakest(r.evidence.map((e) => e.verification));
  return r.classification === undefined ? evidence : weakest([r.classification, evidence]);
}
