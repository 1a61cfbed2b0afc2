/**
 * Digest objects (OBS-10, C-B4): algorithm, byte representation and artifact stated, so equality
 * in one representation is never claimed for another.
 */
import { canonicalBytes, digestBytes, digestEquals } from '../core/index.js';
import type { ByteDigest, Representation } from './model.js';

export function byteDigestOf(
  representation: Representation,
  artifact: string,
  bytes: Uint8Array | string,
): ByteDigest {
  return { algorithm: 'sha-256', representation, artifact, value: digestBytes(bytes) };
}

/** The digest object of a JSON artifact's RFC 8785 bytes. */
export function jcsDigestOf(artifact: string, value: unknown): ByteDigest {
  return byteDigestOf('jcs', artifact, canonicalBytes(value));
}

export type DigestCheck = 'match' | 'mismatch' | 'representation_differs';

/**
 * Compare a digest object with bytes held in `representation`: a digest of another representation
 * is never a match, whatever the value (OBS-10).
 */
export function checkByteDigest(
  d: ByteDigest,
  representation: Representation,
  bytes: Uint8Array | string,
): DigestCheck {
  if (d.representation !== representation) return 'representation_differs';
  return digestEquals(d.value, digestBytes(bytes)) ? 'match' : 'mismatch';
}
