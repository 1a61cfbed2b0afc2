/**
 * Pre-entry release (AOC-REQ-008, BCR §10.4): only the reservation owner (the lineage's current
 * generation), only while reserved. The serialized absence of the entry marker, checked in this
 * very transaction, is the proof of non-entry; deadline, death or silence never are. Atomic with
 * returning the reserved authority; the occurrence stays as a terminal replay tombstone.
 */
import type { AuthorityRecord, LineageRecord, OccurrenceRecord, PlannedEvent } from '../model.js';
import type { Caller, Rejection } from './common.js';
import { checkCurrent, event, occurrenceSubject, reject } from './common.js';

export interface ReleaseState {
  readonly lineage: LineageRecord;
  readonly caller: Caller;
  readonly occurrence: OccurrenceRecord;
  readonly authority: AuthorityRecord;
}

export interface ReleaseDecision {
  readonly occurrence: OccurrenceRecord;
  readonly authority: AuthorityRecord;
  readonly events: readonly PlannedEvent[];
}

function refuseRelease(state: ReleaseState): Rejection | undefined {
  const { occurrence: o, lineage, caller } = state;
  if (o.lineage !== caller.lineage || lineage.id !== o.lineage) {
    return reject('release_not_owner', 'only the lineage that holds the reservation may release it');
  }
  const notCurrent = checkCurrent(caller, lineage);
  if (notCurrent !== undefined) return notCurrent;
  if (o.phase === 'entered' || o.phase === 'resolved') {
    return reject('already_entered', 'an entered occurrence is never released', { phase: o.phase });
  }
  if (o.phase !== 'reserved')
    return reject('not_reserved', 'the occurrence is not reserved', { phase: o.phase });
  if (state.authority.id !== o.authority.id || state.authority.reserved < o.authority.amount) {
    return reject('store_corrupt', 'the reserved authority of this occurrence is missing');
  }
  return undefined;
}

/** The released tombstone and its returned reservation: one transition for both release paths. */
function released(
  o: OccurrenceRecord,
  a: AuthorityRecord,
  now: number,
): { occurrence: OccurrenceRecord; authority: AuthorityRecord } {
  return {
    occurrence: { ...o, phase: 'released', releasedAt: now, updatedAt: now, version: o.version + 1 },
    authority: {
      ...a,
      reserved: a.reserved - o.authority.amount,
      updatedAt: now,
      version: a.version + 1,
    },
  };
}

export function decideRelease(state: ReleaseState, now: number): ReleaseDecision | Rejection {
  const refused = refuseRelease(state);
  if (refused !== undefined) return refused;
  const o = state.occurrence;
  const a = state.authority;
  const { occurrence, authority } = released(o, a, now);
  const body = {
    generation: state.caller.generation,
    capturedGeneration: o.capturedGeneration,
    proof: 'serialized_absence_of_provider_entry',
    requestDigest: o.provider.requestDigest,
    authority: { id: a.id, returned: o.authority.amount, reservedAfter: authority.reserved },
  };
  return { occurrence, authority, events: [event(occurrenceSubject(o.id), 'released', body)] };
}

/**
 * A harness stop with `terminate` (Mission build spec A3.7): the domain itself releases a reserved
 * occurrence of the terminated work. Still only while reserved: the serialized absence of the entry
 * marker, read under this transaction's lock, is the proof of non-entry (AOC-REQ-008).
 */
export function decideStopRelease(
  occurrence: OccurrenceRecord,
  authority: AuthorityRecord,
  reason: string,
  now: number,
): ReleaseDecision | Rejection {
  const o = occurrence;
  if (o.phase === 'entered' || o.phase === 'resolved') {
    return reject('already_entered', 'an entered occurrence is never released', { phase: o.phase });
  }
  if (o.phase !== 'reserved')
    return reject('not_reserved', 'the occurrence is not reserved', { phase: o.phase });
  if (authority.id !== o.authority.id || authority.reserved < o.authority.amount) {
    return reject('store_corrupt', 'the reserved authority of this occurrence is missing');
  }
  const next = released(o, authority, now);
  const a = next.authority;
  const body = {
    capturedGeneration: o.capturedGeneration,
    proof: 'serialized_absence_of_provider_entry',
    cause: 'mission_stop',
    reason,
    requestDigest: o.provider.requestDigest,
    authority: { id: a.id, returned: o.authority.amount, reservedAfter: a.reserved },
  };
  return { ...next, events: [event(occurrenceSubject(o.id), 'released', body)] };
}
