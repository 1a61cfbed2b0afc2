/**
 * What the reference issuer signs: Mission Status Responses (`mission-status-response+jwt`,
 * A2.2), lifecycle SETs (`secevent+jwt`, A2.5: one audience, always `exp`), and RFC 9068 access
 * tokens (`at+jwt`) carrying the `mission` claim. Faults bend exactly one thing each.
 */
import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { signJwsWithKey } from '../core/jose.js';
import type { JsonObject } from '../core/json.js';
import { formatRfc3339 } from '../core/time.js';
import { LIFECYCLE_EVENT, SSF_VERIFICATION_EVENT, STATUS_TYP } from '../missions/index.js';
import { faultedState, type StatusFault, type SetFault } from './faults.js';
import type { IssuerKey } from './keys.js';
import { entriesFor, type IssuedMission, type Transition } from './model.js';

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const seconds = (ms: number): number => Math.floor(ms / 1000);

export function secondsToRfc3339(ms: number): string {
  // Whole seconds, `Z`, as the drafts' examples write it.
  return formatRfc3339(Math.floor(ms / 1000) * 1000).replace('.000Z', 'Z');
}

export interface StatusAnswerInput {
  readonly origin: string;
  readonly mission: IssuedMission;
  readonly audience: string;
  readonly sub: string;
  readonly nonce: string;
  readonly nowMs: number;
  /** How long the consumer may rely on `state` (mission.expires_at), seconds. */
  readonly relianceSec: number;
  /** Lifecycle answers omit authorization_details (status draft, Lifecycle worked example). */
  readonly withAuthority: boolean;
}

function statusClaims(i: StatusAnswerInput, fault: StatusFault | undefined): JsonObject {
  const iat =
    fault === 'expired'
      ? seconds(i.nowMs) - 600
      : fault === 'future_iat'
        ? seconds(i.nowMs) + 600
        : seconds(i.nowMs);
  const expiresAtMs = fault === 'past_expires_at' ? i.nowMs - 60_000 : i.nowMs + i.relianceSec * 1000;
  const claims: JsonObject = {
    iss: fault === 'wrong_iss' ? `${i.origin}/other` : i.origin,
    aud: fault === 'wrong_aud' ? `${i.audience}/other` : i.audience,
    sub: fault === 'wrong_sub' ? `${i.sub}-other` : i.sub,
    nonce: fault === 'wrong_nonce' ? `${i.nonce}-other` : i.nonce,
    iat,
    exp: fault === 'expired' ? seconds(i.nowMs) - 120 : iat + 60,
    mission: {
      id: fault === 'other_mission' ? `${i.mission.id}x` : i.mission.id,
      origin: fault === 'origin_mismatch' ? `${i.origin}/other` : i.origin,
      authority_hash: i.mission.authorityHash,
      state: faultedState(i.mission.state, fault),
      expires_at: secondsToRfc3339(expiresAtMs),
      mission_expiry: secondsToRfc3339(i.mission.missionExpiryMs),
    },
  };
  if (i.withAuthority) claims['authorization_details'] = entriesFor(i.mission.authoritySet, i.audience);
  return claims;
}

async function hs256WithJwkBytes(claims: JsonObject, key: IssuerKey, typ: string): Promise<string> {
  // A7.3: HMAC keyed with the public JWK's bytes, the classic algorithm-confusion attack.
  const secret = Buffer.from(JSON.stringify(key.publicJwk));
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: key.kid, typ }).sign(secret);
}

/** A compact JWS of `claims` under `key`, with the header/signature faults applied. */
export async function signClaims(
  claims: JsonObject,
  key: IssuerKey,
  typ: string,
  fault: StatusFault | SetFault | undefined,
): Promise<string> {
  if (fault === 'alg_none') return `${b64({ alg: 'none', kid: key.kid, typ })}.${b64(claims)}.`;
  if (fault === 'hs256') return hs256WithJwkBytes(claims, key, typ);
  const effectiveTyp =
    fault === 'wrong_typ'
      ? 'JWT'
      : fault === 'typ_at_jwt'
        ? 'at+jwt'
        : fault === 'typ_secevent'
          ? 'secevent+jwt'
          : typ;
  if (fault === 'no_typ') {
    const header = { alg: key.alg, kid: key.kid };
    const signed = await signJwsWithKey(Buffer.from(JSON.stringify(claims)), key, typ);
    return `${b64(header)}.${signed.split('.')[1]!}.${signed.split('.')[2]!}`;
  }
  const signingKey = fault === 'wrong_kid' ? { ...key, kid: `${key.kid}-unknown` } : key;
  const jws = await signJwsWithKey(Buffer.from(JSON.stringify(claims)), signingKey, effectiveTyp);
  if (fault !== 'bad_signature') return jws;
  const [h, p, s] = jws.split('.') as [string, string, string];
  const bytes = Buffer.from(s, 'base64url');
  bytes[0] = bytes[0]! ^ 0xff;
  return `${h}.${p}.${bytes.toString('base64url')}`;
}

export async function signStatusAnswer(
  i: StatusAnswerInput,
  key: IssuerKey,
  fault: StatusFault | undefined,
): Promise<string> {
  return signClaims(statusClaims(i, fault), key, STATUS_TYP, fault);
}

/** An RFC 9701-shaped introspection JWT (`token-introspection+jwt`): never a Mission Status answer. */
export async function signIntrospectionLookalike(i: StatusAnswerInput, key: IssuerKey): Promise<string> {
  const claims: JsonObject = { ...statusClaims(i, undefined), active: true };
  return signJwsWithKey(Buffer.from(JSON.stringify(claims)), key, 'token-introspection+jwt');
}

export interface SetInput {
  readonly origin: string;
  readonly audience: string;
  readonly mission: IssuedMission;
  readonly transition: Transition;
  readonly nowMs: number;
  readonly lifetimeSec: number;
  readonly jti?: string;
}

export function newJti(): string {
  return `set_${randomBytes(12).toString('base64url')}`;
}

export function setClaims(i: SetInput, fault: SetFault | undefined): JsonObject {
  const t = i.transition;
  const event: JsonObject = {
    mission_id: i.mission.id,
    mission_origin: fault === 'origin_mismatch' ? `${i.origin}/other` : i.origin,
    state: faultedState(t.state, fault),
    version: t.version,
    committed_at: secondsToRfc3339(t.committedAtMs),
  };
  if (t.priorState !== null) event['prior_state'] = t.priorState;
  if (t.reason !== null) event['reason'] = t.reason;
  const iat = fault === 'expired' ? seconds(i.nowMs) - 900 : seconds(i.nowMs);
  const claims: JsonObject = {
    iss: fault === 'wrong_iss' ? `${i.origin}/other` : i.origin,
    aud: fault === 'wrong_aud' ? `${i.audience}/other` : i.audience,
    iat,
    jti: i.jti ?? newJti(),
    events: { [LIFECYCLE_EVENT]: event },
  };
  if (fault !== 'no_exp') claims['exp'] = iat + (fault === 'expired' ? 300 : i.lifetimeSec);
  return claims;
}

export function verificationClaims(
  origin: string,
  audience: string,
  state: string | null,
  nowMs: number,
  lifetimeSec: number,
): JsonObject {
  const iat = seconds(nowMs);
  return {
    iss: origin,
    aud: audience,
    iat,
    exp: iat + lifetimeSec,
    jti: newJti(),
    events: { [SSF_VERIFICATION_EVENT]: state === null ? {} : { state } },
  };
}

export interface AccessTokenInput {
  readonly origin: string;
  readonly mission: IssuedMission;
  readonly clientId: string;
  readonly resource: string;
  readonly nowMs: number;
  readonly lifetimeSec: number;
}

/** RFC 9068 access token; `exp` never past `mission_expiry` (MCO-05). */
export async function signAccessToken(
  i: AccessTokenInput,
  key: IssuerKey,
): Promise<{ token: string; expiresIn: number }> {
  const iat = seconds(i.nowMs);
  const exp = Math.min(iat + i.lifetimeSec, seconds(i.mission.missionExpiryMs));
  const claims: JsonObject = {
    iss: i.origin,
    sub: i.clientId,
    aud: i.resource,
    client_id: i.clientId,
    iat,
    exp,
    jti: `at_${randomBytes(12).toString('base64url')}`,
    mission: { id: i.mission.id, origin: i.origin, authority_hash: i.mission.authorityHash },
    authorization_details: entriesFor(i.mission.authoritySet, i.resource),
  };
  return {
    token: await signJwsWithKey(Buffer.from(JSON.stringify(claims)), key, 'at+jwt'),
    expiresIn: exp - iat,
  };
}
