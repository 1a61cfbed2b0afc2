/**
 * The parts of a signed Mission answer that the status and SET verifiers check the same way: the
 * compact form, the protected header (A3.2 step 3, A3.4 step 2), strict JSON payloads, JWT times
 * with the drafts' 30 s skew, and `aud` as an exact string or a one-element array (C-A11).
 */
import { parseStrictJson, type JsonObject } from '../core/json.js';
import type { JwsAlgorithm } from '../core/jose.js';

/** Mission Status: "with up to 30 seconds clock-skew tolerance"; Baton uses the same for SETs. */
export const JWT_SKEW_MS = 30_000;
/** A3.2 step 2: a status body is at most 64 KiB. SETs are held to the same bound. */
export const MAX_COMPACT_BYTES = 64 * 1024;

const SEGMENT = /^[A-Za-z0-9_-]+$/;
/** The three segments at once: the common well-formed case, one scan and no split. */
const WELL_FORMED = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export type PartsFailure =
  { check: 'body'; message: string } | { check: 'typ' | 'alg' | 'kid' | 'crit'; message: string };

export interface CheckedHeader {
  readonly alg: JwsAlgorithm;
  readonly kid: string;
}

/**
 * Three base64url segments (no JWE, no JSON serialisation) within the size bound. The signature
 * segment may be empty here, so that an `alg: none` token is refused by name at the alg check.
 */
export function compactDefect(text: string): string | undefined {
  if (text.length > MAX_COMPACT_BYTES) return 'larger than 64 KiB';
  if (WELL_FORMED.test(text)) return undefined;
  const parts = text.split('.');
  if (parts.length !== 3) return 'not a three-segment compact JWS';
  const [header, payload, signature] = parts as [string, string, string];
  if (!SEGMENT.test(header) || !SEGMENT.test(payload) || !(signature === '' || SEGMENT.test(signature))) {
    return 'a segment is not base64url';
  }
  return undefined;
}

function decodeSegment(segment: string): JsonObject | undefined {
  try {
    const value = parseStrictJson(Buffer.from(segment, 'base64url'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Headers that passed, by the exact (typ, allowlist, header segment) they were checked for: an
 * issuer signs every SET and status answer with the same few headers, and decoding and strictly
 * parsing one cost about 3% of a pushed SET's main-thread time (docs/harness.md "Session 15").
 * The answer is a function of those three strings alone, so a hit is the same answer. Bounded:
 * short segments only, and the map is emptied when full, so odd headers cannot grow it.
 */
const PASSED = new Map<string, CheckedHeader>();
const PASSED_MAX = 64;
const PASSED_SEGMENT_MAX = 512;

/**
 * The header checks in their fixed order: `typ` exact (the media type without `application/`, as
 * RFC 7515 §4.1.9 writes it), `alg` on the allowlist (`none` and HMAC never are), `kid` present,
 * no `crit` (Baton understands no critical extension). `jwk`, `jku`, `x5u` are ignored: keys come
 * only from the pinned issuer.
 */
export function checkHeader(
  compact: string,
  typ: string,
  algorithms: readonly JwsAlgorithm[],
): CheckedHeader | PartsFailure {
  const segment = compact.slice(0, compact.indexOf('.'));
  if (segment.length > PASSED_SEGMENT_MAX) return checkSegment(segment, typ, algorithms);
  const key = `${typ}\u0000${algorithms.join(',')}\u0000${segment}`;
  const hit = PASSED.get(key);
  if (hit !== undefined) return hit;
  const checked = checkSegment(segment, typ, algorithms);
  if (!isFailure(checked)) {
    if (PASSED.size >= PASSED_MAX) PASSED.clear();
    PASSED.set(key, Object.freeze(checked));
  }
  return checked;
}

function checkSegment(
  segment: string,
  typ: string,
  algorithms: readonly JwsAlgorithm[],
): CheckedHeader | PartsFailure {
  const header = decodeSegment(segment);
  if (header === undefined) return { check: 'body', message: 'protected header is not a JSON object' };
  const seen = header['typ'];
  if (typeof seen !== 'string' || seen.replace(/^application\//i, '').toLowerCase() !== typ) {
    return { check: 'typ', message: `header typ is not ${typ}` };
  }
  const alg = header['alg'];
  if (typeof alg !== 'string' || !(algorithms as readonly string[]).includes(alg)) {
    return { check: 'alg', message: 'header alg is not on the allowlist' };
  }
  const kid = header['kid'];
  if (typeof kid !== 'string' || kid === '') return { check: 'kid', message: 'header has no kid' };
  if (Object.hasOwn(header, 'crit')) return { check: 'crit', message: 'header names a critical extension' };
  return { alg: alg as JwsAlgorithm, kid };
}

export function isFailure(value: CheckedHeader | PartsFailure): value is PartsFailure {
  return 'check' in value;
}

/** The payload segment's bytes (call only after the signature verified). */
export function payloadBytes(compact: string): Buffer {
  return Buffer.from(compact.slice(compact.indexOf('.') + 1, compact.lastIndexOf('.')), 'base64url');
}

/** The verified payload bytes as a strict JSON object (duplicate members refused). */
export function payloadObject(bytes: Uint8Array): JsonObject | undefined {
  try {
    const value = parseStrictJson(bytes);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** C-A11: `aud` is the exact string or a one-element array holding it. */
export function audienceIs(aud: unknown, expected: string): boolean {
  if (typeof aud === 'string') return aud === expected;
  return Array.isArray(aud) && aud.length === 1 && aud[0] === expected;
}

export function isIntSeconds(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** `iat` not in the future and `exp` not in the past, each within 30 s, and `exp` after `iat`. */
export function timeDefect(
  iat: unknown,
  exp: unknown,
  nowMs: number,
): { check: 'iat' | 'exp'; message: string } | undefined {
  if (!isIntSeconds(iat)) return { check: 'iat', message: 'iat is not an integer NumericDate' };
  if (iat * 1000 > nowMs + JWT_SKEW_MS) return { check: 'iat', message: 'iat is in the future' };
  if (!isIntSeconds(exp)) return { check: 'exp', message: 'exp is absent or not an integer NumericDate' };
  if (exp * 1000 < nowMs - JWT_SKEW_MS) return { check: 'exp', message: 'exp has passed' };
  if (exp <= iat) return { check: 'exp', message: 'exp is not after iat' };
  return undefined;
}
