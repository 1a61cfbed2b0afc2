/**
 * What a correction may change (OBS-08 ¶19, draft ¶39, ¶107). A correction appends new evidence and
 * identifies its predecessor "rather than overwrite its historical result": it restates the same
 * observation — same `scope_id`, `observed_at` and `order`, and its `event_type` or `correction` —
 * so it can neither move a record into another scope (¶107) nor re-date or re-type it, and it carries at least one evidence
 * item its predecessor did not. A re-analysis of the same evidence (¶39: derived labels name their
 * analysis revision; Baton's projector restating its own records under a new revision) is the one
 * correction without a new evidence item: the predecessor names an analysis revision and the
 * correction names another. Pure: the store reads the predecessor, this judges it.
 */
import { canonicalize } from '../core/jcs.js';
import type { ObservationRecord } from './model.js';
import { refuse } from './refusal.js';

const same = (a: unknown, b: unknown): boolean => canonicalize(a) === canonicalize(b);

/** Refuses (400 `observation_record_invalid`, rule `correction_unbound`) a correction that rewrites history. */
export function checkCorrection(predecessor: ObservationRecord, correction: ObservationRecord): void {
  // The binding's event type `correction` (build spec B2) may name what a correction is; any
  // other type is its predecessor's.
  if (correction.event_type !== 'correction' && correction.event_type !== predecessor.event_type)
    refuse('correction_unbound', '$.event_type', `must equal its predecessor's or be "correction"`);
  for (const name of ['scope_id', 'observed_at', 'order'] as const) {
    if (!same(predecessor[name], correction[name]))
      refuse('correction_unbound', `$.${name}`, `must equal its predecessor's (a correction restates it)`);
  }
  const before = new Set(predecessor.evidence.map((e) => canonicalize(e)));
  if (correction.evidence.some((e) => !before.has(canonicalize(e)))) return;
  const revision = predecessor.analysis_revision;
  if (revision !== undefined && correction.analysis_revision !== revision) return;
  refuse(
    'correction_unbound',
    '$.evidence',
    'must hold at least one evidence item its predecessor did not (or re-analyse it under another analysis_revision)',
  );
}
