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
import type { Effect, OccurrenceRecord, Outcome, PlannedEvent } from '../model.js';
import type { ProviderProfile, StatusMapping } from '../profile-types.js';
import { assessObservation, type Assessment, type ObservationCommand } from './assess.js';
import { event, occurrenceSubject, stateFacts } from './common.js';
import { effectClaim, effectsDisagree, interpretationsContradict, OUTCOME_RANK } from './readings.js';

export interface ObserveDecision {
  readonly occurrence: OccurrenceRecord;
  readonly assessment: Assessment;
  /** True when the observation moved outcome, effect, phase or the conflict flag. */
  readonly changed: boolean;
  readonly events: readonly PlannedEvent[];
}

interface Next {
  readonly outcome: Outcome;
  readonly effect: Effect;
  readonly conflict: boolean;
}

function nextState(o: OccurrenceRecord, m: StatusMapping): Next {
  if (o.conflict) return o; // sticky: only a separate review may close a conflict
  const target = m.interpretation;
  const claim = effectClaim(m);
  if (interpretationsContradict(o.outcome, target) || effectsDisagree(o.effect, claim)) {
    return { outcome: 'unknown', effect: 'unresolved', conflict: true };
  }
  const outcome = OUTCOME_RANK[target] > OUTCOME_RANK[o.outcome] ? target : o.outcome;
  const effect = claim === 'unresolved' ? o.effect : claim;
  return { outcome, effect, conflict: false };
}

/** AOC-CASE-009: one answer whose items disagree puts the occurrence in conflict, as two answers would. */
const CONFLICT: Next = { outcome: 'unknown', effect: 'unresolved', conflict: true };

function applyState(o: OccurrenceRecord, a: Assessment, now: number): OccurrenceRecord {
  if (a.conflicting === true) {
    if (o.conflict) return o;
    return { ...o, ...CONFLICT, phase: 'entered', resolvedAt: null };
  }
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
  // Only when the executor's date was replaced: evidence bodies stay as they were otherwise.
  if (cmd.claimedObservedAt !== undefined) facts['claimedObservedAt'] = cmd.claimedObservedAt;
  if (cmd.response !== null) {
    if (profile.request.private) facts['responseDigest'] = digestJcs(cmd.response);
    else facts['response'] = cmd.response;
  }
  // Every other item of the answer about this occurrence (bounded by MAX_ALSO_MATCHED): kept, so a
  // disagreement inside one answer stays visible (AOC-REQ-004, AOC-CASE-009).
  if (cmd.alsoMatched.length > 0)
    facts['alsoMatched'] = cmd.alsoMatched.map((m) => ({
      nativeStatus: m.nativeStatus,
      carried: { ...m.carried },
    }));
  return facts;
}

/**
 * AOC-REQ-003 / AOC-REQ-010: the reference an exactly bound answer names is already another
 * occurrence's (the store's exclusive index refused it). The answer is about another occurrence's
 * provider object as far as this one can tell: it is kept (AOC-REQ-004, AOC-CASE-007/-009) as
 * `binding_mismatch` that binds nothing and moves nothing — neither occurrence picks a side.
 */
const TAKEN_REFERENCE: Assessment = { mapping: null, missing: 'binding_mismatch', bindReference: null };

/**
 * What the observation means for the occurrence's state. `effective` (missing === null) means it
 * was authoritative AND the state now agrees with it: it moved the state or confirmed it. A
 * mapped answer that makes or meets a conflict is `conflict` (AOC-CASE-009): a conflict is
 * sticky, so a later answer is kept but picks no side and is not effective.
 */
function judged(assessed: Assessment, after: OccurrenceRecord): Assessment {
  if (assessed.missing !== null || assessed.mapping === null) return assessed;
  return after.conflict ? { ...assessed, missing: 'conflict' } : assessed;
}

export function decideObserve(
  o: OccurrenceRecord,
  profile: ProviderProfile,
  cmd: ObservationCommand,
  now: number,
  requestedBy?: string,
  /** The reference this answer would bind is another occurrence's already (service/observe.ts). */
  referenceTaken = false,
): ObserveDecision {
  const first = assessObservation(o, profile, cmd, now);
  const taken = referenceTaken && first.bindReference !== null;
  const assessed = taken ? TAKEN_REFERENCE : first;
  const after = applyState(o, assessed, now);
  const assessment = judged(assessed, after);
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
    // Only when it happened: every other evidence body stays as it was.
    ...(taken && { referenceBoundElsewhere: first.bindReference }),
    ...(assessment.conflicting === true && { conflictingItems: true }),
    ...(assessment.nativeStatus !== undefined && { nativeStatus: assessment.nativeStatus }),
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
