/**
 * The one signature scheme for leases, recovery orders and receipts (DESIGN.md §6, draft §5):
 * Ed25519 (RFC 8032) over the RFC 8785 JCS bytes of the document without its `signature` member;
 * `kid` = `sha256:` + hex of the raw 32-byte public key; `sig` = base64url without padding.
 */
import { KeyObject, createPublicKey } from 'node:crypto';
import type { Sha256HexTag } from '../core/digest.js';
import { canonicalBytes } from '../core/jcs.js';
import { ed25519Kid, ed25519Sign, ed25519Verify } from '../core/ed25519.js';
import { BatonError, isBatonError } from '../core/errors.js';
import type { DocumentSignature, Rejection } from './model.js';

export const SIGNATURE_ALG = 'Ed25519';

export interface SigningKey {
  privateKey: KeyObject;
  kid: Sha256HexTag;
}

/** Finds the public key a `kid` names, or undefined when the kid is not trusted. */
export type KeyResolver = (kid: string) => KeyObject | undefined;

/** A resolver over a fixed set of public keys (a private key stands for its public half). */
export function keyRing(publicKeys: Iterable<KeyObject>): KeyResolver {
  const byKid = new Map<string, KeyObject>();
  for (const key of publicKeys)
    byKid.set(ed25519Kid(key), key.type === 'private' ? createPublicKey(key) : key);
  return (kid) => byKid.get(kid);
}

/** The signed bytes: JCS of the document with its `signature` member removed. */
export function signingInput(document: object): Buffer {
  const { signature: _ignored, ...body } = document as { signature?: unknown };
  return canonicalBytes(body);
}

export function signDocument<T extends object>(
  body: T,
  key: SigningKey,
  input: (unsigned: object) => Buffer = canonicalBytes,
): Omit<T, 'signature'> & { signature: DocumentSignature } {
  const { signature: _dropped, ...unsigned } = body as T & { signature?: unknown };
  return { ...(unsigned as Omit<T, 'signature'>), signature: signatureOver(input(unsigned), key) };
}

/** The `signature` member for already-canonical bytes. The kid is always the signing key's own. */
export function signatureOver(bytes: Uint8Array, key: SigningKey): DocumentSignature {
  if (kidOf(key.privateKey) !== key.kid) throw new BatonError('kid_mismatch', "kid is not the signing key's");
  return { alg: SIGNATURE_ALG, kid: key.kid, sig: ed25519Sign(key.privateKey, bytes).toString('base64url') };
}

/** Kids per key object: exporting a key to hash it costs as much as a verification. */
const kids = new WeakMap<KeyObject, string>();

function kidOf(key: KeyObject): string {
  let kid = kids.get(key);
  if (kid === undefined) {
    kid = ed25519Kid(key);
    kids.set(key, kid);
  }
  return kid;
}

const SIG_B64URL = /^[A-Za-z0-9_-]{86}$/;

/**
 * Undefined when the signature holds; otherwise why not (always ERR_LEASE_SIGNATURE, fail closed).
 * Internal: the package entry (index.ts) does not export it, because a truthy refusal read as
 * `if (checkDocumentSignature(…)) accept()` accepts forgeries. Users call verifyLease, verifyReceipt
 * or verifyRecoveryOrder, which answer with a verdict or a boolean.
 */
export function checkDocumentSignature(
  document: { signature: DocumentSignature },
  keys: KeyResolver,
  input: () => Buffer = () => signingInput(document),
): Rejection | undefined {
  const refuse = (message: string): Rejection => ({
    code: 'ERR_LEASE_SIGNATURE',
    rule: 'CRYPTOGRAPHIC_BINDING',
    message,
  });
  // Callers may hand over unchecked JSON (a decoded receipt header): any other shape is a refusal.
  const signature: unknown = (document as { signature?: unknown } | null)?.signature;
  if (typeof signature !== 'object' || signature === null) return refuse('document has no signature');
  const { alg, kid, sig } = signature as Partial<Record<keyof DocumentSignature, unknown>>;
  if (alg !== SIGNATURE_ALG) return refuse('signature algorithm is not Ed25519');
  if (typeof kid !== 'string' || typeof sig !== 'string')
    return refuse('signature kid or sig is not a string');
  const key = keys(kid);
  if (key === undefined) return refuse('signature kid names no trusted key');
  // A custom resolver may return anything: only an Ed25519 public key can verify (a private key
  // would make the key helpers throw, turning a forgery check into a crash without a receipt).
  if (!(key instanceof KeyObject) || key.type !== 'public' || key.asymmetricKeyType !== 'ed25519') {
    return refuse('the key the resolver returned for kid is not an Ed25519 public key');
  }
  // The kid must be the key's own, so a resolver keyed loosely can never pair a kid with another key.
  if (kidOf(key) !== kid) return refuse('signature kid does not match the key');
  const bytes = SIG_B64URL.test(sig) ? Buffer.from(sig, 'base64url') : undefined;
  if (bytes === undefined || bytes.length !== 64 || bytes.toString('base64url') !== sig) {
    return refuse('signature is not 64 bytes of unpadded base64url');
  }
  let signed: Buffer;
  try {
    signed = input();
  } catch (error) {
    // A document with no JCS (a lone surrogate, a non-JSON value) has no signed bytes to match.
    if (!isBatonError(error)) throw error;
    return refuse('document has no JCS signing input');
  }
  if (!ed25519Verify(key, signed, bytes)) return refuse('signature does not verify');
  return undefined;
}

/** A signing key with its kid computed from its public half. */
export function signingKeyFrom(privateKey: KeyObject): SigningKey {
  return { privateKey, kid: ed25519Kid(privateKey) };
}
