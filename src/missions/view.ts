/**
 * The stored mission view (build spec A3.3 precedence, A3.5 staleness) as pure functions. Only a
 * verified Status answer or a verified lifecycle SET moves a view (C-A29); both arrive as the
 * objects of ./verified.ts. Terminal from any authenticated source is sticky; a SET applies only if
 * its `version` is above the last applied one; a Status answer may lift a non-active SET only if
 * it was issued after that SET was committed, and a view resting on a non-active Status answer takes
 * no non-terminal SET committed before it; everything else may move toward non-active.
 */
import { parseRfc3339 } from '../core/time.js';
import {
  isActive,
  isTerminal,
  reportedState,
  rowOf,
  type ActionClass,
  type MatrixRow,
  type MissionViewRecord,
} from './model.js';
import type { VerifiedMissionSignal, VerifiedMissionStatus } from './verified.js';

export type ViewChange =
  | { readonly applied: true; readonly view: MissionViewRecord; readonly gap: boolean }
  | {
      readonly applied: false;
      readonly reason:
        | 'terminal_sticky'
        | 'version_not_newer'
        | 'status_older_than_signal'
        | 'status_older_than_view'
        | 'signal_older_than_status';
    };

export function emptyView(origin: string, missionId: string, now: number): MissionViewRecord {
  return {
    origin,
    missionId,
    state: null,
    stateSource: null,
    authorityHash: null,
    signalVersion: 0,
    lastSignalJti: null,
    nonActiveCommittedAt: null,
    statusIssuedAt: null,
    checkedAt: null,
    freshUntil: null,
    missionExpiry: null,
    updatedAt: now,
    version: 0,
  };
}

/** Bounds (A3.5, C-A8), seconds; all capped by the issuer's `mission_max_stale_seconds`. */
export interface StalenessBounds {
  readonly readSeconds: number;
  readonly writeSeconds: number;
  /** High-consequence classes: a Status answer at most this old (0 s reuse ⇒ ~fetched now). */
  readonly highConsequenceSeconds: number;
  readonly maxStaleSeconds: number;
}

export const DEFAULT_BOUNDS: StalenessBounds = {
  readSeconds: 900,
  writeSeconds: 300,
  highConsequenceSeconds: 5,
  maxStaleSeconds: 60,
};

export function classBoundSeconds(b: StalenessBounds, c: ActionClass): number {
  const own =
    c === 'non_consequential' || c === 'consequential_read'
      ? b.readSeconds
      : c === 'consequential_write'
        ? b.writeSeconds
        : b.highConsequenceSeconds;
  return Math.min(own, b.maxStaleSeconds);
}

export function applyStatus(view: MissionViewRecord, s: VerifiedMissionStatus, now: number): ViewChange {
  if (isTerminal(view.state)) return { applied: false, reason: 'terminal_sticky' };
  const iatMs = s.issuedAt * 1000;
  // MSG-02 / seed §13.4: an answer issued before the one the view rests on never replaces it (two
  // refreshes can land out of order). `iat` has one-second grain, so an answer issued in the same
  // second may only keep or lower the state: a tie never lifts toward active (HAR-28: fail closed).
  const last = view.statusIssuedAt;
  if (last !== null) {
    if (iatMs < last) return { applied: false, reason: 'status_older_than_view' };
    if (iatMs === last && isActive(s.state) && !isActive(view.state))
      return { applied: false, reason: 'status_older_than_view' };
  }
  // A3.3: lifting a non-active SET needs a Status issued after that SET was committed.
  if (isActive(s.state) && !isActive(view.state) && view.nonActiveCommittedAt !== null) {
    if (!(iatMs > view.nonActiveCommittedAt)) return { applied: false, reason: 'status_older_than_signal' };
  }
  const next: MissionViewRecord = {
    ...view,
    state: s.state,
    stateSource: 'status',
    // MCO-02: a known authority_hash is never cleared by an answer without one (the verifier
    // refuses such answers; kept here too so the A3.2 step 7 check cannot be switched off).
    authorityHash: s.authorityHash ?? view.authorityHash,
    statusIssuedAt: iatMs,
    checkedAt: parseRfc3339(s.checkedAt),
    freshUntil: parseRfc3339(s.freshUntil),
    missionExpiry: s.missionExpiry === null ? view.missionExpiry : parseRfc3339(s.missionExpiry),
    updatedAt: now,
    version: view.version + 1,
  };
  return { applied: true, view: next, gap: false };
}

/**
 * How long an `active` signal is relied on without another event (A3.5, MSG-03, the Signals draft's
 * "Missed Events Are Not Fail-Open"): Baton's bound, or the verifying pin's `max_stale_seconds` when
 * shorter, counted from the SET's `iat` — a SET delivered late is not fresh for a whole bound more
 * — or from `now` should the issuer's clock be ahead.
 */
export function signalLiveUntil(s: VerifiedMissionSignal, now: number, b: StalenessBounds): number {
  const bound = Math.min(b.maxStaleSeconds, s.relianceSeconds ?? b.maxStaleSeconds);
  return Math.min(now, s.issuedAt * 1000) + bound * 1000;
}

/**
 * A3.3 the other way round: a view resting on a non-active Status answer (or left unknown by a
 * refused one) takes no SET committed before that answer was issued, unless it is terminal. SET
 * versions order SETs among themselves, but a Status answer has none: a delayed or redelivered SET
 * (v3 `active`) arriving after a Status answer that already reflects a later suspension (v4, its
 * own SET not here yet) would otherwise bring the Mission back with no newer authenticated state
 * (MSG-02, HAR-10 "ordering cannot be verified") — directly, or by way of an even older
 * non-active SET (v2) taken first. Ignoring an older non-terminal SET loses nothing: the view is
 * already non-active, on a newer source. Only a SET committed before the answer's `iat` second is
 * known to be older; one committed within that second is taken as the version rule says (the
 * issuer's whole-second clocks cannot order them, and refusing it would stall a prompt resume).
 */
function signalOlderThanStatus(view: MissionViewRecord, committedMs: number): boolean {
  if (isActive(view.state) || view.stateSource === 'signal' || view.statusIssuedAt === null) return false;
  return committedMs < view.statusIssuedAt;
}

/** `liveUntil`: `signalLiveUntil`, how long the signal source counts as fresh without another event. */
export function applySignal(
  view: MissionViewRecord,
  s: VerifiedMissionSignal,
  now: number,
  liveUntil: number,
): ViewChange {
  if (isTerminal(view.state)) return { applied: false, reason: 'terminal_sticky' };
  if (!(s.version > view.signalVersion)) return { applied: false, reason: 'version_not_newer' };
  const committed = parseRfc3339(s.committedAt);
  if (!isTerminal(s.state) && signalOlderThanStatus(view, committed)) {
    return { applied: false, reason: 'signal_older_than_status' };
  }
  const next: MissionViewRecord = {
    ...view,
    state: s.state,
    stateSource: 'signal',
    signalVersion: s.version,
    lastSignalJti: s.jti,
    nonActiveCommittedAt: isActive(s.state) ? view.nonActiveCommittedAt : committed,
    checkedAt: now,
    freshUntil: isActive(s.state) ? liveUntil : now,
    updatedAt: now,
    version: view.version + 1,
  };
  return { applied: true, view: next, gap: s.version > view.signalVersion + 1 };
}

/** What a check at `now` concludes for one action class (A3.1 steps 3–5). */
export interface Assessment {
  /** `active` only when the exact state is active, the hash matches and the bound holds. */
  readonly verdict: 'active' | 'non_active' | 'unknown' | 'stale';
  /** The matrix row for a stop; undefined when active. */
  readonly row: MatrixRow | undefined;
  /** As observed (`unknown` when nothing authenticated is known). */
  readonly state: string;
  readonly stateSource: string;
  readonly reason:
    | 'mission_active'
    | 'mission_not_active'
    | 'mission_state_unknown'
    | 'mission_state_stale'
    | 'authority_hash_mismatch'
    | 'successor_binding_required';
  /** RFC-3339-ready instants (ms) for the evidence `freshness` member; null when never checked. */
  readonly checkedAt: number | null;
  readonly freshUntil: number | null;
}

/** What an assessment reads of a view (provider entry reads only these columns, A3.6). */
export type AssessedView = Pick<
  MissionViewRecord,
  'state' | 'stateSource' | 'authorityHash' | 'checkedAt' | 'freshUntil' | 'missionExpiry'
>;

export function freshUntilFor(view: AssessedView, b: StalenessBounds, c: ActionClass): number | null {
  if (view.freshUntil === null || view.checkedAt === null) return null;
  if (view.stateSource === 'signal') return view.freshUntil;
  return Math.min(view.freshUntil, view.checkedAt + classBoundSeconds(b, c) * 1000);
}

export function assess(
  view: AssessedView | undefined,
  bindingAuthorityHash: string | undefined,
  c: ActionClass,
  now: number,
  b: StalenessBounds,
): Assessment {
  if (view === undefined || view.state === null) {
    return {
      verdict: 'unknown',
      row: 'unknown',
      state: 'unknown',
      stateSource: 'harness',
      reason: 'mission_state_unknown',
      checkedAt: null,
      freshUntil: null,
    };
  }
  const until = freshUntilFor(view, b, c);
  const { verdict, row, reason, expired } = verdictOf(view.state, view, bindingAuthorityHash, now, until);
  // One literal of one shape for every answer: object spreads here missed V8's inline caches on
  // every entry and cost more than the rest of the assessment (issue 11 §8).
  return {
    verdict,
    row,
    state: expired ? 'expired' : reportedState(view.state),
    stateSource: view.stateSource ?? 'harness',
    reason,
    checkedAt: view.checkedAt,
    freshUntil: until,
  };
}

function verdictOf(
  state: string,
  view: AssessedView,
  bindingAuthorityHash: string | undefined,
  now: number,
  until: number | null,
): Pick<Assessment, 'verdict' | 'row' | 'reason'> & { expired: boolean } {
  if (!isActive(state)) {
    // A2.8: superseded ⇒ suppress and require a successor binding before requeue (A7#24).
    const reason = state === 'superseded' ? 'successor_binding_required' : 'mission_not_active';
    return { verdict: 'non_active', row: rowOf(state), reason, expired: false };
  }
  // A3.2 step 7: a known binding hash that differs is not active for that binding.
  if (
    bindingAuthorityHash !== undefined &&
    view.authorityHash !== null &&
    view.authorityHash !== bindingAuthorityHash
  ) {
    return { verdict: 'non_active', row: 'other', reason: 'authority_hash_mismatch', expired: false };
  }
  if (view.missionExpiry !== null && view.missionExpiry <= now) {
    return { verdict: 'non_active', row: 'expired', reason: 'mission_not_active', expired: true };
  }
  // A3.2 step 7 / HAR-02, fail closed: a binding hash the view cannot confirm (a view learned only
  // from SETs, which carry no authority_hash) is never a match. The check fetches Status first
  // (needsRefresh); until an answer names the hash, the Mission is unknown for that binding.
  if (bindingAuthorityHash !== undefined && view.authorityHash === null) {
    return { verdict: 'unknown', row: 'unknown', reason: 'mission_state_unknown', expired: false };
  }
  if (until === null || now > until) {
    return { verdict: 'stale', row: 'stale', reason: 'mission_state_stale', expired: false };
  }
  return { verdict: 'active', row: undefined, reason: 'mission_active', expired: false };
}

/**
 * Whether the Mission ITSELF is not active at `now`, whatever a binding's `authority_hash` says:
 * its effective matrix row and the state to report, or undefined while it is active (or unknown).
 * A binding whose hash differs is "not active for that binding" (A3.2 step 7) and stops that item
 * alone; only a Mission that is itself non-active — by its state, or by a `mission_expiry` that has
 * passed while the view still reads `active` (A3.2 step 8) — stops its other work (A3.7).
 */
export function missionStopOf(
  view: Pick<AssessedView, 'state' | 'missionExpiry'>,
  now: number,
): { readonly row: MatrixRow; readonly state: string } | undefined {
  if (view.state === null) return undefined;
  if (!isActive(view.state)) return { row: rowOf(view.state), state: reportedState(view.state) };
  if (view.missionExpiry !== null && view.missionExpiry <= now) return { row: 'expired', state: 'expired' };
  return undefined;
}

/**
 * A3.1 step 3: whether a check at `now` must fetch Status first — nothing known, or a view that
 * could still change whose freshness bound for the class has passed: a stale `active` one, and a
 * `suspended` (or unrecognised non-active) one too, so a resume at the issuer is learned without an
 * operator (seed: a pause waits for "an authorized lifecycle transition, such as resume"), and an
 * `active` one that cannot confirm the binding's `authority_hash` (A3.2 step 7). A final state —
 * terminal (A3.3, sticky) or a passed `mission_expiry` — is never refreshed.
 */
export function needsRefresh(
  view: AssessedView | undefined,
  c: ActionClass,
  now: number,
  b: StalenessBounds,
  bindingAuthorityHash?: string,
): boolean {
  if (view === undefined || view.state === null) return true;
  if (isTerminal(view.state)) return false;
  if (view.missionExpiry !== null && view.missionExpiry <= now) return false;
  // A3.2 step 7: a binding names an authority_hash the view does not know (SETs carry none), so
  // only a Status answer can confirm it; without one the check stops as unknown (assess).
  if (bindingAuthorityHash !== undefined && view.authorityHash === null && isActive(view.state)) return true;
  // A non-active SET's `freshUntil` is its arrival (it is never relied on as active): such a view
  // is asked about again after the class bound from its arrival, not at every dispatch.
  const until =
    !isActive(view.state) && view.stateSource === 'signal' && view.checkedAt !== null
      ? view.checkedAt + classBoundSeconds(b, c) * 1000
      : freshUntilFor(view, b, c);
  return until === null || now > until;
}
