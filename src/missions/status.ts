/**
 * Mission Status answer verification (MST-03, MST-04, A3.2 steps 2–8), in a fixed order: the first
 * failed check is thrown as `mission_status_invalid` with `{step, check}`, so a refusal always says
 * which check failed. Nothing here fetches: keys come from a MissionKeySource, time from `nowMs`.
 * A verified answer is only a fact about what the issuer signed; whether it may be relied on is
 * `statusReliance` (step 8), and only the exact state `active` ever permits anything (MCO-01).
 */
import { digestBytes } from '../core/digest.js';
import { BatonError } from '../core/errors.js';
import { MISSION_JWS_ALGORITHMS, checkCompactSignature, type JwsAlgorithm } from '../core/jose.js';
import type { JsonObject } from '../core/json.js';
import {
  MAX_RFC3339_MS,
  MIN_RFC3339_MS,
  formatRfc3339,
  isRfc3339DateTime,
  parseRfc3339,
} from '../core/time.js';
import { parseAnchor } from './anchors.js';
import type { MissionKeySource, ResolvedKey } from './jwks.js';
import {
  audienceIs,
  checkHeader,
  compactDefect,
  isFailure,
  JWT_SKEW_MS,
  payloadBytes,
  payloadObject,
  timeDefect,
} from './jwt-parts.js';
import type { VerifiedMissionStatus } from './verified.js';

export const STATUS_TYP = 'mission-status-response+jwt';
export const STATUS_MEDIA_TYPE = 'application/mission-status-response+jwt';

/** Every check a status answer can fail, named as A3.2 names them. */
export type StatusCheck =
  | 'media_type'
  | 'body'
  | 'typ'
  | 'alg'
  | 'kid'
  | 'crit'
  | 'signature'
  | 'payload'
  | 'iss'
  | 'aud'
  | 'sub'
  | 'nonce'
  | 'iat'
  | 'exp'
  | 'mission'
  | 'mission_id'
  | 'mission_origin'
  | 'state'
  | 'expires_at'
  | 'mission_expiry'
  | 'authority_hash';

/** What the consumer asked and who it is: the bindings of A3.2 step 5 and C-A10. */
export interface StatusExpectation {
  /** The pinned issuer, which is also the binding's `mission_origin`. */
  readonly issuer: string;
  readonly audience: string;
  readonly clientId: string;
  readonly nonce: string;
  readonly missionId: string;
  /** From the pin; default ES256 and EdDSA (C-A27). `none` and HMAC are never allowed. */
  readonly algorithms?: readonly JwsAlgorithm[];
  /**
   * The pin's `bounds.max_stale_seconds` (the issuer's `mission_max_stale_seconds`): an answer is
   * relied on at most this long after Baton checked it, however late its `expires_at` (MSG-03, C-A8).
   */
  readonly maxStaleSeconds?: number;
}

function refuse(step: number, check: StatusCheck, message: string): never {
  throw new BatonError('mission_status_invalid', message, { step, check });
}

/** The refusal's `{step, check}` if `error` is a status refusal. */
export function statusRefusal(error: unknown): { step: number; check: StatusCheck } | undefined {
  if (!(error instanceof BatonError) || error.code !== 'mission_status_invalid') return undefined;
  const { step, check } = error.details as { step?: number; check?: StatusCheck };
  return typeof step === 'number' && typeof check === 'string' ? { step, check } : undefined;
}

/**
 * A3.2 step 2 for a 200 answer: the media type exactly, then the body as a compact JWS. An
 * unsigned JSON `{"state":"active"}` or an RFC 9701 introspection JWT is refused here (MST-03).
 */
export function statusBody(contentType: string | undefined, body: Uint8Array | string): string {
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (media !== STATUS_MEDIA_TYPE) refuse(2, 'media_type', `Content-Type is not ${STATUS_MEDIA_TYPE}`);
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('latin1');
  const defect = compactDefect(text.trim());
  if (defect !== undefined) refuse(2, 'body', `status body is ${defect}`);
  return text.trim();
}

async function verifySignature(
  jws: string,
  keys: MissionKeySource,
  algorithms: readonly JwsAlgorithm[],
): Promise<{ payload: Uint8Array; key: ResolvedKey }> {
  const header = checkHeader(jws, STATUS_TYP, algorithms);
  if (isFailure(header)) refuse(3, header.check, header.message);
  let key: ResolvedKey;
  try {
    key = await keys.resolve(header);
  } catch (error) {
    if (error instanceof BatonError && error.code === 'unavailable') throw error;
    refuse(4, 'kid', 'no pinned issuer key has that kid (after one refetch)');
  }
  if (!(await checkCompactSignature(jws, key.key, header.alg))) {
    refuse(4, 'signature', 'signature does not verify under the pinned issuer key');
  }
  return { payload: payloadBytes(jws), key };
}

function checkEnvelope(claims: JsonObject, expect: StatusExpectation, nowMs: number): void {
  if (claims['iss'] !== expect.issuer) refuse(5, 'iss', 'iss is not the pinned issuer');
  if (!audienceIs(claims['aud'], expect.audience)) refuse(5, 'aud', 'aud is not this consumer');
  if (claims['sub'] !== expect.clientId) refuse(5, 'sub', "sub is not Baton's client_id");
  if (claims['nonce'] !== expect.nonce) refuse(5, 'nonce', 'nonce is not the one sent');
  const time = timeDefect(claims['iat'], claims['exp'], nowMs);
  if (time !== undefined) refuse(6, time.check, time.message);
}

interface MissionFacts {
  state: string;
  expiresAt: string;
  missionExpiry: string | null;
  authorityHash: string | null;
}

/**
 * An RFC 3339 date-time whose instant Baton can write back in UTC: `9999-12-31T23:59:59-01:00` is
 * valid RFC 3339 but falls in year 10000 UTC, which no `Z` date-time (the view, evidence) can hold.
 * Such an instant is refused at step 7 (the view becomes unknown), never carried on to fail later.
 */
function isUtcWritable(text: string): boolean {
  if (!isRfc3339DateTime(text)) return false;
  const ms = parseRfc3339(text);
  return ms >= MIN_RFC3339_MS && ms <= MAX_RFC3339_MS;
}

function checkMission(claims: JsonObject, expect: StatusExpectation): MissionFacts {
  const mission = claims['mission'];
  if (typeof mission !== 'object' || mission === null || Array.isArray(mission)) {
    refuse(7, 'mission', 'no mission object');
  }
  if (mission['id'] !== expect.missionId) refuse(7, 'mission_id', 'answer is about another mission');
  if (mission['origin'] !== expect.issuer) refuse(7, 'mission_origin', 'mission.origin is not iss');
  const state = mission['state'];
  if (typeof state !== 'string') refuse(7, 'state', 'mission.state is not a string');
  const expiresAt = mission['expires_at'];
  if (typeof expiresAt !== 'string' || !isUtcWritable(expiresAt)) {
    refuse(7, 'expires_at', 'mission.expires_at is not an RFC 3339 date-time');
  }
  const expiry = mission['mission_expiry'];
  if (expiry !== undefined && (typeof expiry !== 'string' || !isUtcWritable(expiry))) {
    refuse(7, 'mission_expiry', 'mission.mission_expiry is not an RFC 3339 date-time');
  }
  const hash = mission['authority_hash'];
  // MCO-02: the mission object's authority_hash is REQUIRED. An answer without one would leave
  // the view with no hash, so the A3.2 step 7 comparison with the binding's would never refuse:
  // refused here (the view becomes unknown, fail closed), never applied as "no hash".
  if (hash === undefined) refuse(7, 'authority_hash', 'mission.authority_hash is missing (MCO-02)');
  try {
    parseAnchor(hash);
  } catch {
    refuse(7, 'authority_hash', 'mission.authority_hash is not a sha-256 anchor');
  }
  return {
    state,
    expiresAt,
    missionExpiry: typeof expiry === 'string' ? expiry : null,
    authorityHash: typeof hash === 'string' ? hash : null,
  };
}

/** Step 8 before the action-class bound: expires_at (+30 s for `active` only), capped by mission_expiry. */
export function freshUntilMs(state: string, expiresAt: string, missionExpiry: string | null): number {
  const reliance = parseRfc3339(expiresAt) + (state === 'active' ? JWT_SKEW_MS : 0);
  return missionExpiry === null ? reliance : Math.min(reliance, parseRfc3339(missionExpiry));
}

/** A3.2 steps 3–8 over a compact JWS the consumer fetched itself with `expect.nonce`. */
export async function verifyStatusJws(
  jws: string,
  keys: MissionKeySource,
  expect: StatusExpectation,
  nowMs: number,
): Promise<VerifiedMissionStatus> {
  const defect = compactDefect(jws);
  if (defect !== undefined) refuse(2, 'body', `status body is ${defect}`);
  const { payload, key } = await verifySignature(jws, keys, expect.algorithms ?? MISSION_JWS_ALGORITHMS);
  const claims = payloadObject(payload);
  if (claims === undefined) refuse(4, 'payload', 'payload is not a strict JSON object');
  checkEnvelope(claims, expect, nowMs);
  const facts = checkMission(claims, expect);
  return {
    source: 'status',
    origin: expect.issuer,
    missionId: expect.missionId,
    state: facts.state,
    authorityHash: facts.authorityHash,
    expiresAt: facts.expiresAt,
    missionExpiry: facts.missionExpiry,
    issuedAt: claims['iat'] as number,
    checkedAt: formatRfc3339(nowMs),
    // A3.2 step 8 / MST-05: expires_at (+30 s for `active`), capped by mission_expiry and by the
    // pin's max_stale_seconds after this check (MSG-03; 0 = no reliance past this very check), and
    // by the last instant RFC 3339 can write: a validly signed `expires_at` of 9999-12-31T23:59:59Z
    // plus the skew would otherwise become a date no reader (applyStatus, statusReliance, the CLI)
    // can parse back. The cap only ever shortens reliance (fail closed); the harness's class
    // bounds shorten it further (docs/missions.md).
    freshUntil: formatRfc3339(
      Math.min(
        freshUntilMs(facts.state, facts.expiresAt, facts.missionExpiry),
        expect.maxStaleSeconds === undefined ? Infinity : nowMs + expect.maxStaleSeconds * 1000,
        MAX_RFC3339_MS,
      ),
    ),
    jws,
    jwsDigest: digestBytes(jws),
    kid: key.kid,
    jwkThumbprint: key.thumbprint,
  };
}

/** A3.2 steps 2–8 over an HTTP 200 answer. */
export function verifyStatusAnswer(
  answer: { readonly contentType: string | undefined; readonly body: Uint8Array | string },
  keys: MissionKeySource,
  expect: StatusExpectation,
  nowMs: number,
): Promise<VerifiedMissionStatus> {
  return verifyStatusJws(statusBody(answer.contentType, answer.body), keys, expect, nowMs);
}

export type RelianceReason =
  'mission_active' | 'mission_not_active' | 'mission_expired' | 'status_expired' | 'authority_hash_mismatch';

export interface StatusReliance {
  /** True only for the exact state `active`, before `freshUntil`, with a matching authority_hash. */
  readonly relied: boolean;
  readonly reason: RelianceReason;
  /** RFC 3339; equals the answer's `freshUntil` (an action-class bound may shorten it further). */
  readonly freshUntil: string;
}

/**
 * A3.2 step 7 (binding) and step 8 (reliance). `mission_expiry` passed ⇒ expired whatever the
 * answer says; `expires_at` passed ⇒ verified but not relied on — the draft's own example, whose
 * `expires_at` precedes its `iat`, lands here (C-A15); a known binding `authority_hash` that
 * differs ⇒ not active for that binding.
 */
export function statusReliance(
  status: VerifiedMissionStatus,
  nowMs: number,
  bindingAuthorityHash?: string | null,
): StatusReliance {
  const at = (relied: boolean, reason: RelianceReason): StatusReliance => ({
    relied,
    reason,
    freshUntil: status.freshUntil,
  });
  if (status.missionExpiry !== null && parseRfc3339(status.missionExpiry) <= nowMs) {
    return at(false, 'mission_expired');
  }
  if (status.state !== 'active') return at(false, 'mission_not_active');
  if (parseRfc3339(status.freshUntil) <= nowMs) return at(false, 'status_expired');
  if (
    bindingAuthorityHash !== undefined &&
    bindingAuthorityHash !== null &&
    status.authorityHash !== bindingAuthorityHash
  ) {
    return at(false, 'authority_hash_mismatch');
  }
  return at(true, 'mission_active');
}
