/**
 * Rebinding a superseded Mission's work to its successor (seed §10.1 Table 1: "superseded ⇒
 * suppress and require successor Mission binding"; build spec A2.8, A6 `…/rebind`, A7#24). Pure:
 * the caller locked both views and the item and assessed the successor's view.
 *
 * Never silent and never a way around a stop: only work whose Mission is exactly `superseded` may
 * be rebound (a revoked, suspended or unknown Mission's work stays stopped), the successor must be
 * another Mission of the same issuer and be active and fresh for the item's class, and the answer
 * carries the `rebound` event that names both bindings (docs/harness.md "Rebind").
 */
import { moved, refuse, type Refusal } from './machine.js';
import type { MissionBinding, WorkItemRecord } from './model.js';
import type { Assessment } from './view.js';

/** Held states a rebind applies to (the ones an operator requeue applies to, A2.7). */
const REBINDABLE = ['suppressed', 'handed_off', 'paused'];

export interface RebindInput {
  readonly item: WorkItemRecord;
  /** The predecessor's view state as stored (null: nothing authenticated). */
  readonly predecessorState: string | null;
  readonly successor: MissionBinding;
  /** The successor's view assessed for the item's action class at `now`. */
  readonly successorAssessment: Assessment;
  /** The digest of the successor binding's stop matrix (re-pinned, A3.10). */
  readonly matrixDigest: string;
  readonly now: number;
}

export interface Rebound {
  readonly kind: 'rebound';
  readonly item: WorkItemRecord;
}

function refusal(r: RebindInput): Refusal | undefined {
  const { item, successor: to } = r;
  const from = item.binding;
  if (item.kind === 'subagent_handle')
    return refuse('mission_binding_invalid', 'a sub-agent handle is spawned again under the successor');
  if (from === null) return refuse('work_item_not_dispatchable', 'an unbound item has no Mission to succeed');
  if (!REBINDABLE.includes(item.state))
    return refuse('work_item_not_dispatchable', `a ${item.state} item cannot be rebound`);
  if (r.predecessorState !== 'superseded')
    return refuse('mission_binding_invalid', 'only the work of a superseded Mission can be rebound');
  if (to.mission_origin !== from.mission_origin)
    return refuse('mission_binding_invalid', 'a successor Mission comes from the same issuer');
  if (to.mission_id === from.mission_id)
    return refuse('mission_binding_invalid', 'the successor is another Mission');
  const a = r.successorAssessment;
  if (a.verdict === 'non_active') return refuse('mission_not_active', `the successor is ${a.state}`);
  if (a.verdict !== 'active')
    return refuse('mission_status_unavailable', 'the successor’s state is unknown or stale');
  return undefined;
}

/** suppressed|handed_off|paused → queued under the successor binding; the next dispatch checks. */
export function decideRebind(r: RebindInput): Rebound | Refusal {
  const refused = refusal(r);
  if (refused !== undefined) return refused;
  const next = moved(r.item, 'queued', r.now);
  return {
    kind: 'rebound',
    item: { ...next, binding: r.successor, hold: false, matrixDigest: r.matrixDigest },
  };
}
