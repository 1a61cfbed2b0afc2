/**
 * The common answer of provider entry's Mission check (A3.6), decided from the few columns it
 * needs (issue 11 §8): an item that is running, unheld, unexpired, bound, not in a tainted
 * session, under an active and fresh Mission continues, and `mission_checked` says so. Every other
 * case is left to the full check (`decideCheck`, mode `enter`), which reads the whole item and
 * view and commits the stop: `entryContinues` answers `continue` exactly when `decideCheck` would
 * (test/missions/entry-check.test.ts compares the two over every combination). Pure: no I/O.
 */
import type { JsonObject } from '../core/json.js';
import { jcsString } from '../core/jcs.js';
import { formatRfc3339 } from '../core/time.js';
import { missionOf } from './machine.js';
import { reportedState, TAINT_GUARDED, type WorkItemRecord } from './model.js';
import { assess, type AssessedView, type Assessment, type StalenessBounds } from './view.js';

/** What the continue decision reads of the Mission view. */
export type EntryViewFacts = AssessedView;

/** What the continue decision reads of the work item. */
export type EntryItemFacts = Pick<
  WorkItemRecord,
  'id' | 'state' | 'hold' | 'expiresAt' | 'sessionId' | 'actionClass' | 'binding' | 'parentId' | 'handle'
>;

/** The gate's view and item (locked) and the item's session taint, read in one statement. */
export interface EntryFacts {
  readonly view: EntryViewFacts | undefined;
  readonly item: EntryItemFacts | undefined;
  /** The item's session is tainted (false without a session: HAR-29 applies to sessions only). */
  readonly sessionTainted: boolean;
}

/**
 * The `mission_checked` body of an entry that proceeds, or undefined when the full check must
 * decide. The conditions are `decideCheck`'s (mode `enter`) for `continue`, in its order: item
 * running, bound, not held (HAR-08), not expired (HAR-15), not child work (no parent item, no
 * sub-agent handle: its parent Mission chain is the full check's, HAR-21), Mission active and fresh
 * for the class (A3.5), no taint on an egress class (HAR-29); and its stop policy names a matrix `known` to be
 * registered (the full check refuses an unknown one before it decides: fail closed).
 */
export function entryContinues(
  f: EntryFacts,
  now: number,
  bounds: StalenessBounds,
  known: (stopPolicy: string) => boolean,
): JsonObject | undefined {
  const a = continuing(f, now, bounds, known);
  return a === undefined || f.item === undefined ? undefined : missionChecked(f.item, a, 'continue');
}

/**
 * `entryContinues` with the body's JCS text beside it, as provider entry appends it: assembled by
 * `missionCheckedText`, so the common entry serializes no object generically (issue 11 §8).
 */
export function entryContinuesWithText(
  f: EntryFacts,
  now: number,
  bounds: StalenessBounds,
  known: (stopPolicy: string) => boolean,
): { readonly body: JsonObject; readonly text: string } | undefined {
  const a = continuing(f, now, bounds, known);
  if (a === undefined || f.item === undefined) return undefined;
  return { body: missionChecked(f.item, a, 'continue'), text: missionCheckedText(f.item, a, 'continue') };
}

/** The active assessment an entry continues under, or undefined when the full check must decide. */
function continuing(
  f: EntryFacts,
  now: number,
  bounds: StalenessBounds,
  known: (stopPolicy: string) => boolean,
): Assessment | undefined {
  const { item } = f;
  if (item === undefined || item.binding === null || item.state !== 'running' || item.hold) return undefined;
  if (item.expiresAt !== null && item.expiresAt <= now) return undefined;
  // HAR-21/23: child work may depend on a parent Mission; only the full check reads that chain.
  if (item.parentId !== null || item.handle !== null) return undefined;
  if (f.sessionTainted && item.sessionId !== null && TAINT_GUARDED.includes(item.actionClass))
    return undefined;
  if (!known(item.binding.stop_policy)) return undefined;
  const a = assess(f.view, item.binding.authority_hash, item.actionClass, now, bounds);
  return a.verdict === 'active' ? a : undefined;
}

/**
 * RFC 3339 texts of recent instants. A view's `checked_at` and reliance bound stay the same for
 * every entry until the view moves, and formatting a Date costs more than the rest of the
 * continue decision (issue 11 §8); bounded, so a long run keeps only recent instants.
 */
const formatted = new Map<number, string>();

function rfc3339(ms: number): string {
  let text = formatted.get(ms);
  if (text === undefined) {
    if (formatted.size >= 64) formatted.clear();
    text = formatRfc3339(ms);
    formatted.set(ms, text);
  }
  return text;
}

/** A2.6-style `freshness`: when the relied-on state was checked and until when it may be relied on. */
export function freshness(a: Assessment | undefined): { checked_at: string; expires_at: string } | null {
  if (a?.checkedAt === null || a?.checkedAt === undefined || a.freshUntil === null) return null;
  return { checked_at: rfc3339(a.checkedAt), expires_at: rfc3339(a.freshUntil) };
}

/** The body of the occurrence's `mission_checked` event (A3.6), for every decision. */
export function missionChecked(
  item: Pick<WorkItemRecord, 'id' | 'actionClass' | 'binding'>,
  a: Assessment | undefined,
  decision: string,
  extra?: JsonObject,
): JsonObject {
  // One literal, spread only when there is something to add: a literal with a spread is built
  // property by property at run time on every entry (issue 11 §8).
  const body: JsonObject = {
    mission: missionOf(item) as unknown as JsonObject,
    work_item: item.id,
    action_class: item.actionClass,
    state: reportedState(a?.state),
    state_source: a?.stateSource ?? 'harness',
    freshness: freshness(a),
    decision,
  };
  return extra === undefined ? body : { ...body, ...extra };
}

/**
 * The JCS text (RFC 8785) of `missionChecked(item, a, decision)` with no extra members, assembled
 * from its strings in the members' sorted order — action_class, decision, freshness, mission
 * (authority_hash, id, origin), state, state_source, work_item — instead of a generic walk and
 * sort, which cost more than the rest of the common entry's check (issue 11 §8).
 * test/missions/entry-check.test.ts holds it to `canonicalize` of the body.
 */
export function missionCheckedText(
  item: Pick<WorkItemRecord, 'id' | 'actionClass' | 'binding'>,
  a: Assessment | undefined,
  decision: string,
): string {
  const f = freshness(a);
  const fresh =
    f === null
      ? 'null'
      : `{"checked_at":${jcsString(f.checked_at, '$.freshness.checked_at')},"expires_at":${jcsString(f.expires_at, '$.freshness.expires_at')}}`;
  return `{"action_class":${jcsString(item.actionClass, '$.action_class')},"decision":${jcsString(decision, '$.decision')},"freshness":${fresh},"mission":${missionText(item)},"state":${jcsString(reportedState(a?.state), '$.state')},"state_source":${jcsString(a?.stateSource ?? 'harness', '$.state_source')},"work_item":${jcsString(item.id, '$.work_item')}}`;
}

/**
 * The `mission` member's JCS text, kept per binding object: the store hands every entry of a
 * Mission's items the same frozen binding (missions-entry-facts.ts), so its text is assembled
 * once, not per entry. A WeakMap: a binding no longer used takes its text with it.
 */
const missionTexts = new WeakMap<object, string>();

function missionText(item: Pick<WorkItemRecord, 'binding'>): string {
  const cached = item.binding === null ? undefined : missionTexts.get(item.binding);
  if (cached !== undefined) return cached;
  const m = missionOf(item);
  const hash =
    m.authority_hash === undefined
      ? ''
      : `"authority_hash":${jcsString(m.authority_hash, '$.mission.authority_hash')},`;
  const text = `{${hash}"id":${jcsString(m.id, '$.mission.id')},"origin":${jcsString(m.origin, '$.mission.origin')}}`;
  if (item.binding !== null && Object.isFrozen(item.binding)) missionTexts.set(item.binding, text);
  return text;
}
