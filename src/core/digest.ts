/**
 * Digests that say what they are (DESIGN.md §9): algorithm, encoding and artifact.
 * - Baton's own formats and the Mission drafts: `sha-256:` + base64url without padding of the
 *   SHA-256 of the artifact's JCS bytes (mission draft "Integrity Anchors", runtime draft
 *   `parameter_digest`).
 * - PTCL wire fields keep their own form: `sha256:` + 64 lowercase hex digits.
 * An unrecognised prefix is never read as SHA-256 (mission draft: no downgrade).
 */
import * as nodeCrypto from 'node:crypto';
import { createHash, timingSafeEqual } from 'node:crypto';
import { BatonError } from './errors.js';
import { canonicalize } from './jcs.js';

export type Sha256Digest = `sha-256:${string}`;
export type Sha256HexTag = `sha256:${string}`;

const B64URL_32 = /^[A-Za-z0-9_-]{43}$/;
const HEX_32 = /^[0-9a-f]{64}$/;

/**
 * `crypto.hash` (Node >= 20.12) hashes in one call, about three times faster than a Hash object
 * for the short inputs Baton digests on every transaction; older Node 20 releases lack it.
 * A string is hashed as its UTF-8 bytes either way.
 */
const oneShot = (nodeCrypto as { hash?: typeof nodeCrypto.hash }).hash;

export function sha256(bytes: Uint8Array | string): Buffer {
  if (oneShot !== undefined) return oneShot('sha256', bytes, 'buffer');
  return createHash('sha256').update(bytes).digest();
}

function sha256Text(bytes: Uint8Array | string, encoding: 'base64url' | 'hex'): string {
  if (oneShot !== undefined) return oneShot('sha256', bytes, encoding);
  return createHash('sha256').update(bytes).digest(encoding);
}

/** `sha-256:` + base64url(SHA-256(bytes)); a string stands for its UTF-8 bytes. */
export function digestBytes(bytes: Uint8Array | string): Sha256Digest {
  return `sha-256:${sha256Text(bytes, 'base64url')}`;
}

/** `sha-256:` + base64url(SHA-256(JCS(value))): the digest of a JSON artifact. */
export function digestJcs(value: unknown): Sha256Digest {
  // The JCS text is hashed as its UTF-8 bytes: exactly canonicalBytes(value).
  return digestBytes(canonicalize(value));
}

/**
 * The Mission drafts' integrity anchor: the digest of the JCS of `{typ, iss, value}`.
 * `typ` domain-separates the artifacts (`mission-intent` → intent_hash,
 * `mission-authority-set` → authority_hash).
 */
export function integrityAnchor(typ: string, iss: string, value: unknown): Sha256Digest {
  return digestJcs({ typ, iss, value });
}

/** Parse a `sha-256:` digest into its 32 raw bytes; any other prefix is refused. */
export function parseDigest(text: string): Buffer {
  const colon = text.indexOf(':');
  if (colon < 0) throw new BatonError('digest_malformed', 'digest has no algorithm prefix');
  const algorithm = text.slice(0, colon);
  if (algorithm !== 'sha-256') {
    throw new BatonError('digest_unsupported_algorithm', 'only sha-256 digests are recognised', {
      algorithm: algorithm.slice(0, 32),
    });
  }
  const value = text.slice(colon + 1);
  if (!B64URL_32.test(value)) {
    throw new BatonError('digest_malformed', 'sha-256 digest must be 43 base64url characters');
  }
  const bytes = Buffer.from(value, 'base64url');
  if (bytes.toString('base64url') !== value) {
    throw new BatonError('digest_malformed', 'sha-256 digest is not canonical base64url');
  }
  return bytes;
}

/** PTCL's wire form: `sha256:` + lowercase hex of SHA-256(bytes). */
export function sha256HexTag(bytes: Uint8Array | string): Sha256HexTag {
  return `sha256:${sha256Text(bytes, 'hex')}`;
}

/** PTCL's wire form over the JCS bytes of a JSON value. */
export function sha256HexTagJcs(value: unknown): Sha256HexTag {
  return sha256HexTag(canonicalize(value));
}

export function isSha256HexTag(text: unknown): text is Sha256HexTag {
  return typeof text === 'string' && text.startsWith('sha256:') && HEX_32.test(text.slice(7));
}

/** Constant-time comparison of two digest strings of any form. */
export function digestEquals(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
