/**
 * A thin layer over `jose` (DESIGN.md §9): compact JWS and JWT with an explicit algorithm allowlist,
 * explicit typing (RFC 8725 §3.11), time from an injected Clock, Baton's kid rule, and jose's errors
 * mapped to BatonError codes. jose does the cryptography and the claim checks, except the compact
 * Ed25519 JWS with one key object, which node:crypto signs and verifies directly (same bytes,
 * docs/crypto.md "Compact Ed25519 JWS"); this file decides what is allowed and how failures are named.
 */
import { KeyObject, sign as cryptoSign, verify as cryptoVerify } from 'node:crypto';
import {
  CompactSign,
  compactVerify,
  createLocalJWKSet,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  SignJWT,
  type CompactJWSHeaderParameters,
  type CryptoKey,
  type JSONWebKeySet,
  type JWK,
  type JWSHeaderParameters,
  type JWTPayload,
  type LocalJWKSet,
} from 'jose';
import type { Clock } from './clock.js';
import {
  ed25519Kid,
  exportEd25519PublicJwk,
  importEd25519PublicKey,
  keyDefectOf,
  type Ed25519PublicJwk,
} from './ed25519.js';
import { signatureDefect } from './ed25519-policy.js';
import { BatonError, type BatonErrorCode } from './errors.js';

/** Asymmetric JWS algorithms an allowlist may name; 'none' and HMAC can never be allowed. */
export const ASYMMETRIC_JWS_ALGORITHMS = [
  'EdDSA',
  'Ed25519',
  'ES256',
  'ES384',
  'ES512',
  'PS256',
  'PS384',
  'PS512',
  'RS256',
  'RS384',
  'RS512',
] as const;
export type JwsAlgorithm = (typeof ASYMMETRIC_JWS_ALGORITHMS)[number];
export const DEFAULT_JWS_ALGORITHMS: readonly JwsAlgorithm[] = Object.freeze(['EdDSA']);
/**
 * The Mission drafts' typs (`mission-status-response+jwt`, `secevent+jwt`, `at+jwt`) are signed by
 * other parties, whose examples use ES256 (C-A27): their default allowlist adds it to EdDSA.
 */
export const MISSION_JWS_ALGORITHMS: readonly JwsAlgorithm[] = Object.freeze(['ES256', 'EdDSA']);

/** A key set resolver (jose's createLocalJWKSet / createRemoteJWKSet). */
export type KeyResolver =
  | LocalJWKSet
  | ((header: JWSHeaderParameters) => Promise<KeyObject>)
  | ((header: JWSHeaderParameters) => Promise<CryptoKey>);
export type VerificationKey = KeyObject | CryptoKey | KeyResolver;

export interface VerifiedHeader extends JWSHeaderParameters {
  alg: string;
  kid: string;
}

const JOSE_CODES: Readonly<Record<string, BatonErrorCode>> = {
  ERR_JOSE_ALG_NOT_ALLOWED: 'jose_algorithm_not_allowed',
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: 'signature_invalid',
  ERR_JWT_EXPIRED: 'jose_expired',
  ERR_JWT_CLAIM_VALIDATION_FAILED: 'jose_claim_invalid',
  ERR_JWKS_NO_MATCHING_KEY: 'kid_mismatch',
  ERR_JWK_INVALID: 'key_invalid',
  ERR_JWKS_INVALID: 'key_invalid',
};

/**
 * jose's errors → BatonError. jose's claim errors carry the decoded payload, so they are not kept
 * as `cause` (messages and causes must not leak token contents); the jose code, claim name and
 * reason are kept as details instead.
 */
export function mapJoseError(error: unknown): BatonError {
  if (error instanceof BatonError) return error;
  if (error instanceof errors.JOSEError) {
    const code = JOSE_CODES[error.code] ?? 'jose_invalid';
    const details: Record<string, unknown> = { joseCode: error.code };
    if (error instanceof errors.JWTClaimValidationFailed || error instanceof errors.JWTExpired) {
      details['claim'] = error.claim;
      details['reason'] = error.reason;
    }
    return new BatonError(code, `JOSE verification failed (${error.code})`, details);
  }
  // jose raises TypeError for a key that does not fit the algorithm; its messages name types only.
  if (error instanceof TypeError) return new BatonError('key_invalid', error.message, {}, { cause: error });
  return new BatonError('internal', 'unexpected JOSE failure', {}, { cause: error });
}

function checkAllowlist(algorithms: readonly string[]): readonly JwsAlgorithm[] {
  const allowed = new Set<string>(ASYMMETRIC_JWS_ALGORITHMS);
  for (const alg of algorithms) {
    if (!allowed.has(alg)) {
      throw new BatonError('jose_algorithm_not_allowed', 'allowlist names a non-asymmetric algorithm', {
        alg: alg.slice(0, 16),
      });
    }
  }
  return algorithms as readonly JwsAlgorithm[];
}

/** RFC 7515 §4.1.9: "application/" may be omitted and media types compare case-insensitively. */
function normalizeTyp(typ: string): string {
  const lower = typ.toLowerCase();
  return lower.startsWith('application/') ? lower.slice('application/'.length) : lower;
}

function signatureBytes(token: string): Buffer {
  const segment = token.slice(token.lastIndexOf('.') + 1);
  return Buffer.from(segment, 'base64url');
}

/**
 * Checks on the unverified header before any key is used: the algorithm must be on the allowlist,
 * a kid must be present (key sets select by kid) and, for a single Ed25519 key, equal its kid by
 * the kid rule; that key must pass the Ed25519 key policy.
 */
function precheck(token: string, key: VerificationKey, algorithms: readonly JwsAlgorithm[]): VerifiedHeader {
  let header: JWSHeaderParameters;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    // Not kept as cause: a JSON.parse message may quote the header text.
    throw new BatonError('jose_invalid', 'malformed JWS protected header');
  }
  const { alg, kid } = header;
  if (typeof alg !== 'string' || !(algorithms as readonly string[]).includes(alg)) {
    throw new BatonError('jose_algorithm_not_allowed', 'JWS algorithm is not on the allowlist', {
      alg: String(alg).slice(0, 16),
    });
  }
  if (typeof kid !== 'string' || kid === '') throw new BatonError('jose_invalid', 'JWS header has no kid');
  // Baton's signature rules (64 bytes, canonical R, S < L) whatever the OpenSSL build does.
  if ((alg === 'EdDSA' || alg === 'Ed25519') && signatureDefect(signatureBytes(token)) !== undefined) {
    throw new BatonError('signature_invalid', 'Ed25519 signature refused by policy');
  }
  if (key instanceof KeyObject && key.asymmetricKeyType === 'ed25519') {
    const expected = ed25519Kid(key);
    if (kid !== expected) throw new BatonError('kid_mismatch', 'JWS kid does not name the verification key');
    const defect = keyDefectOf(key);
    if (defect !== undefined) {
      throw new BatonError('key_invalid', `Ed25519 public key refused by policy: ${defect}`, {
        reason: defect,
      });
    }
  }
  return { ...header, alg, kid };
}

interface SigningHeader extends CompactJWSHeaderParameters {
  alg: 'EdDSA' | 'Ed25519';
  typ: string;
  kid: string;
}

function signingHeader(privateKey: KeyObject, typ: string, alg: 'EdDSA' | 'Ed25519'): SigningHeader {
  if (privateKey.type !== 'private' || privateKey.asymmetricKeyType !== 'ed25519') {
    throw new BatonError('key_unsupported', 'Baton signs with Ed25519 private keys only');
  }
  return { alg, typ, kid: ed25519Kid(privateKey) };
}

export interface SignJwsOptions {
  typ: string;
  alg?: 'EdDSA' | 'Ed25519';
}

/** Compact JWS over `payload` with header {alg, typ, kid}; kid follows the kid rule. */
export async function signJws(
  payload: Uint8Array,
  privateKey: KeyObject,
  options: SignJwsOptions,
): Promise<string> {
  const header = signingHeader(privateKey, options.typ, options.alg ?? 'EdDSA');
  return Promise.resolve(compactEd25519(header, payload, privateKey));
}

/**
 * RFC 7515 §7.1 compact serialization signed with node:crypto: the same bytes jose's CompactSign
 * writes for this header (JSON.stringify in {alg, typ, kid} order; Ed25519 is deterministic), at a
 * fraction of its cost (jose goes through WebCrypto's thread pool per signature; continuity records
 * and Harness Evidence are signed per event, bench/observations.bench.ts).
 */
function compactEd25519(header: SigningHeader, payload: Uint8Array, privateKey: KeyObject): string {
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(payload).toString('base64url')}`;
  return `${input}.${cryptoSign(null, Buffer.from(input, 'latin1'), privateKey).toString('base64url')}`;
}

/** A private key with its own kid (a Mission issuer's ES256 or Ed25519 key, not Baton's kid rule). */
export interface ForeignSigningKey {
  privateKey: KeyObject;
  kid: string;
  alg: 'ES256' | 'EdDSA';
}

/**
 * Compact JWS under a key whose kid is its owner's (the reference Mission issuer, a client
 * assertion): ES256 on P-256 or EdDSA on Ed25519 only.
 */
export async function signJwsWithKey(
  payload: Uint8Array,
  key: ForeignSigningKey,
  typ: string,
): Promise<string> {
  const curve = key.privateKey.asymmetricKeyDetails?.namedCurve;
  const fits =
    key.privateKey.type === 'private' &&
    ((key.alg === 'ES256' && key.privateKey.asymmetricKeyType === 'ec' && curve === 'prime256v1') ||
      (key.alg === 'EdDSA' && key.privateKey.asymmetricKeyType === 'ed25519'));
  if (!fits) throw new BatonError('key_unsupported', 'ES256 needs a P-256 key, EdDSA an Ed25519 key');
  if (key.kid === '') throw new BatonError('key_invalid', 'a signing key needs a kid');
  try {
    return await new CompactSign(payload)
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ })
      .sign(key.privateKey);
  } catch (error) {
    throw mapJoseError(error);
  }
}

/**
 * The algorithms `checkCompactSignature` verifies (Ed25519 and the three ECDSA curves). Mission
 * Status answers and SETs are checked with it alone, so an issuer pin's allowlist naming anything
 * else (RS*, PS*) could never verify an answer: registration refuses such a pin up front.
 */
export const COMPACT_SIGNATURE_ALGORITHMS: readonly JwsAlgorithm[] = Object.freeze([
  'EdDSA',
  'Ed25519',
  'ES256',
  'ES384',
  'ES512',
]);

const EC_CURVES: Readonly<Record<string, { curve: string; hash: string; size: number }>> = {
  ES256: { curve: 'prime256v1', hash: 'sha256', size: 64 },
  ES384: { curve: 'secp384r1', hash: 'sha384', size: 96 },
  ES512: { curve: 'secp521r1', hash: 'sha512', size: 132 },
};

/**
 * The signature check alone of a compact JWS whose protected header the caller has already checked
 * (alg on its allowlist, typ, kid, no crit), with node:crypto directly. It runs node:crypto's
 * callback form (the libuv threadpool): measured ~3.5x the one-shot synchronous verify on this
 * machine, and Mission SETs and status answers are verified on every delivery
 * (bench/missions-verify.bench.ts). ECDSA signatures must be exactly r||s of the curve's size;
 * Ed25519 signatures pass Baton's signature policy. A key that does not fit `alg` fails.
 */
export async function checkCompactSignature(
  jws: string,
  key: KeyObject,
  alg: JwsAlgorithm,
): Promise<boolean> {
  const dot = jws.lastIndexOf('.');
  if (dot < 0 || key.type !== 'public') return false;
  const input = Buffer.from(jws.slice(0, dot), 'latin1');
  const signature = Buffer.from(jws.slice(dot + 1), 'base64url');
  if (signature.toString('base64url') !== jws.slice(dot + 1)) return false;
  const ec = EC_CURVES[alg];
  if (ec !== undefined) {
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== ec.curve) return false;
    if (signature.length !== ec.size) return false;
    return verifyOffThread(ec.hash, input, { key, dsaEncoding: 'ieee-p1363' }, signature);
  }
  if (alg === 'EdDSA' || alg === 'Ed25519') {
    if (key.asymmetricKeyType !== 'ed25519' || signatureDefect(signature) !== undefined) return false;
    if (keyDefectOf(key) !== undefined) return false;
    return verifyOffThread(null, input, key, signature);
  }
  return false;
}

/**
 * The common case without jose's WebCrypto round trip: one Ed25519 KeyObject, an EdDSA header with
 * nothing jose would interpret beyond alg/typ/kid (no `crit`, no `b64`, no `jwk`…), canonical
 * base64url segments. The signature is checked by checkCompactSignature (Baton's Ed25519 policy);
 * a bad one is `signature_invalid` as from jose. Anything else returns undefined: jose decides.
 */
async function directEd25519Payload(
  jws: string,
  key: VerificationKey,
  header: VerifiedHeader,
): Promise<Uint8Array | undefined> {
  if (!(key instanceof KeyObject) || key.type !== 'public' || key.asymmetricKeyType !== 'ed25519')
    return undefined;
  if (header.alg !== 'EdDSA' || Object.keys(header).some((n) => !PLAIN_HEADER.has(n))) return undefined;
  const parts = jws.split('.');
  if (parts.length !== 3) return undefined;
  const payload = Buffer.from(parts[1] ?? '', 'base64url');
  if (payload.toString('base64url') !== parts[1]) return undefined;
  if (!(await checkCompactSignature(jws, key, 'EdDSA')))
    throw new BatonError(
      'signature_invalid',
      'JOSE verification failed (ERR_JWS_SIGNATURE_VERIFICATION_FAILED)',
      {
        joseCode: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
      },
    );
  return new Uint8Array(payload);
}

const PLAIN_HEADER = new Set(['alg', 'typ', 'kid', 'cty']);

function verifyOffThread(
  hash: string | null,
  input: Buffer,
  key: KeyObject | { key: KeyObject; dsaEncoding: 'ieee-p1363' },
  signature: Buffer,
): Promise<boolean> {
  return new Promise((resolve, reject) => {
    cryptoVerify(hash, input, key, signature, (error, ok) => (error === null ? resolve(ok) : reject(error)));
  });
}

export interface VerifyJwsOptions {
  typ: string;
  algorithms?: readonly JwsAlgorithm[];
}

export interface VerifiedJws {
  payload: Uint8Array;
  header: VerifiedHeader;
}

export async function verifyJws(
  jws: string,
  key: VerificationKey,
  options: VerifyJwsOptions,
): Promise<VerifiedJws> {
  const header = precheck(jws, key, checkAllowlist(options.algorithms ?? DEFAULT_JWS_ALGORITHMS));
  let payload: Uint8Array;
  const direct = await directEd25519Payload(jws, key, header);
  if (direct !== undefined) payload = direct;
  else {
    try {
      ({ payload } = await compactVerify(jws, key, { algorithms: [header.alg] }));
    } catch (error) {
      throw mapJoseError(error);
    }
  }
  if (typeof header.typ !== 'string' || normalizeTyp(header.typ) !== normalizeTyp(options.typ)) {
    throw new BatonError('jose_claim_invalid', 'unexpected JWS "typ"', {
      claim: 'typ',
      reason: 'check_failed',
    });
  }
  return { payload, header };
}

export interface SignJwtOptions {
  clock: Clock;
  typ: string;
  /** Baton never issues a JWT without an expiry. */
  expiresInSec: number;
  issuer?: string;
  audience?: string | string[];
  subject?: string;
  jti?: string;
  alg?: 'EdDSA' | 'Ed25519';
}

export async function signJwt(
  claims: JWTPayload,
  privateKey: KeyObject,
  options: SignJwtOptions,
): Promise<string> {
  const header = signingHeader(privateKey, options.typ, options.alg ?? 'EdDSA');
  if (!Number.isSafeInteger(options.expiresInSec) || options.expiresInSec <= 0) {
    throw new BatonError('input_invalid', 'expiresInSec must be a positive integer');
  }
  const now = Math.floor(options.clock.wallMs() / 1000);
  const jwt = new SignJWT(claims)
    .setProtectedHeader(header)
    .setIssuedAt(now)
    .setExpirationTime(now + options.expiresInSec);
  if (options.issuer !== undefined) jwt.setIssuer(options.issuer);
  if (options.audience !== undefined) jwt.setAudience(options.audience);
  if (options.subject !== undefined) jwt.setSubject(options.subject);
  if (options.jti !== undefined) jwt.setJti(options.jti);
  try {
    return await jwt.sign(privateKey);
  } catch (error) {
    throw mapJoseError(error);
  }
}

export interface VerifyJwtOptions {
  clock: Clock;
  typ: string;
  /** Allowed skew in seconds for exp/nbf/iat (default 0: fail closed). */
  clockToleranceSec?: number;
  issuer?: string | string[];
  audience?: string | string[];
  subject?: string;
  maxTokenAgeSec?: number;
  /** Claims that must be present (default ['exp']: a token without expiry is refused). */
  requiredClaims?: string[];
  algorithms?: readonly JwsAlgorithm[];
}

export interface VerifiedJwt {
  payload: JWTPayload;
  header: VerifiedHeader;
}

export async function verifyJwt(
  token: string,
  key: VerificationKey,
  options: VerifyJwtOptions,
): Promise<VerifiedJwt> {
  const header = precheck(token, key, checkAllowlist(options.algorithms ?? DEFAULT_JWS_ALGORITHMS));
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: [header.alg],
      typ: options.typ,
      currentDate: new Date(options.clock.wallMs()),
      clockTolerance: options.clockToleranceSec ?? 0,
      requiredClaims: options.requiredClaims ?? ['exp'],
      ...(options.issuer !== undefined && { issuer: options.issuer }),
      ...(options.audience !== undefined && { audience: options.audience }),
      ...(options.subject !== undefined && { subject: options.subject }),
      ...(options.maxTokenAgeSec !== undefined && { maxTokenAge: options.maxTokenAgeSec }),
    });
    return { payload, header };
  } catch (error) {
    throw mapJoseError(error);
  }
}

export type PublishedJwk = Ed25519PublicJwk & { use: 'sig'; alg: 'EdDSA' };

/** Our public keys as a JWKS, each kid by the kid rule. */
export function publishJwks(keys: readonly KeyObject[]): { keys: PublishedJwk[] } {
  const published = keys.map((key): PublishedJwk => ({
    ...exportEd25519PublicJwk(key),
    use: 'sig',
    alg: 'EdDSA',
  }));
  if (new Set(published.map((jwk) => jwk.kid)).size !== published.length) {
    throw new BatonError('key_invalid', 'a JWKS must not list the same key twice');
  }
  return { keys: published };
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];

function checkJwk(jwk: JWK, enforceKidRule: boolean): string {
  if (typeof jwk.kid !== 'string' || jwk.kid === '')
    throw new BatonError('key_invalid', 'every JWK needs a kid');
  if (PRIVATE_MEMBERS.some((member) => Object.hasOwn(jwk, member))) {
    throw new BatonError('key_invalid', 'a JWKS must hold public keys only', { kid: jwk.kid.slice(0, 80) });
  }
  if (jwk.kty === 'OKP') {
    const key = importEd25519PublicKey({ jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x } });
    if (enforceKidRule && jwk.kid !== ed25519Kid(key)) {
      throw new BatonError('kid_mismatch', 'JWK kid does not follow the kid rule', {
        kid: jwk.kid.slice(0, 80),
      });
    }
  }
  return jwk.kid;
}

export interface LocalJwksOptions {
  /** Require Ed25519 keys' kid to be 'sha256:' + hex SHA-256 of the raw key (default true). */
  enforceKidRule?: boolean;
}

/**
 * A jose local key set after Baton's checks: public keys only, a kid on every key and no kid twice,
 * Ed25519 keys passing the key policy and (by default) the kid rule.
 */
export function createLocalJwks(jwks: JSONWebKeySet, options: LocalJwksOptions = {}): LocalJWKSet {
  if (typeof jwks !== 'object' || jwks === null || !Array.isArray(jwks.keys)) {
    throw new BatonError('key_invalid', 'a JWKS is an object with a "keys" array');
  }
  const kids = jwks.keys.map((jwk) => checkJwk(jwk, options.enforceKidRule ?? true));
  if (new Set(kids).size !== kids.length) throw new BatonError('key_invalid', 'JWKS lists a kid twice');
  try {
    return createLocalJWKSet(jwks);
  } catch (error) {
    throw mapJoseError(error);
  }
}
