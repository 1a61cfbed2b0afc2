/**
 * Ed25519 keys and signatures over node:crypto (DESIGN.md §9). Raw keys go through fixed DER
 * prefixes (RFC 8410), so no hand-written curve code signs or verifies anything. Verification adds
 * Baton's policy (src/core/ed25519-policy.ts, docs/crypto.md) on top of OpenSSL's cofactorless check.
 * The kid rule — 'sha256:' + lowercase hex SHA-256 of the raw 32-byte public key — is PTCL's
 * (DESIGN.md §6), used for every Baton key.
 */
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';
import { type Sha256HexTag, sha256HexTag } from './digest.js';
import { publicKeyDefect, signatureDefect, type PublicKeyDefect } from './ed25519-policy.js';
import { BatonError } from './errors.js';

/** SubjectPublicKeyInfo for id-Ed25519 (1.3.101.112) with a 32-byte BIT STRING (RFC 8410 §4). */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
/** PKCS#8 v1 PrivateKeyInfo for id-Ed25519 wrapping a 32-byte OCTET STRING seed (RFC 8410 §7). */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface Ed25519KeyPair {
  publicKey: KeyObject;
  privateKey: KeyObject;
  kid: Sha256HexTag;
}

/** A type alias, not an interface, so it is assignable to jose's JWK (implicit index signature). */
export type Ed25519PublicJwk = {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: Sha256HexTag;
};

/**
 * A JWK as a caller hands it in: the members read here, each checked before use. Baton's own type,
 * not node:crypto's `JsonWebKey`, which later @types/node versions no longer export: a declaration
 * naming it would not type-check in a consumer with another @types/node.
 */
export interface JwkInput {
  readonly kty?: unknown;
  readonly crv?: unknown;
  readonly x?: unknown;
  readonly d?: unknown;
}

export type Ed25519PublicKeyInput = { raw: Uint8Array } | { jwk: JwkInput } | { pem: string };
export type Ed25519PrivateKeyInput = { seed: Uint8Array } | { jwk: JwkInput } | { pem: string };

function assertEd25519(key: KeyObject, type: 'public' | 'private' | 'any'): void {
  if (key.type === 'secret' || key.asymmetricKeyType !== 'ed25519') {
    throw new BatonError('key_unsupported', 'not an Ed25519 key', {
      keyType: key.asymmetricKeyType ?? key.type,
    });
  }
  if (type !== 'any' && key.type !== type) {
    throw new BatonError('key_invalid', `an Ed25519 ${type} key is required`, { keyType: key.type });
  }
}

export function generateEd25519KeyPair(): Ed25519KeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { publicKey, privateKey, kid: ed25519Kid(publicKey) };
}

/** The raw 32-byte public key; a private key yields its public half. */
/** KeyObjects are immutable: their raw public key is exported once (signing and kid checks are hot). */
const rawPublicKeys = new WeakMap<KeyObject, Buffer>();

export function publicKeyRaw(k: KeyObject): Buffer {
  let raw = rawPublicKeys.get(k);
  if (raw === undefined) {
    assertEd25519(k, 'any');
    const pub = k.type === 'private' ? createPublicKey(k) : k;
    raw = pub.export({ format: 'der', type: 'spki' }).subarray(SPKI_PREFIX.length);
    rawPublicKeys.set(k, raw);
  }
  return Buffer.from(raw); // a copy: the cached bytes stay what the key says
}

/** The kid rule: 'sha256:' + lowercase hex SHA-256 of the raw 32-byte public key. */
export function ed25519Kid(publicKey: KeyObject | Uint8Array): Sha256HexTag {
  if (publicKey instanceof Uint8Array) {
    if (publicKey.length !== 32)
      throw new BatonError('key_invalid', 'raw Ed25519 public key must be 32 bytes');
    return sha256HexTag(publicKey);
  }
  return sha256HexTag(publicKeyRaw(publicKey));
}

function onlyOne(input: object, kinds: readonly string[]): string {
  const present = kinds.filter((kind) => Object.hasOwn(input, kind));
  const [kind] = present;
  if (present.length !== 1 || kind === undefined) {
    throw new BatonError('key_invalid', `exactly one of ${kinds.join(', ')} is required`);
  }
  return kind;
}

function bytes32(value: unknown, what: string): Buffer {
  if (!(value instanceof Uint8Array) || value.length !== 32) {
    throw new BatonError('key_invalid', `${what} must be 32 bytes`);
  }
  return Buffer.from(value);
}

/** A JWK member holding exactly 32 bytes of canonical base64url (RFC 8037 §2). */
function jwkBytes(jwk: JwkInput, member: 'x' | 'd'): Buffer {
  const text: unknown = jwk[member];
  const decoded = typeof text === 'string' ? Buffer.from(text, 'base64url') : undefined;
  if (decoded === undefined || decoded.length !== 32 || decoded.toString('base64url') !== text) {
    throw new BatonError('key_invalid', `JWK "${member}" must be 32 bytes of base64url`);
  }
  return decoded;
}

function assertOkpEd25519(jwk: JwkInput): void {
  if (typeof jwk !== 'object' || jwk === null) throw new BatonError('key_invalid', 'JWK must be an object');
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') {
    throw new BatonError('key_unsupported', 'JWK is not an OKP Ed25519 key', {
      kty: String(jwk.kty).slice(0, 16),
      crv: String(jwk.crv).slice(0, 16),
    });
  }
}

function pemKey(pem: unknown, label: 'PUBLIC KEY' | 'PRIVATE KEY'): KeyObject {
  // The label is checked so a private key PEM is never accepted where a public key is expected.
  const mixed = label === 'PUBLIC KEY' && typeof pem === 'string' && pem.includes('PRIVATE KEY');
  // Said plainly: a private key where a public one belongs is an operator's slip worth naming.
  if (mixed) throw new BatonError('key_invalid', 'PEM holds a private key; give the PUBLIC KEY block only');
  if (typeof pem !== 'string' || !pem.includes(`-----BEGIN ${label}-----`)) {
    throw new BatonError('key_invalid', `PEM must contain a ${label} block`);
  }
  try {
    const key = label === 'PUBLIC KEY' ? createPublicKey(pem) : createPrivateKey(pem);
    assertEd25519(key, label === 'PUBLIC KEY' ? 'public' : 'private');
    return key;
  } catch (error) {
    if (error instanceof BatonError) throw error;
    throw new BatonError('key_invalid', `${label} PEM could not be parsed`, {}, { cause: error });
  }
}

function publicFromRaw(raw: Buffer): KeyObject {
  const defect = publicKeyDefect(raw);
  if (defect !== undefined) {
    throw new BatonError('key_invalid', `Ed25519 public key refused by policy: ${defect}`, {
      reason: defect,
    });
  }
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
}

/** Import a public key; the policy's key checks (canonical, on the curve, not small-order) apply. */
export function importEd25519PublicKey(input: Ed25519PublicKeyInput): KeyObject {
  switch (onlyOne(input, ['raw', 'jwk', 'pem'])) {
    case 'raw':
      return publicFromRaw(bytes32((input as { raw: unknown }).raw, 'raw public key'));
    case 'jwk': {
      const { jwk } = input as { jwk: JwkInput };
      assertOkpEd25519(jwk);
      if (Object.hasOwn(jwk, 'd')) throw new BatonError('key_invalid', 'a public JWK must not contain "d"');
      return publicFromRaw(jwkBytes(jwk, 'x'));
    }
    default: {
      const key = pemKey((input as { pem: unknown }).pem, 'PUBLIC KEY');
      return publicFromRaw(publicKeyRaw(key));
    }
  }
}

function privateFromSeed(seed: Buffer): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/** Import a private key from its 32-byte RFC 8032 seed, an OKP JWK (with d) or a PKCS#8 PEM. */
export function importEd25519PrivateKey(input: Ed25519PrivateKeyInput): KeyObject {
  switch (onlyOne(input, ['seed', 'jwk', 'pem'])) {
    case 'seed':
      return privateFromSeed(bytes32((input as { seed: unknown }).seed, 'Ed25519 seed'));
    case 'jwk': {
      const { jwk } = input as { jwk: JwkInput };
      assertOkpEd25519(jwk);
      const key = privateFromSeed(jwkBytes(jwk, 'd'));
      // A JWK whose "x" is not the seed's public key is inconsistent: refuse rather than pick one.
      if (jwk.x !== undefined && !jwkBytes(jwk, 'x').equals(publicKeyRaw(key))) {
        throw new BatonError('key_invalid', 'JWK "x" does not match its "d"');
      }
      return key;
    }
    default:
      return pemKey((input as { pem: unknown }).pem, 'PRIVATE KEY');
  }
}

export function exportEd25519PublicJwk(k: KeyObject): Ed25519PublicJwk {
  const raw = publicKeyRaw(k);
  return { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url'), kid: ed25519Kid(raw) };
}

export function exportPublicPem(k: KeyObject): string {
  assertEd25519(k, 'any');
  const pub = k.type === 'private' ? createPublicKey(k) : k;
  return pub.export({ format: 'pem', type: 'spki' }).toString();
}

export function exportPrivatePem(k: KeyObject): string {
  assertEd25519(k, 'private');
  return k.export({ format: 'pem', type: 'pkcs8' }).toString();
}

export function ed25519Sign(privateKey: KeyObject, message: Uint8Array): Buffer {
  assertEd25519(privateKey, 'private');
  return sign(null, message, privateKey);
}

/** Policy results per key object, so the key checks run once per key rather than per signature. */
const keyVerdicts = new WeakMap<KeyObject, PublicKeyDefect | null>();

/** `publicKeyDefect` of a key object, computed once per key (the curve check is a modular power). */
export function keyDefectOf(publicKey: KeyObject): PublicKeyDefect | undefined {
  let verdict = keyVerdicts.get(publicKey);
  if (verdict === undefined) {
    verdict = publicKeyDefect(publicKeyRaw(publicKey)) ?? null;
    keyVerdicts.set(publicKey, verdict);
  }
  return verdict ?? undefined;
}

function keyAcceptable(publicKey: KeyObject): boolean {
  return keyDefectOf(publicKey) === undefined;
}

/**
 * Verify under Baton's policy (docs/crypto.md): 64-byte signature, canonical R, S < L, canonical
 * non-small-order A, then OpenSSL's cofactorless equation. Returns false for any bad signature or
 * refused key — it throws only when given something that is not an Ed25519 public key.
 */
export function ed25519Verify(publicKey: KeyObject, message: Uint8Array, signature: Uint8Array): boolean {
  assertEd25519(publicKey, 'public');
  if (signatureDefect(signature) !== undefined) return false;
  if (!keyAcceptable(publicKey)) return false;
  return verify(null, message, publicKey, signature);
}
