/**
 * Recording a provider observation (AOC-REQ-004, -007, -009, -011; AOC-CASE-004, -008, -009, -010).
 * The native facts and the profile's interpretation are kept separately in the evidence. An
 * effective observation moves outcome/effect; authenticated observations that disagree set the
 * conflict flag and send the occurrence back to unresolved — no favourable result is picked. An
 * observation never touches the lineage or the authority: arriving after a takeover, it is
 * evidence only and reactivates nothing.
 */
import { digestJcs } from '../../core/digest.js';
import type { JsonObject } from '../../core/json.js';
import type { Effect, Interpretation, OccurrenceRecord, Outcome, PlannedEvent } from '../model.js';
import type { ProviderProfile, StatusMapping } from '../profile-types.js';
import { assessObservation, type Assessment, type ObservationCommand } from './assess.js';
import { event, occurrenceSubject, stateFacts } from './common.js';

export interface ObserveDecision {
  readonly occurrence: OccurrenceRecord;
  readonly assessment: Assessment;
  /** True when the observation moved outcome, effect, phase or the conflict flag. */
  readonly changed: boolean;
  readonly events: readonly PlannedEvent[];
}

/** Pairs of interpretations that cannot both be true of one attempt. */
function contradicts(current: Outcome, next: Interpretation): boolean {
  if (current === 'unknown' || current === next) return false;
  if (current === 'accepted') return next === 'not_accepted';
  if (next === 'accepted') return current === 'not_accepted';
  return true; // two different terminal interpretations
}

const RANK: Readonly<Record<Outcome, number>> = {
  unknown: 0,
  accepted: 1,
  success: 2,
  not_accepted: 2,
  final_failure: 2,
};

interface Next {
  readonly outcome: Outcome;
  readonly effect: Effect;
  readonly conflict: boolean;
}

function nextState(o: OccurrenceRecord, m: StatusMapping): Next {
  if (o.conflict) return o; // sticky: only a separate review may close a conflict
  const target = m.interpretation;
  const effectClaim: Effect =
    target === 'success' ? 'occurred' : m.establishesNoEffect ? 'none_confirmed' : 'unresolved';
  const effectsDisagree =
    o.effect !== 'unresolved' && effectClaim !== 'unresolved' && effectClaim !== o.effect;
  if (contradicts(o.outcome, target) || effectsDisagree) {
    return { outcome: 'unknown', effect: 'unresolved', conflict: true };
  }
  const outcome = RANK[target] > RANK[o.outcome] ? target : o.outcome;
  const effect = effectClaim === 'unresolved' ? o.effect : effectClaim;
  return { outcome, effect, conflict: false };
}

function applyState(o: OccurrenceRecord, a: Assessment, now: number): OccurrenceRecord {
  if (a.mapping === null && a.bindReference === null) return o;
  const provider =
    a.bindReference === null ? o.provider : { ...o.provider, providerReference: a.bindReference };
  const linkedIds =
    a.bindReference === null
      ? o.linkedIds
      : [...o.linkedIds, { type: 'provider_reference' as const, value: a.bindReference }];
  const next = a.mapping === null ? o : nextState(o, a.mapping);
  const resolved = !next.conflict && next.effect !== 'unresolved';
  return {
    ...o,
    provider,
    linkedIds,
    outcome: next.outcome,
    effect: next.effect,
    conflict: next.conflict,
    phase: resolved ? 'resolved' : 'entered',
    resolvedAt: resolved ? (o.phase === 'resolved' ? o.resolvedAt : now) : null,
  };
}

function nativeFacts(cmd: ObservationCommand, profile: ProviderProfile): JsonObject {
  // The profile marks the request private: keep only the digest of the provider's answer.
  const facts: JsonObject = {
    source: cmd.source,
    observedAt: cmd.observedAt,
    result: cmd.result,
    nativeStatus: cmd.nativeStatus,
    authentication: { verified: cmd.authentication.verified, pin: cmd.authentication.pin },
    carried: { ...cmd.carried },
    complete: cmd.complete,
  };
  if (cmd.response !== null) {
    if (profile.request.private) facts['responseDigest'] = digestJcs(cmd.response);
    else facts['response'] = cmd.response;
  }
  return facts;
}

export function decideObserve(
  o: OccurrenceRecord,
  profile: ProviderProfile,
  cmd: ObservationCommand,
  now: number,
  requestedBy?: string,
): ObserveDecision {
  const assessed = assessObservation(o, profile, cmd, now);
  const after = applyState(o, assessed, now);
  const becameConflict = after.conflict && !o.conflict;
  const assessment: Assessment = becameConflict ? { ...assessed, missing: 'conflict' } : assessed;
  const changed = ['phase', 'outcome', 'effect', 'conflict'].some(
    (k) => after[k as keyof OccurrenceRecord] !== o[k as keyof OccurrenceRecord],
  );
  const touched = changed || assessment.bindReference !== null;
  const occurrence = touched ? { ...after, updatedAt: now, version: o.version + 1 } : o;
  const subject = occurrenceSubject(o.id);
  const interpretation = {
    interpretation: assessment.mapping?.interpretation ?? null,
    establishesNoEffect: assessment.mapping?.establishesNoEffect ?? null,
    effective: assessment.missing === null,
    missingKnowledge: assessment.missing,
    profile: { id: o.provider.profileId, version: o.provider.profileVersion },
  };
  const events = [
    event(subject, 'observation_recorded', {
      observation: nativeFacts(cmd, profile),
      interpretation,
      // Who asked for the reconcile that produced it (the route's caller), when someone did.
      ...(requestedBy === undefined ? {} : { requestedBy }),
    }),
  ];
  if (assessment.bindReference !== null) {
    events.push(event(subject, 'provider_reference_bound', { providerReference: assessment.bindReference }));
  }
  if (changed)
    events.push(event(subject, 'state_changed', { from: stateFacts(o), to: stateFacts(occurrence) }));
  return { occurrence, assessment, changed, events };
}
