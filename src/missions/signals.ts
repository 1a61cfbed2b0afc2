/**
 * Lifecycle SET verification (MSG-01, MSG-03, A3.4 steps 2–4): `typ secevent+jwt`, alg allowlist,
 * signature against the registered issuer's keys (`invalid_key`), `iss` (`invalid_issuer`), `aud`
 * one consumer (`invalid_audience`), `exp` required and `iat` not in the future
 * (`invalid_request`, C-A16), then the lifecycle event's own members. Each refusal is thrown as
 * `mission_signal_invalid` with `{check, err}`, `err` being the RFC 8935 error code to answer with.
 * Replay (`jti`) and version ordering are not decided here: `jti` through a SetReplayPort, ordering
 * by the harness's view (A3.3).
 */
import { digestBytes } from '../core/digest.js';
import { BatonError } from '../core/errors.js';
import { MISSION_JWS_ALGORITHMS, checkCompactSignature, type JwsAlgorithm } from '../core/jose.js';
import type { JsonObject } from '../core/json.js';
import { isRfc3339DateTime } from '../core/time.js';
import type { MissionKeySource, ResolvedKey } from './jwks.js';
import {
  audienceIs,
  checkHeader,
  compactDefect,
  isFailure,
  payloadBytes,
  payloadObject,
  timeDefect,
} from './jwt-parts.js';
import type { VerifiedMissionSignal } from './verified.js';

export const SET_TYP = 'secevent+jwt';
export const SET_MEDIA_TYPE = 'application/secevent+jwt';
export const LIFECYCLE_EVENT = 'https://schemas.karlmcguinness.com/secevent/mission/lifecycle-change';
/** OpenID SSF 1.0 stream verification event: the liveness probe of A3.5. */
export const SSF_VERIFICATION_EVENT = 'https://schemas.openid.net/secevent/ssf/event-type/verification';

/** RFC 8935 §2.4 error codes. */
export type SetErrorCode =
  | 'invalid_request'
  | 'invalid_key'
  | 'invalid_issuer'
  | 'invalid_audience'
  | 'authentication_failed'
  | 'access_denied';

export type SetCheck =
  | 'body'
  | 'typ'
  | 'alg'
  | 'kid'
  | 'crit'
  | 'signature'
  | 'payload'
  | 'iss'
  | 'aud'
  | 'iat'
  | 'exp'
  | 'jti'
  | 'events'
  | 'mission_id'
  | 'mission_origin'
  | 'state'
  | 'prior_state'
  | 'version'
  | 'committed_at'
  | 'reason';

export interface SetExpectation {
  /** The issuer Baton registered the stream with (= every event's `mission_origin`, C-A17). */
  readonly issuer: string;
  readonly audience: string;
  readonly algorithms?: readonly JwsAlgorithm[];
  /** The pin's `bounds.max_stale_seconds`, carried to the signal as `relianceSeconds` (MSG-03). */
  readonly maxStaleSeconds?: number;
}

/** A verified SET: a lifecycle change for the harness, or an SSF stream event for the stream manager. */
export type VerifiedSet =
  | { readonly kind: 'lifecycle'; readonly signal: VerifiedMissionSignal; readonly expiresAt: number }
  | {
      readonly kind: 'stream';
      readonly jti: string;
      readonly issuedAt: number;
      readonly expiresAt: number;
      readonly digest: string;
      readonly eventTypes: readonly string[];
      /** The `state` member of an SSF verification event, if that is what it is. */
      readonly verificationState: string | null;
    };

function refuse(err: SetErrorCode, check: SetCheck, message: string): never {
  throw new BatonError('mission_signal_invalid', message, { err, check });
}

export function setRefusal(error: unknown): { err: SetErrorCode; check: SetCheck } | undefined {
  if (!(error instanceof BatonError) || error.code !== 'mission_signal_invalid') return undefined;
  const { err, check } = error.details as { err?: SetErrorCode; check?: SetCheck };
  return typeof err === 'string' && typeof check === 'string' ? { err, check } : undefined;
}

async function verifySetSignature(
  set: string,
  keys: MissionKeySource,
  algorithms: readonly JwsAlgorithm[],
): Promise<Uint8Array> {
  const defect = compactDefect(set);
  if (defect !== undefined) refuse('invalid_request', 'body', `SET is ${defect}`);
  const header = checkHeader(set, SET_TYP, algorithms);
  if (isFailure(header))
    refuse(header.check === 'body' ? 'invalid_request' : 'invalid_key', header.check, header.message);
  let key: ResolvedKey;
  try {
    key = await keys.resolve(header);
  } catch (error) {
    if (error instanceof BatonError && error.code === 'unavailable') throw error;
    refuse('invalid_key', 'kid', 'no issuer key has that kid');
  }
  if (!(await checkCompactSignature(set, key.key, header.alg))) {
    refuse('invalid_key', 'signature', 'SET signature does not verify under the issuer key');
  }
  return payloadBytes(set);
}

function checkEnvelope(claims: JsonObject, expect: SetExpectation, nowMs: number): void {
  if (claims['iss'] !== expect.issuer) refuse('invalid_issuer', 'iss', 'iss is not the registered issuer');
  if (!audienceIs(claims['aud'], expect.audience))
    refuse('invalid_audience', 'aud', 'aud is not this consumer');
  const time = timeDefect(claims['iat'], claims['exp'], nowMs);
  if (time !== undefined) refuse('invalid_request', time.check, time.message);
  const jti = claims['jti'];
  if (typeof jti !== 'string' || jti === '' || jti.length > 256)
    refuse('invalid_request', 'jti', 'jti is absent');
}

const MISSION_ID = /^[A-Za-z0-9_-]{1,256}$/;

function optionalString(event: JsonObject, member: 'prior_state' | 'reason', max: number): string | null {
  const value = event[member];
  if (value === undefined) return null;
  if (typeof value !== 'string' || value.length > max)
    refuse('invalid_request', member, `${member} is not a string`);
  return value;
}

/** A3.4 step 4: the lifecycle event's members; unknown members (`tenant` too) are ignored. */
function lifecycle(
  event: JsonObject,
  claims: JsonObject,
  digest: string,
  relianceSeconds: number | undefined,
): VerifiedMissionSignal {
  const missionId = event['mission_id'];
  if (typeof missionId !== 'string' || !MISSION_ID.test(missionId)) {
    refuse('invalid_request', 'mission_id', 'mission_id is not a Mission identifier');
  }
  if (event['mission_origin'] !== claims['iss']) {
    refuse('invalid_issuer', 'mission_origin', 'mission_origin is not the SET issuer');
  }
  const state = event['state'];
  if (typeof state !== 'string') refuse('invalid_request', 'state', 'state is not a string');
  const version = event['version'];
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) {
    refuse('invalid_request', 'version', 'version is not an integer >= 1');
  }
  const committedAt = event['committed_at'];
  if (typeof committedAt !== 'string' || !isRfc3339DateTime(committedAt)) {
    refuse('invalid_request', 'committed_at', 'committed_at is not an RFC 3339 date-time');
  }
  const priorState = optionalString(event, 'prior_state', 256);
  // C-A21: only the approval emission (active, version 1) may omit prior_state.
  if (priorState === null && !(state === 'active' && version === 1)) {
    refuse('invalid_request', 'prior_state', 'a transition must name its prior_state');
  }
  return {
    source: 'signal',
    origin: claims['iss'] as string,
    missionId,
    state,
    priorState,
    version,
    committedAt,
    jti: claims['jti'] as string,
    issuedAt: claims['iat'] as number,
    expiresAt: claims['exp'] as number,
    digest,
    reason: optionalString(event, 'reason', 1024),
    ...(relianceSeconds !== undefined && { relianceSeconds }),
  };
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A3.4 steps 2–4 over one compact SET (pushed or polled). */
export async function verifyMissionSet(
  set: string,
  keys: MissionKeySource,
  expect: SetExpectation,
  nowMs: number,
): Promise<VerifiedSet> {
  const payload = await verifySetSignature(set, keys, expect.algorithms ?? MISSION_JWS_ALGORITHMS);
  const claims = payloadObject(payload);
  if (claims === undefined) refuse('invalid_request', 'payload', 'SET payload is not a strict JSON object');
  checkEnvelope(claims, expect, nowMs);
  const events = claims['events'];
  if (!isObject(events) || Object.keys(events).length === 0) refuse('invalid_request', 'events', 'no events');
  const digest = digestBytes(set);
  const expiresAt = (claims['exp'] as number) * 1000;
  const event = events[LIFECYCLE_EVENT];
  if (event !== undefined) {
    if (!isObject(event)) refuse('invalid_request', 'events', 'the lifecycle event is not an object');
    const signal = lifecycle(event, claims, digest, expect.maxStaleSeconds);
    return { kind: 'lifecycle', signal, expiresAt };
  }
  const verification = events[SSF_VERIFICATION_EVENT];
  return {
    kind: 'stream',
    jti: claims['jti'] as string,
    issuedAt: claims['iat'] as number,
    expiresAt,
    digest,
    eventTypes: Object.keys(events),
    verificationState:
      isObject(verification) && typeof verification['state'] === 'string' ? verification['state'] : null,
  };
}

/** A SET of `verifyMissionSets`: verified, or refused with `mission_signal_invalid` (only itself). */
export type SetVerdict =
  { readonly ok: true; readonly set: VerifiedSet } | { readonly ok: false; readonly error: BatonError };

/** At most this many verifications in flight: node:crypto runs them on libuv's thread pool. */
const VERIFY_IN_FLIGHT = 32;

/**
 * A3.4 steps 2–4 over many SETs (an RFC 8936 poll answer, issue 11 §8): verified concurrently, the
 * signature checks off the main thread, each verdict at its SET's index. A refused SET refuses
 * only itself; any other failure (the issuer's keys unavailable) is thrown, as for one SET.
 */
export async function verifyMissionSets(
  sets: readonly string[],
  keys: MissionKeySource,
  expect: SetExpectation,
  nowMs: number,
): Promise<SetVerdict[]> {
  const out: SetVerdict[] = new Array<SetVerdict>(sets.length);
  let next = 0;
  // A sliding window: each lane takes the next SET as soon as its own is verified.
  const lane = async (): Promise<void> => {
    for (let i = next++; i < sets.length; i = next++) {
      out[i] = await verifyMissionSet(sets[i] as string, keys, expect, nowMs).then(
        (verified): SetVerdict => ({ ok: true, set: verified }),
        (error: unknown): SetVerdict => {
          if (setRefusal(error) === undefined) throw error;
          return { ok: false, error: error as BatonError };
        },
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(VERIFY_IN_FLIGHT, sets.length) }, lane));
  return out;
}
