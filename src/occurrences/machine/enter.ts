/**
 * Provider entry: the compare-and-set the drafts call provider_entered (AOC-REQ-006, -010, -012;
 * BCR §10.2). It succeeds only if the caller's generation is the lineage's current one AND equals
 * the generation captured at reservation, the phase is reserved, the deadline has not passed and
 * the reserved authority is there; it moves that authority to consumed BEFORE the adapter is
 * called. An occurrence is entered at most once, ever.
 */
import type {
  AuthorityRecord,
  DomainRecord,
  LineageRecord,
  OccurrenceRecord,
  PlannedEvent,
} from '../model.js';
import type { Caller, Rejection } from './common.js';
import { checkCurrent, event, occurrenceSubject, reject } from './common.js';
import { checkInFlight, type OpenCounts } from './limits.js';

export interface EnterState {
  readonly domain: DomainRecord;
  readonly lineage: LineageRecord;
  readonly caller: Caller;
  readonly occurrence: OccurrenceRecord;
  readonly authority: AuthorityRecord;
  readonly counts: OpenCounts;
}

export interface EnterDecision {
  readonly occurrence: OccurrenceRecord;
  readonly authority: AuthorityRecord;
  readonly events: readonly PlannedEvent[];
}

function refuseEntry(state: EnterState, now: number): Rejection | undefined {
  const { occurrence: o, lineage } = state;
  if (o.lineage !== lineage.id) return reject('forbidden', 'the occurrence belongs to another lineage');
  const notCurrent = checkCurrent(state.caller, lineage);
  if (notCurrent !== undefined) return notCurrent;
  if (o.phase === 'entered' || o.phase === 'resolved') {
    return reject('already_entered', 'the occurrence was already entered; it is never entered again', {
      phase: o.phase,
    });
  }
  if (o.phase !== 'reserved')
    return reject('not_reserved', 'the occurrence is not reserved', { phase: o.phase });
  // The reservation belongs to the generation that made it; a successor must release and reissue.
  if (o.capturedGeneration !== lineage.generation) {
    return reject('generation_mismatch', 'the reservation was captured by a retired generation', {
      captured: o.capturedGeneration,
      current: lineage.generation,
    });
  }
  if (now >= o.entryDeadline)
    return reject('entry_deadline_passed', 'the provider-entry deadline has passed');
  const limited = checkInFlight(state.domain.limits, state.counts);
  if (limited !== undefined) return limited;
  const a = state.authority;
  if (a.id !== o.authority.id || a.reserved < o.authority.amount) {
    return reject('authority_insufficient', 'the reserved authority is not there');
  }
  return undefined;
}

export function decideEnter(state: EnterState, now: number): EnterDecision | Rejection {
  const refused = refuseEntry(state, now);
  if (refused !== undefined) return refused;
  const o = state.occurrence;
  const a = state.authority;
  const amount = o.authority.amount;
  const occurrence: OccurrenceRecord = {
    ...o,
    phase: 'entered',
    enteredAt: now,
    enteredGeneration: state.caller.generation,
    updatedAt: now,
    version: o.version + 1,
  };
  const authority: AuthorityRecord = {
    ...a,
    reserved: a.reserved - amount,
    consumed: a.consumed + amount,
    updatedAt: now,
    version: a.version + 1,
  };
  const body = {
    generation: state.caller.generation,
    attempt: 1,
    requestDigest: o.provider.requestDigest,
    nativeKey: o.provider.nativeKey,
    authority: {
      id: a.id,
      consumed: amount,
      reservedAfter: authority.reserved,
      consumedAfter: authority.consumed,
    },
  };
  return { occurrence, authority, events: [event(occurrenceSubject(o.id), 'provider_entered', body)] };
}
