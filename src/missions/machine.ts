/**
 * Pure harness transitions (build spec A2.7 item machine, A3.1 resume, A3.6 entry check, A3.7
 * stop propagation, A3.8 retry). No I/O, no clock: `now` and the assessment come in. Every
 * transition returns the item at `version + 1`; the store writes it only if the row is still at
 * `version` (HAR-28: a stop cannot race a resume — one winner per version).
 */
import { behaviourFor, type StopMatrix } from './matrix.js';
import type { EvidenceDraft, HarnessEventType, HarnessReason } from './evidence.js';
import {
  LIVE_ITEM_STATES,
  TAINT_GUARDED,
  type Behaviour,
  type ItemState,
  type MissionRef,
  type StopBehaviour,
  type WorkItemRecord,
} from './model.js';
import type { Assessment } from './view.js';

export type RefusalCode =
  | 'mission_not_active'
  | 'mission_status_unavailable'
  | 'work_item_not_dispatchable'
  | 'successor_binding_required'
  | 'mission_binding_invalid'
  | 'work_item_conflict';

export interface Refusal {
  readonly kind: 'refused';
  readonly code: RefusalCode;
  readonly message: string;
}

/** The code a committed stop answers with (C-A25: committed first, then refused). */
export type StopCode =
  | 'mission_not_active'
  | 'mission_status_unavailable'
  | 'mission_binding_missing'
  | 'work_item_not_dispatchable';

export interface Continue {
  readonly kind: 'continue';
  /** Unchanged (same version) when the item was already running (an entry check). */
  readonly item: WorkItemRecord;
  readonly evidence: EvidenceDraft;
  /** A3.1 step 5: when the next consequential action must check again. */
  readonly recheckAt: number | null;
}

export interface Stop {
  readonly kind: 'stop';
  readonly item: WorkItemRecord;
  readonly behaviour: StopBehaviour;
  readonly evidence: EvidenceDraft;
  readonly code: StopCode;
}

export type Decision = Continue | Stop | Refusal;

export const STOP_STATE: Readonly<Record<StopBehaviour, ItemState>> = {
  suppress: 'suppressed',
  pause: 'paused',
  terminate: 'terminated',
  handoff: 'handed_off',
};

export function isRefusal(x: object): x is Refusal {
  return (x as { kind?: unknown }).kind === 'refused';
}

export const refuse = (code: RefusalCode, message: string): Refusal => ({ kind: 'refused', code, message });

export function missionOf(item: Pick<WorkItemRecord, 'binding'>): MissionRef {
  const b = item.binding;
  if (b === null) return { id: 'unknown', origin: 'unknown' };
  return {
    id: b.mission_id,
    origin: b.mission_origin,
    ...(b.authority_hash !== undefined && { authority_hash: b.authority_hash }),
  };
}

export function moved(item: WorkItemRecord, state: ItemState, now: number): WorkItemRecord {
  return { ...item, state, updatedAt: now, version: item.version + 1 };
}

export interface Observed {
  readonly state: string;
  readonly stateSource: string;
  readonly checkedAt: number | null;
  readonly freshUntil: number | null;
}

export function draft(
  item: WorkItemRecord,
  next: WorkItemRecord,
  o: Observed,
  eventType: HarnessEventType,
  decision: Behaviour,
  reason: HarnessReason,
): EvidenceDraft {
  return {
    eventType,
    mission: missionOf(item),
    sessionId: item.sessionId,
    workItem: item.id,
    actor: item.handle?.actor.client_id ?? null,
    state: o.state,
    prior: item.state,
    resulting: next.state,
    stateSource: o.stateSource,
    checkedAt: o.checkedAt,
    expiresAt: o.freshUntil,
    decision,
    reason,
  };
}

function stopEventType(item: WorkItemRecord, a: Assessment | undefined): HarnessEventType {
  if (item.kind === 'subagent_handle') return 'subagent_stopped';
  if (a !== undefined && (a.verdict === 'stale' || a.verdict === 'unknown')) return 'mission_state_stale';
  return item.state === 'queued' ? 'queue_suppressed' : 'resume_suppressed';
}

/** Apply a stop behaviour to an item (no-op answer is `undefined` for items a stop cannot move). */
export function decideStop(
  item: WorkItemRecord,
  behaviour: StopBehaviour,
  reason: HarnessReason,
  o: Observed,
  now: number,
): Stop | undefined {
  const live = LIVE_ITEM_STATES.includes(item.state);
  // Held items (suppressed, handed off) only move further to terminated; final ones never move.
  const holdable = item.state === 'suppressed' || item.state === 'handed_off';
  if (!live && !(holdable && behaviour === 'terminate')) return undefined;
  const next = moved(item, STOP_STATE[behaviour], now);
  const type = stopEventType(item, undefined);
  const code: StopCode =
    reason === 'mission_state_stale' || reason === 'mission_state_unknown'
      ? 'mission_status_unavailable'
      : 'mission_not_active';
  return {
    kind: 'stop',
    item: next,
    behaviour,
    evidence: draft(item, next, o, type, behaviour, reason),
    code,
  };
}

/**
 * An operator's stop (reason `operator_stop`): `decideStop`, and the item is held (HAR-08) so
 * that only an operator requeue or rebind lifts it — an executor's resume hands it off
 * (`orchestrator_hold`) and a retry of it is refused (`decideRetry`), whichever behaviour the
 * operator chose.
 */
export function decideOperatorStop(
  item: WorkItemRecord,
  behaviour: StopBehaviour,
  o: Observed,
  now: number,
): Stop | undefined {
  const s = decideStop(item, behaviour, 'operator_stop', o, now);
  return s === undefined ? undefined : { ...s, item: { ...s.item, hold: true } };
}

export interface CheckInput {
  readonly item: WorkItemRecord;
  /** undefined only when the item has no binding. */
  readonly assessment: Assessment | undefined;
  readonly matrix: StopMatrix;
  readonly now: number;
  /** An entered occurrence of this item is unresolved (HAR-25 in-flight handoff). */
  readonly inFlight: boolean;
  /** `dispatch`: queued|paused → running (A3.1 step 6). `enter`: the item must be running (A3.6). */
  readonly mode: 'dispatch' | 'enter';
  /** The item's session is tainted (HAR-29): egress classes are suppressed, never continued. */
  readonly tainted?: boolean;
  /**
   * HAR-21/23: the worst assessment of the parent Missions the item's work depends on
   * (`dependencies`); undefined when it depends on none. Anything but `active` stops the item as
   * its own Mission's state would (fail closed: an unknown or stale parent pauses it).
   */
  readonly parent?: ParentAssessment;
}

/** A parent Mission's assessment and which Mission it is (absent: the chain is ambiguous). */
export type ParentAssessment = Assessment & {
  readonly mission?: { readonly id: string; readonly origin: string };
};

const UNKNOWN: Observed = { state: 'unknown', stateSource: 'harness', checkedAt: null, freshUntil: null };

function preconditions(c: CheckInput): Decision | undefined {
  const { item, now } = c;
  const allowed: readonly ItemState[] = c.mode === 'dispatch' ? ['queued', 'paused'] : ['running'];
  if (!allowed.includes(item.state)) {
    return refuse(
      'work_item_not_dispatchable',
      `a ${item.state} item cannot ${c.mode === 'dispatch' ? 'be dispatched' : 'enter a provider'}`,
    );
  }
  if (item.binding === null || c.assessment === undefined) {
    // A3.1 step 2 / HAR-07: committed evidence, then 409 mission_binding_missing.
    const next = moved(item, 'suppressed', now);
    const evidence = draft(item, next, UNKNOWN, 'resume_suppressed', 'suppress', 'missing_mission_binding');
    return { kind: 'stop', item: next, behaviour: 'suppress', evidence, code: 'mission_binding_missing' };
  }
  const a = c.assessment;
  if (item.hold) {
    // HAR-08: an orchestrator hold is never resumed, even if active.
    const next = moved(item, 'handed_off', now);
    const evidence = draft(item, next, a, stopEventType(item, a), 'handoff', 'orchestrator_hold');
    return { kind: 'stop', item: next, behaviour: 'handoff', evidence, code: 'work_item_not_dispatchable' };
  }
  if (item.expiresAt !== null && item.expiresAt <= now) {
    // HAR-15: suppressed even if the Mission is active.
    const next = moved(item, 'suppressed', now);
    const evidence = draft(item, next, a, 'queue_suppressed', 'suppress', 'queue_item_expired');
    return { kind: 'stop', item: next, behaviour: 'suppress', evidence, code: 'work_item_not_dispatchable' };
  }
  if (c.mode === 'dispatch' && item.notBefore !== null && item.notBefore > now) {
    return refuse('work_item_not_dispatchable', 'the item is not due yet (not_before)');
  }
  return undefined;
}

/** A3.1 steps 2, 4, 5, 6 (the store did step 1; step 3's fetch happens outside the transaction). */
export function decideCheck(c: CheckInput): Decision {
  const pre = preconditions(c);
  if (pre !== undefined) return pre;
  const a = c.assessment as Assessment;
  const { item, now } = c;
  if (a.verdict !== 'active') {
    const behaviour = behaviourFor(c.matrix, a.row ?? 'unknown', item.actionClass, c.inFlight);
    const next = moved(item, STOP_STATE[behaviour], now);
    const evidence = draft(item, next, a, stopEventType(item, a), behaviour, a.reason);
    const code: StopCode = a.verdict === 'non_active' ? 'mission_not_active' : 'mission_status_unavailable';
    return { kind: 'stop', item: next, behaviour, evidence, code };
  }
  const p = c.parent;
  if (p !== undefined && p.verdict !== 'active') {
    // HAR-21 / seed §9: dependent child work never runs while its parent Mission is non-active,
    // unknown or stale — at dispatch, resume, retry dispatch and provider entry alike.
    const behaviour = behaviourFor(c.matrix, p.row ?? 'unknown', item.actionClass, c.inFlight);
    const next = moved(item, STOP_STATE[behaviour], now);
    // The record describes the item's own Mission as observed (active here) and names the parent
    // as the cause (seed §11: one Mission per record); an ambiguous chain names none.
    const own = draft(item, next, a, stopEventType(item, p), behaviour, 'parent_mission_not_active');
    const cause = p.mission === undefined ? undefined : { ...p.mission, state: p.state };
    const evidence = cause === undefined ? own : { ...own, cause };
    const code: StopCode = p.verdict === 'non_active' ? 'mission_not_active' : 'mission_status_unavailable';
    return { kind: 'stop', item: next, behaviour, evidence, code };
  }
  if (c.tainted === true && TAINT_GUARDED.includes(item.actionClass)) {
    // HAR-29 / draft §session-taint: untrusted content never drives egress on its own; Baton has
    // no action-bound approval (C-A22), so the authority is downgraded for the session.
    const stopped = moved(item, 'suppressed', now);
    const evidence = draft(item, stopped, a, stopEventType(item, a), 'suppress', 'session_tainted');
    return {
      kind: 'stop',
      item: stopped,
      behaviour: 'suppress',
      evidence,
      code: 'work_item_not_dispatchable',
    };
  }
  const next = c.mode === 'dispatch' ? moved(item, 'running', now) : item;
  const evidence = draft(item, next, a, 'resume_allowed', 'continue', 'mission_active');
  return { kind: 'continue', item: next, evidence, recheckAt: a.freshUntil };
}

/** running → done. */
export function decideComplete(item: WorkItemRecord, now: number): WorkItemRecord | Refusal {
  if (item.state !== 'running')
    return refuse('work_item_not_dispatchable', `a ${item.state} item cannot complete`);
  return moved(item, 'done', now);
}

/** Operator requeue: suppressed|handed_off|paused → queued; the next dispatch checks (A2.7). */
export function decideRequeue(
  item: WorkItemRecord,
  observedState: string | null,
  now: number,
): WorkItemRecord | Refusal {
  if (!['suppressed', 'handed_off', 'paused'].includes(item.state)) {
    return refuse('work_item_not_dispatchable', `a ${item.state} item cannot be requeued`);
  }
  // A2.8: superseded needs a successor binding before requeue (A7 #24).
  if (observedState === 'superseded') {
    return refuse(
      'successor_binding_required',
      'the Mission was superseded: rebind the item to its successor',
    );
  }
  return moved(item, 'queued', now);
}

/**
 * Stopped states a retry may follow only after an operator requeue (seed §10, HAR-08): `terminate`
 * ends the task graph and `handoff` escalates to a human "without performing further governed
 * actions", whoever decided them (operator, matrix or orchestrator hold).
 */
const RETRY_REFUSED: readonly ItemState[] = ['terminated', 'handed_off'];

/**
 * A3.8: a retry is a new item, same binding and idempotency key, which resolves to the same occurrence.
 * It may follow a completion, or a Mission-caused `suppress`/`pause` (the copy is checked at its
 * dispatch, HAR-12). It is refused (`work_item_not_dispatchable`, nothing written) after a
 * terminate or handoff, and for an item held by an operator or orchestrator (`hold`, set by every
 * operator stop): a retry must not launder a stop that only an operator may lift (HAR-08).
 */
export function decideRetry(original: WorkItemRecord, id: string, now: number): WorkItemRecord | Refusal {
  if (original.binding === null)
    return refuse('work_item_not_dispatchable', 'an unbound item cannot be retried');
  if (original.idempotencyKey === null) {
    return refuse('work_item_conflict', 'a retry needs the original idempotency_key (C-A28)');
  }
  if (original.state === 'running' || original.state === 'queued') {
    return refuse(
      'work_item_conflict',
      `the original is ${original.state}; a retry follows a stop or completion`,
    );
  }
  if (original.hold || RETRY_REFUSED.includes(original.state)) {
    return refuse(
      'work_item_not_dispatchable',
      `a ${original.hold ? 'held' : original.state} item is not retried: an operator requeue lifts its stop (HAR-08)`,
    );
  }
  return {
    ...original,
    id,
    retryOf: original.id,
    state: 'queued',
    hold: false,
    claimedGeneration: null,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
}

/**
 * HAR-21/23 (seed §9, §9.1): the parent Missions an item's work depends on, other than its own,
 * read from the item and its ancestors (`chain`, the item first, then its parent item, …). A
 * sub-agent handle depends on its `parent_mission` unless it is governed by an independent
 * Mission, and always on the declared `parent` of its child Mission (a Child Mission of the stopped
 * Mission never counts as independent, HAR-23); the walk ends at an independent Mission with no
 * declared parent, whose authority does not depend on the ancestors. Pure.
 */
export function dependencies(chain: readonly WorkItemRecord[]): MissionRef[] {
  const own = chain[0]?.binding ?? null;
  const out = new Map<string, MissionRef>();
  const add = (m: MissionRef | { id: string; origin: string }): void => {
    if (own !== null && m.id === own.mission_id && m.origin === own.mission_origin) return;
    const key = `${m.origin}#${m.id}`;
    if (!out.has(key)) out.set(key, m);
  };
  for (const i of chain) {
    const h = i.handle;
    if (h === null) continue;
    const child = h.governed_by.mission;
    if (child?.parent !== undefined) add(child.parent);
    const independent = h.governed_by.kind === 'independent_mission' && child !== undefined;
    if (!independent) add(h.parent_mission);
    else if (child.parent === undefined) break;
  }
  return [...out.values()];
}

// --- stop propagation (A3.7, HAR-21..23) ----------------------------------------------------------

export interface PropagationTarget {
  readonly item: WorkItemRecord;
  /** `continue`: an independent child Mission that is active and fresh (HAR-21). */
  readonly action: 'stop' | 'continue';
  readonly reason: HarnessReason;
}

const sameMission = (a: { id: string; origin: string }, b: { id: string; origin: string }): boolean =>
  a.id === b.id && a.origin === b.origin;

/** Does the chain of `parent` links from `m` reach `stopped`? Unknown links are followed as far as known. */
function chainReaches(
  m: { id: string; origin: string; parent?: { id: string; origin: string } },
  stopped: MissionRef,
  parentOf: (m: { id: string; origin: string }) => { id: string; origin: string } | undefined,
): boolean {
  const seen = new Set<string>();
  let cur: { id: string; origin: string } | undefined = m.parent ?? parentOf(m);
  while (cur !== undefined) {
    if (sameMission(cur, stopped)) return true;
    const key = `${cur.origin}#${cur.id}`;
    if (seen.has(key)) return true; // a cycle is ambiguous: fail closed (HAR-28)
    seen.add(key);
    cur = parentOf(cur);
  }
  return false;
}

/**
 * The items a stop of `stopped` reaches: the Mission's live items, sub-agent handles whose parent
 * is it (a child Mission whose ancestry reaches it never counts as independent, HAR-23), and
 * descendants of any target (HAR-04: children copy or narrow the binding) — reached through a
 * finished item too (a handle that is already done), which is itself never a target.
 */
export function propagationTargets(
  stopped: MissionRef,
  items: readonly WorkItemRecord[],
  independentActive: (m: MissionRef) => boolean,
): PropagationTarget[] {
  const parents = new Map<string, { id: string; origin: string }>();
  for (const i of items) {
    const m = i.handle?.governed_by.mission;
    if (m?.parent !== undefined) parents.set(`${m.origin}#${m.id}`, m.parent);
  }
  const parentOf = (m: { id: string; origin: string }) => parents.get(`${m.origin}#${m.id}`);
  const out = new Map<string, PropagationTarget>();
  for (const i of items) {
    const h = i.handle;
    if (h !== null && sameMission(h.parent_mission, stopped)) {
      const g = h.governed_by;
      const child = g.mission;
      const independent =
        g.kind === 'independent_mission' && child !== undefined && !chainReaches(child, stopped, parentOf);
      out.set(
        i.id,
        independent && independentActive(child)
          ? { item: i, action: 'continue', reason: 'independent_mission_active' }
          : { item: i, action: 'stop', reason: 'parent_mission_not_active' },
      );
    } else if (
      i.binding !== null &&
      i.binding.mission_id === stopped.id &&
      i.binding.mission_origin === stopped.origin
    ) {
      out.set(i.id, { item: i, action: 'stop', reason: 'mission_not_active' });
    }
  }
  // Descendants of stopped targets stop too, to a fixpoint.
  for (let grew = true; grew;) {
    grew = false;
    for (const i of items) {
      if (out.has(i.id) || i.parentId === null) continue;
      const p = out.get(i.parentId);
      if (p?.action === 'stop') {
        out.set(i.id, { item: i, action: 'stop', reason: 'parent_mission_not_active' });
        grew = true;
      }
    }
  }
  // A finished item (done, terminated) is decided above only so that the stop passes through it to
  // its descendants (seed §9: a handle's descendants by parent_id, even once the handle is done);
  // it is never a target itself.
  return [...out.values()].filter((t) => targetable(t.item));
}

const targetable = (i: WorkItemRecord): boolean =>
  LIVE_ITEM_STATES.includes(i.state) || i.state === 'suppressed' || i.state === 'handed_off';
