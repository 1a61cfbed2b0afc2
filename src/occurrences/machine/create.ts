/**
 * Create + reserve + bind, in one decision (AOC-REQ-002, -003, -006, -010; AOC-CASE-006, -012).
 * The same creation binding with the same request returns the original occurrence whatever its
 * state; with another request it is a conflict. The native key is derived from the minted
 * occurrence id by the profile's rule, never taken from the caller.
 */
import { digestJcs } from '../../core/digest.js';
import { BatonError } from '../../core/errors.js';
import type { Sha256Digest } from '../../core/digest.js';
import type { JsonObject } from '../../core/json.js';
import type {
  AuthorityRecord,
  DomainRecord,
  LineageRecord,
  LinkedIdentifier,
  OccurrenceRecord,
  PlannedEvent,
  RemedyKind,
} from '../model.js';
import { checkAuthorityTie } from '../authority-tie.js';
import { deriveNativeKey, requestJcs } from '../profile.js';
import type { RegisteredProfile } from '../profile-types.js';
import type { Caller, Rejection } from './common.js';
import { checkCurrent, event, isRejection, occurrenceSubject, profileNotFound, reject } from './common.js';
import { checkLimits, type OpenCounts } from './limits.js';

export interface CreateCommand {
  readonly occurrenceId: string;
  readonly creationKey: string;
  readonly profileId: string;
  readonly profileVersion: string;
  /** What the caller believes the account and environment are; must equal the profile's. */
  readonly account: string | null;
  readonly environment: string | null;
  readonly request: JsonObject;
  readonly authority: { readonly id: string; readonly amount: number };
  readonly linkedIds: readonly LinkedIdentifier[];
  readonly remedy: { readonly of: string; readonly kind: RemedyKind } | null;
  readonly reissueOf: string | null;
}

export interface CreateState {
  readonly domain: DomainRecord;
  readonly lineage: LineageRecord;
  readonly caller: Caller;
  readonly profile: RegisteredProfile | undefined;
  readonly existing: OccurrenceRecord | undefined;
  readonly authority: AuthorityRecord | undefined;
  readonly counts: OpenCounts;
  /** The remedy's original or the reissue's released occurrence, when the command names one. */
  readonly link: OccurrenceRecord | undefined;
  /** A reissue's tombstone: the occurrence already reissued from it, if any. */
  readonly reissuedAs?: string | undefined;
}

export type CreateDecision =
  | { readonly kind: 'existing'; readonly occurrence: OccurrenceRecord }
  | {
      readonly kind: 'created';
      readonly occurrence: OccurrenceRecord;
      /** The request's JCS text, the very one its digest covers (stored as is: issue 16 §6). */
      readonly requestJcs: string;
      readonly authority: AuthorityRecord;
      readonly events: readonly PlannedEvent[];
    };

/** The digest of everything the caller asked for: what "the same request" means on a retry. */
export function creationDigest(
  cmd: CreateCommand,
  reqDigest: Sha256Digest,
  profile: RegisteredProfile,
): Sha256Digest {
  return digestJcs({
    profile: { id: profile.id, version: profile.version },
    account: profile.document.account,
    environment: profile.document.environment,
    requestDigest: reqDigest,
    authority: { id: cmd.authority.id, amount: cmd.authority.amount },
    linkedIds: cmd.linkedIds.map((l) => ({ type: l.type, value: l.value })),
    remedy: cmd.remedy === null ? null : { of: cmd.remedy.of, kind: cmd.remedy.kind },
    reissueOf: cmd.reissueOf,
  });
}

function checkLink(state: CreateState, cmd: CreateCommand): Rejection | undefined {
  const link = state.link;
  if (cmd.remedy !== null) {
    if (link === undefined) return reject('occurrence_not_found', 'the occurrence to remedy does not exist');
    // AOC-REQ-012: a remedy answers an entered occurrence; a never-entered one is released instead.
    if (link.phase !== 'entered' && link.phase !== 'resolved') {
      return reject('remedy_invalid', 'only an entered occurrence can be remedied', { phase: link.phase });
    }
  }
  if (cmd.reissueOf !== null) {
    if (link === undefined) return reject('occurrence_not_found', 'the occurrence to reissue does not exist');
    if (link.lineage !== state.caller.lineage)
      return reject('release_not_owner', 'not this lineage’s occurrence');
    if (link.phase !== 'released') {
      return reject('reissue_invalid', 'only a released occurrence can be reissued', { phase: link.phase });
    }
    // AOC-REQ-008: a later presentation of the same occurrence must not create a new reservation.
    // One tombstone, one successor: a second reissue under another key would be a second effect
    // the caller may not know the first already sent (its successor can be entered by now).
    if (state.reissuedAs !== undefined) {
      return reject('reissue_invalid', 'this released occurrence was already reissued', {
        successor: state.reissuedAs,
      });
    }
  }
  return undefined;
}

function checkProfile(state: CreateState, cmd: CreateCommand): Rejection | RegisteredProfile {
  const profile = state.profile;
  if (profile === undefined) return profileNotFound(cmd.profileId, cmd.profileVersion);
  const doc = profile.document;
  // AOC-CASE-007: the account and environment are the profile's; another one is a substitution.
  if (
    (cmd.account !== null && cmd.account !== doc.account) ||
    (cmd.environment !== null && cmd.environment !== doc.environment)
  ) {
    return reject('provider_binding_conflict', 'the account or environment differs from the pinned profile');
  }
  return profile;
}

function checkAuthority(state: CreateState, cmd: CreateCommand): Rejection | AuthorityRecord {
  const a = state.authority;
  if (a === undefined) return reject('authority_not_found', 'no such authority budget');
  const available = a.total - a.reserved - a.consumed;
  if (cmd.authority.amount > available) {
    return reject('authority_insufficient', 'the budget cannot cover this reservation', {
      amount: cmd.authority.amount,
      available,
    });
  }
  return a;
}

function digestRequest(
  profile: RegisteredProfile,
  request: JsonObject,
): { digest: Sha256Digest; text: string } | Rejection {
  try {
    return requestJcs(profile.document, request);
  } catch (error) {
    if (error instanceof BatonError)
      return reject(error.code, error.message, { path: String(error.details['path']) });
    throw error;
  }
}

export function decideCreate(
  state: CreateState,
  cmd: CreateCommand,
  now: number,
): CreateDecision | Rejection {
  const notCurrent = checkCurrent(state.caller, state.lineage);
  if (notCurrent !== undefined) return notCurrent;
  const profile = checkProfile(state, cmd);
  if ('rejected' in profile) return profile;
  const jcsed = digestRequest(profile, cmd.request);
  if (isRejection(jcsed)) return jcsed;
  const reqDigest = jcsed.digest;
  const digest = creationDigest(cmd, reqDigest, profile);
  if (state.existing !== undefined) {
    if (state.existing.creationBinding.requestDigest !== digest) {
      return reject('creation_binding_conflict', 'this creation key is bound to a different request');
    }
    return { kind: 'existing', occurrence: state.existing };
  }
  const problem = checkLink(state, cmd) ?? checkLimits(state.domain.limits, state.counts);
  if (problem !== undefined) return problem;
  const authority = checkAuthority(state, cmd);
  if ('rejected' in authority) return authority;
  const untied = checkAuthorityTie(profile.document.authority, cmd.request, {
    amount: cmd.authority.amount,
    unit: authority.unit,
  });
  if (untied !== undefined) {
    return reject('authority_request_mismatch', untied.message, { reason: untied.reason });
  }
  return created(state, cmd, now, { profile, reqDigest, requestText: jcsed.text, digest, authority });
}

interface Checked {
  readonly profile: RegisteredProfile;
  readonly reqDigest: Sha256Digest;
  readonly requestText: string;
  readonly digest: Sha256Digest;
  readonly authority: AuthorityRecord;
}

function created(state: CreateState, cmd: CreateCommand, now: number, c: Checked): CreateDecision {
  const doc = c.profile.document;
  const nativeKey = deriveNativeKey(doc, { domain: state.domain.id, occurrenceId: cmd.occurrenceId });
  const linkedIds: LinkedIdentifier[] = [...cmd.linkedIds];
  if (nativeKey !== null) linkedIds.push({ type: 'provider_key', value: nativeKey });
  const occurrence: OccurrenceRecord = {
    id: cmd.occurrenceId,
    lineage: state.lineage.id,
    creationBinding: { scope: state.lineage.id, key: cmd.creationKey, requestDigest: c.digest },
    linkedIds,
    provider: {
      profileId: c.profile.id,
      profileVersion: c.profile.version,
      profileDigest: c.profile.digest,
      account: doc.account,
      environment: doc.environment,
      requestDigest: c.reqDigest,
      nativeKeyRule: doc.nativeKey.rule,
      nativeKey,
      providerReference: null,
    },
    capturedGeneration: state.lineage.generation,
    entryDeadline: now + state.domain.limits.entryWindowSeconds * 1000,
    authority: { id: c.authority.id, amount: cmd.authority.amount, unit: c.authority.unit },
    phase: 'reserved',
    outcome: 'unknown',
    effect: 'unresolved',
    conflict: false,
    enteredAt: null,
    enteredGeneration: null,
    releasedAt: null,
    resolvedAt: null,
    remedyOf: cmd.remedy?.of ?? null,
    remedyKind: cmd.remedy?.kind ?? null,
    reissueOf: cmd.reissueOf,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  const authority: AuthorityRecord = {
    ...c.authority,
    reserved: c.authority.reserved + cmd.authority.amount,
    updatedAt: now,
    version: c.authority.version + 1,
  };
  const events = createdEvents(occurrence, authority);
  return { kind: 'created', occurrence, requestJcs: c.requestText, authority, events };
}

function createdEvents(o: OccurrenceRecord, a: AuthorityRecord): PlannedEvent[] {
  const events = [
    event(occurrenceSubject(o.id), 'occurrence_created', {
      occurrence: o.id,
      lineage: o.lineage,
      creationBinding: { ...o.creationBinding },
      linkedIds: o.linkedIds.map((l) => ({ type: l.type, value: l.value })),
      provider: { ...o.provider },
      capturedGeneration: o.capturedGeneration,
      entryDeadline: o.entryDeadline,
      authority: {
        id: o.authority.id,
        amount: o.authority.amount,
        unit: o.authority.unit,
        reservedAfter: a.reserved,
        consumedAfter: a.consumed,
      },
      remedyOf: o.remedyOf,
      remedyKind: o.remedyKind,
      reissueOf: o.reissueOf,
    }),
  ];
  // Linking is appended to the original's chain; the original record itself never changes.
  if (o.remedyOf !== null) {
    events.push(event(occurrenceSubject(o.remedyOf), 'remedy_linked', { remedy: o.id, kind: o.remedyKind }));
  }
  if (o.reissueOf !== null) {
    events.push(event(occurrenceSubject(o.reissueOf), 'reissued_as', { occurrence: o.id }));
  }
  return events;
}
