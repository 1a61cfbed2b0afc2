/**
 * What registering a Mission issuer asks for (A5 "Issuer pin", issue 11 §2): the pin, and the SSF
 * stream's bearer — for push (RFC 8935) the secret the issuer presents, stored as its digest
 * only; for poll (RFC 8936) a reference (`env:NAME`, `file:PATH`) to the secret Baton presents,
 * never the secret itself. Pure: the same reader serves the HTTP route and the config file.
 */
import { digestBytes } from '../core/digest.js';
import { BatonError, type BatonErrorCode } from '../core/errors.js';
import { COMPACT_SIGNATURE_ALGORITHMS } from '../core/jose.js';
import {
  issuerPinDigest,
  parseIssuerPin,
  PUSH_DELIVERY,
  POLL_DELIVERY,
  type IssuerPin,
} from './issuer-pin.js';

/** A secret reference: an environment variable or a file, resolved by `baton serve`. */
export const SECRET_REF = /^(env:[A-Za-z_][A-Za-z0-9_]{0,127}|file:[^\0]{1,1024})$/;
/** 32 characters at least: a bearer is a shared secret, not a password. */
export const BEARER = /^[\x21-\x7e]{32,512}$/;

export interface IssuerRegistration {
  readonly pin: IssuerPin;
  readonly pinDigest: string;
  /** sha-256 of the push bearer (RFC 8935 streams), never the bearer. */
  readonly bearerDigest: string | null;
  readonly pollBearerRef: string | null;
}

function fail(code: BatonErrorCode, path: string, why: string): never {
  throw new BatonError(code, `${path}: ${why}`, { path });
}

/** The digest a presented bearer is compared against (constant time, `digestEquals`). */
export function bearerDigest(bearer: string): string {
  return digestBytes(bearer);
}

/**
 * The pin format admits every asymmetric JWS algorithm (C-A27), but Baton verifies Mission answers
 * and SETs with Ed25519 and ECDSA only (`checkCompactSignature`): a pin naming RS* or PS* would
 * look as if it accepted an issuer signing with them while every such answer is refused at its
 * signature. Refused at registration, before anything is stored, so the operator learns it now
 * rather than from Missions that never become active.
 */
function refuseUnverifiableAlgorithms(pin: IssuerPin, code: BatonErrorCode, path: string): void {
  const i = pin.algorithms.findIndex((alg) => !COMPACT_SIGNATURE_ALGORITHMS.includes(alg));
  if (i < 0) return;
  fail(
    code,
    `${path}.algorithms[${i}]`,
    `${pin.algorithms[i] ?? '?'} is not an algorithm Baton verifies Mission Status answers and SETs with ` +
      `(${COMPACT_SIGNATURE_ALGORITHMS.join(', ')}); an answer signed with it would never verify`,
  );
}

/**
 * `{pin, pushBearer?, pollBearerRef?}` → a registration. A push stream needs `pushBearer`, a poll
 * stream `pollBearerRef`, a pin without a stream neither; anything else is refused (`code`), as is a
 * pin whose `algorithms` names one Baton cannot verify answers with (RS*, PS*).
 * Plain HTTP is accepted to a loopback host only (the pin's own rule), so a registry can pin the
 * reference issuer on 127.0.0.1 but never a remote issuer without TLS.
 */
export function readIssuerRegistration(
  value: unknown,
  code: BatonErrorCode = 'input_invalid',
  path = '$',
): IssuerRegistration {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    fail(code, path, 'must be an object');
  const f = value as Record<string, unknown>;
  for (const k of Object.keys(f))
    if (!['pin', 'pushBearer', 'pollBearerRef'].includes(k))
      fail(code, `${path}.${k}`, 'is not allowed here');
  let pin: IssuerPin;
  try {
    pin = parseIssuerPin(f['pin'], { allowLoopbackHttp: true });
  } catch (error) {
    if (error instanceof BatonError && code !== 'input_invalid') fail(code, `${path}.pin`, error.message);
    throw error;
  }
  refuseUnverifiableAlgorithms(pin, code, `${path}.pin`);
  const push = f['pushBearer'];
  const ref = f['pollBearerRef'];
  if (push !== undefined && (typeof push !== 'string' || !BEARER.test(push)))
    fail(code, `${path}.pushBearer`, 'must be 32..512 printable ASCII characters');
  if (ref !== undefined && (typeof ref !== 'string' || !SECRET_REF.test(ref)))
    fail(code, `${path}.pollBearerRef`, 'must be env:NAME or file:PATH');
  const delivery = pin.stream?.delivery;
  if ((delivery === PUSH_DELIVERY) !== (push !== undefined))
    fail(code, `${path}.pushBearer`, 'is required exactly when the pin streams by push (RFC 8935)');
  if ((delivery === POLL_DELIVERY) !== (ref !== undefined))
    fail(code, `${path}.pollBearerRef`, 'is required exactly when the pin streams by poll (RFC 8936)');
  return {
    pin,
    pinDigest: issuerPinDigest(pin),
    bearerDigest: typeof push === 'string' ? bearerDigest(push) : null,
    pollBearerRef: typeof ref === 'string' ? ref : null,
  };
}

/** A pinned issuer's SSF stream credential: the push bearer's digest or the poll bearer's reference. */
export interface StreamCredential {
  readonly bearerDigest: string | null;
  readonly pollBearerRef: string | null;
}

/**
 * `{pushBearer}` or `{pollBearerRef}` → the stream credential replacing a pinned issuer's (docs/
 * missions.md "Rotating the stream bearer"). Exactly the member the pin's `stream.delivery` needs,
 * by the rules registration reads it with (`BEARER`, `SECRET_REF`); a pin without a stream has no
 * bearer to replace. Only the credential changes: the pin itself stays immutable.
 */
export function readBearerReplacement(
  value: unknown,
  pin: IssuerPin,
  code: BatonErrorCode = 'input_invalid',
  path = '$',
): StreamCredential {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    fail(code, path, 'must be an object');
  const f = value as Record<string, unknown>;
  for (const k of Object.keys(f))
    if (!['pushBearer', 'pollBearerRef'].includes(k)) fail(code, `${path}.${k}`, 'is not allowed here');
  const delivery = pin.stream?.delivery;
  if (delivery === PUSH_DELIVERY) {
    if (f['pollBearerRef'] !== undefined)
      fail(code, `${path}.pollBearerRef`, 'is not allowed: the pin streams by push (RFC 8935)');
    const push = f['pushBearer'];
    if (typeof push !== 'string' || !BEARER.test(push))
      fail(
        code,
        `${path}.pushBearer`,
        'must be 32..512 printable ASCII characters (the pin streams by push)',
      );
    return { bearerDigest: bearerDigest(push), pollBearerRef: null };
  }
  if (delivery === POLL_DELIVERY) {
    if (f['pushBearer'] !== undefined)
      fail(code, `${path}.pushBearer`, 'is not allowed: the pin streams by poll (RFC 8936)');
    const ref = f['pollBearerRef'];
    if (typeof ref !== 'string' || !SECRET_REF.test(ref))
      fail(code, `${path}.pollBearerRef`, 'must be env:NAME or file:PATH (the pin streams by poll)');
    return { bearerDigest: null, pollBearerRef: ref };
  }
  return fail(
    code,
    path,
    'the pinned issuer has no SSF stream (its pin.stream is null): no bearer to replace',
  );
}
