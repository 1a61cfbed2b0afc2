/**
 * Integrity anchors (MCO-03, mission draft "Integrity Anchors"): `sha-256:` + base64url-nopad of
 * SHA-256 over the JCS of `{typ, iss, value}`. `typ` domain-separates the intent from the authority
 * set; `iss` binds the anchor to one issuer. Duplicate member names are refused before
 * canonicalisation (strict JSON), array order is kept as given, URIs are compared byte for byte,
 * and an anchor with any prefix other than `sha-256:` is refused, never read as SHA-256.
 */
import { digestEquals, integrityAnchor, parseDigest, type Sha256Digest } from '../core/digest.js';
import { BatonError } from '../core/errors.js';
import { parseStrictJson, type JsonValue } from '../core/json.js';

export const ANCHOR_TYPS = { intent: 'mission-intent', authority: 'mission-authority-set' } as const;
export type AnchorKind = keyof typeof ANCHOR_TYPS;

/** `intent_hash` (kind `intent`, an object) or `authority_hash` (kind `authority`, an array). */
export function missionAnchor(kind: AnchorKind, iss: string, value: JsonValue): Sha256Digest {
  if (typeof iss !== 'string' || iss === '') throw new BatonError('input_invalid', 'an anchor needs its iss');
  if (kind === 'authority' && !Array.isArray(value)) {
    throw new BatonError('input_invalid', 'an Authority Set is a JSON array of entries');
  }
  if (kind === 'intent' && (typeof value !== 'object' || value === null || Array.isArray(value))) {
    throw new BatonError('input_invalid', 'a Mission Intent is a JSON object');
  }
  return integrityAnchor(ANCHOR_TYPS[kind], iss, value);
}

/** The anchor of a committed object given as JSON text (duplicate members refused). */
export function missionAnchorOfText(kind: AnchorKind, iss: string, text: string | Uint8Array): Sha256Digest {
  return missionAnchor(kind, iss, parseStrictJson(text));
}

/** A well-formed anchor string, or a typed error (`digest_unsupported_algorithm`, `digest_malformed`). */
export function parseAnchor(text: unknown): Sha256Digest {
  if (typeof text !== 'string') throw new BatonError('digest_malformed', 'an anchor is a string');
  parseDigest(text);
  return text as Sha256Digest;
}

/** Recompute and compare (constant time): does `anchor` commit `value` under `iss`? */
export function anchorMatches(kind: AnchorKind, iss: string, value: JsonValue, anchor: string): boolean {
  parseAnchor(anchor);
  return digestEquals(missionAnchor(kind, iss, value), anchor);
}
