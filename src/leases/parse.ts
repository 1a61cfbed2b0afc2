/**
 * Strict reading of lease documents (draft §3, §5 "missing cryptographic binding … MUST fail closed").
 * Exactly the draft's members plus `issued_at`/`expires_at` (DESIGN.md §6): a missing, unknown or
 * wrongly typed member, a duplicate member name or a non-I-JSON text is ERR_LEASE_MALFORMED.
 */
import { BatonError, isBatonError } from '../core/errors.js';
import { isSha256HexTag } from '../core/digest.js';
import { parseStrictJson, type JsonObject, type JsonValue } from '../core/json.js';
import { instantMs } from './instant.js';
import {
  LEASE_ID_MAX_LENGTH,
  MAX_FENCE_EPOCH,
  PTCL_VERSION,
  type DocumentSignature,
  type Lease,
  type UnsignedLease,
} from './model.js';

const LEASE_MEMBERS = [
  'ptcl_version',
  'lease_id',
  'sor_target_uri',
  'recovery_mode',
  't_req_ms',
  't_granted_ms',
  'cas_fence_epoch',
  'pre_image_state_hash',
  'inverse_payload_jcs_hash',
  'trace_anchor_ref',
  'issued_at',
  'expires_at',
] as const;
const SIGNATURE_MEMBERS = ['alg', 'kid', 'sig'] as const;

/**
 * A lease_id: visible ASCII but `"` and `\` (ids travel in URLs, headers and logs), and not all
 * dots: `.` and `..` are path segments URL normalisation resolves away (RFC 3986 §5.2.4), so
 * `/ptcl/leases/{id}/recover` could never reach such a lease once committed (draft §4 rule 3); any
 * all-dot id is refused alike, by one simple rule.
 */
const LEASE_ID = new RegExp(`^(?!\\.+$)[\\x21\\x23-\\x5b\\x5d-\\x7e]{1,${LEASE_ID_MAX_LENGTH}}$`);
const MODE = /^[\x21-\x7e]{1,64}$/;

export function malformed(message: string, details: Record<string, unknown> = {}): BatonError {
  return new BatonError('ERR_LEASE_MALFORMED', message, details);
}

/** An object with exactly `members`: none missing, none unknown. */
export function exactObject(value: unknown, members: readonly string[], what: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw malformed(`${what} must be a JSON object`);
  }
  const object = value as JsonObject;
  const missing = members.find((m) => !Object.hasOwn(object, m));
  if (missing !== undefined) throw malformed(`${what} lacks member ${missing}`, { member: missing });
  // Every listed member is present, so a count above the list's means an unknown one.
  const names = Object.keys(object);
  if (names.length !== members.length) {
    const unknown = names.find((m) => !members.includes(m)) ?? '';
    throw malformed(`${what} has an unknown member`, { member: unknown.slice(0, 64) });
  }
  return object;
}

function text(object: JsonObject, member: string, pattern?: RegExp): string {
  const value = object[member];
  if (typeof value !== 'string' || (pattern !== undefined && !pattern.test(value))) {
    throw malformed(`${member} is not a valid string`, { member });
  }
  return value;
}

function integer(object: JsonObject, member: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = object[member];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw malformed(`${member} must be an integer from ${min} to ${max}`, { member });
  }
  return value;
}

function hexTag(object: JsonObject, member: string): `sha256:${string}` {
  const value = object[member];
  if (!isSha256HexTag(value)) throw malformed(`${member} must be sha256: + 64 lowercase hex`, { member });
  return value;
}

/** An RFC 3339 date-time member and its instant, parsed once. */
function instant(object: JsonObject, member: string): [string, number] {
  const value = text(object, member);
  try {
    return [value, instantMs(value)];
  } catch (error) {
    if (!isBatonError(error, 'time_invalid')) throw error;
    throw malformed(`${member} must be an RFC 3339 date-time`, { member });
  }
}

/** RFC 3986 absolute-URI: a scheme, a colon, then visible ASCII (no `"` or `\`, which no URI holds). */
const ABSOLUTE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:[\x21\x23-\x5b\x5d-\x7e]+$/;
/** docs/leases.md §1: the whole URI, scheme included, is at most this many characters. */
export const MAX_URI_LENGTH = 2048;

function targetUri(object: JsonObject): string {
  const value = object['sor_target_uri'];
  if (typeof value === 'string' && value.length > MAX_URI_LENGTH) {
    throw malformed(`sor_target_uri exceeds ${MAX_URI_LENGTH} characters`, { member: 'sor_target_uri' });
  }
  return text(object, 'sor_target_uri', ABSOLUTE_URI);
}

function readUnsigned(object: JsonObject): UnsignedLease {
  if (object['ptcl_version'] !== PTCL_VERSION) throw malformed('ptcl_version must be "1.0"');
  const [issuedAt, issuedMs] = instant(object, 'issued_at');
  const [expiresAt, expiresMs] = instant(object, 'expires_at');
  if (expiresMs <= issuedMs) throw malformed('expires_at must be later than issued_at');
  return {
    ptcl_version: PTCL_VERSION,
    lease_id: text(object, 'lease_id', LEASE_ID),
    sor_target_uri: targetUri(object),
    recovery_mode: text(object, 'recovery_mode', MODE),
    t_req_ms: integer(object, 't_req_ms', 0),
    t_granted_ms: integer(object, 't_granted_ms', 0),
    // Headroom for the recovery step (current + 1) to stay a safe integer: model.ts MAX_FENCE_EPOCH.
    cas_fence_epoch: integer(object, 'cas_fence_epoch', 1, MAX_FENCE_EPOCH),
    pre_image_state_hash: hexTag(object, 'pre_image_state_hash'),
    inverse_payload_jcs_hash: hexTag(object, 'inverse_payload_jcs_hash'),
    trace_anchor_ref: hexTag(object, 'trace_anchor_ref'),
    issued_at: issuedAt,
    expires_at: expiresAt,
  };
}

function readSignature(value: JsonValue | undefined): DocumentSignature {
  const object = exactObject(value, SIGNATURE_MEMBERS, 'signature');
  return {
    alg: text(object, 'alg', /^[\x21-\x7e]{1,32}$/),
    kid: hexTag(object, 'kid'),
    sig: text(object, 'sig', /^[\x21-\x7e]{1,256}$/),
  };
}

/** A signed lease from a parsed JSON value (shape only: the signature is checked by the verifier). */
export function leaseFromJson(value: unknown): Lease {
  const object = exactObject(value, [...LEASE_MEMBERS, 'signature'], 'lease');
  return { ...readUnsigned(object), signature: readSignature(object['signature']) };
}

/** A lease to be signed; a `signature` member, if present, is ignored (it is about to be replaced). */
export function unsignedLeaseFromJson(value: unknown): UnsignedLease {
  const signed = typeof value === 'object' && value !== null && Object.hasOwn(value, 'signature');
  const members = signed ? [...LEASE_MEMBERS, 'signature'] : LEASE_MEMBERS;
  return readUnsigned(exactObject(value, members, 'lease'));
}

/** Strict JSON text (duplicate members, lone surrogates, bad UTF-8 refused) to JSON, as a lease error. */
export function parseLeaseJson(input: string | Uint8Array): JsonValue {
  try {
    return parseStrictJson(input, { maxBytes: 16_384, maxDepth: 8 });
  } catch (error) {
    if (isBatonError(error)) {
      throw new BatonError(
        'ERR_LEASE_MALFORMED',
        'lease is not strict JSON',
        { json: error.code },
        { cause: error },
      );
    }
    throw error;
  }
}

export function parseLease(input: string | Uint8Array): Lease {
  return leaseFromJson(parseLeaseJson(input));
}
