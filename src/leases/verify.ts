/**
 * The fail-closed verifier (draft §4, §5): pure — (lease, what is known about the resource, now,
 * trusted keys) → verified lease | rejection. No I/O, no clock reads. Checks that need the system of
 * record's state run only when that state is supplied (the CLI verifies offline); the system of
 * record always supplies all of it. The order below fixes which code a lease with several defects
 * gets; it is documented in docs/leases.md.
 */
import { digestEquals, sha256HexTagJcs } from '../core/digest.js';
import { isBatonError } from '../core/errors.js';
import type { JsonValue } from '../core/json.js';
import {
  LATEST_INSTANT_MS,
  MAX_CLOCK_SKEW_MS,
  isRecoveryMode,
  type Lease,
  type Rejection,
  type VerifiedLease,
} from './model.js';
import { leaseSigningInput } from './lease-jcs.js';
import { instantMs } from './instant.js';
import { parseLease } from './parse.js';
import { checkDocumentSignature, type KeyResolver } from './signing.js';

export interface LeaseChecks {
  nowMs: number;
  keys: KeyResolver;
  /** The system of record's canonical URI of the addressed resource. */
  target?: string;
  /** The resource's current epoch. */
  epoch?: number;
  /** `sha256:` + hex of the JCS of the resource's current state. */
  stateDigest?: string;
  /** The pre-staged inverse payload; `{ staged: undefined }` means none was staged. */
  inverse?: { staged: JsonValue | undefined };
  /** Whether this `lease_id` was already accepted by the system of record. */
  replayed?: boolean;
}

export type LeaseVerdict = { ok: true; lease: VerifiedLease } | { ok: false; rejection: Rejection };

const refuse = (code: Rejection['code'], rule: Rejection['rule'], message: string): LeaseVerdict => ({
  ok: false,
  rejection: { code, rule, message },
});

function checkInverse(lease: Lease, staged: JsonValue | undefined): LeaseVerdict | undefined {
  // Draft §4 rule 3: the inverse payload is pre-staged before lock release and bound by its JCS hash.
  if (staged === undefined) {
    return refuse(
      'ERR_INVERSE_PAYLOAD_MISMATCH',
      'FOUR_MODE_RESERVATION_MANDATE',
      'no inverse payload staged',
    );
  }
  let digest: string;
  try {
    digest = sha256HexTagJcs(staged);
  } catch (error) {
    if (!isBatonError(error)) throw error;
    return refuse(
      'ERR_INVERSE_PAYLOAD_MISMATCH',
      'FOUR_MODE_RESERVATION_MANDATE',
      'inverse payload has no JCS',
    );
  }
  if (!digestEquals(digest, lease.inverse_payload_jcs_hash)) {
    return refuse(
      'ERR_INVERSE_PAYLOAD_MISMATCH',
      'FOUR_MODE_RESERVATION_MANDATE',
      'inverse payload hash differs',
    );
  }
  return undefined;
}

/** Rules that hold for the lease alone: signature, mode, window inequality, target, time. */
function checkStatic(lease: Lease, c: LeaseChecks): LeaseVerdict | undefined {
  const bad = checkDocumentSignature(lease, c.keys, () => leaseSigningInput(lease));
  if (bad !== undefined) return { ok: false, rejection: bad };
  if (!isRecoveryMode(lease.recovery_mode)) {
    return refuse(
      'ERR_UNKNOWN_RECOVERY_MODE',
      'FOUR_MODE_RESERVATION_MANDATE',
      'recovery mode is not one of the four',
    );
  }
  if (!(lease.t_req_ms <= lease.t_granted_ms)) {
    return refuse('ERR_RECOVERY_WINDOW', 'RECOVERY_WINDOW_INEQUALITY', 't_req_ms exceeds t_granted_ms');
  }
  // A window accepted now ends at now + t_granted_ms, an instant receipts carry in RFC 3339 (draft
  // §4 rule 1 grants the window; nothing can be granted that the receipt could not state).
  if (lease.t_granted_ms > LATEST_INSTANT_MS - c.nowMs) {
    return refuse(
      'ERR_RECOVERY_WINDOW',
      'RECOVERY_WINDOW_INEQUALITY',
      't_granted_ms would end the recovery window after 9999-12-31T23:59:59.999Z',
    );
  }
  if (c.target !== undefined && lease.sor_target_uri !== c.target) {
    return refuse('ERR_TARGET_MISMATCH', 'TARGET_BINDING', 'lease names another resource');
  }
  if (instantMs(lease.issued_at) - c.nowMs > MAX_CLOCK_SKEW_MS) {
    return refuse('ERR_CLOCK_SKEW', 'CLOCK_SKEW', 'issued_at is more than 60 s ahead of the verifier clock');
  }
  // Draft §4 rule 1: no tolerance on expiry — skew allowance would silently extend the lease.
  if (c.nowMs > instantMs(lease.expires_at)) {
    return refuse('ERR_LEASE_EXPIRED', 'RECOVERY_WINDOW_INEQUALITY', 'lease has expired');
  }
  return undefined;
}

/** Rules that need the system of record: inverse staging, replay, fence epoch, pre-image. */
export function checkAgainstState(lease: Lease, c: LeaseChecks): LeaseVerdict | undefined {
  if (c.inverse !== undefined) {
    const bad = checkInverse(lease, c.inverse.staged);
    if (bad !== undefined) return bad;
  }
  if (c.replayed === true) return refuse('ERR_LEASE_REPLAYED', 'LEASE_REPLAY', 'lease_id was already used');
  // Draft §4 rule 2, literally: abort when current epoch >= cas_fence_epoch.
  if (c.epoch !== undefined && c.epoch >= lease.cas_fence_epoch) {
    return refuse(
      'ERR_STALE_FENCE_EPOCH',
      'MONOTONIC_CAS_FENCING',
      'resource epoch is not below cas_fence_epoch',
    );
  }
  if (c.stateDigest !== undefined && !digestEquals(c.stateDigest, lease.pre_image_state_hash)) {
    return refuse(
      'ERR_PRE_IMAGE_MISMATCH',
      'MONOTONIC_CAS_FENCING',
      'current state digest is not the pre-image',
    );
  }
  return undefined;
}

export function verifyLease(lease: Lease, checks: LeaseChecks): LeaseVerdict {
  return (
    checkStatic(lease, checks) ??
    checkAgainstState(lease, checks) ?? { ok: true, lease: lease as VerifiedLease }
  );
}

/** Parse then verify; a parse failure is a rejection (ERR_LEASE_MALFORMED), never an exception. */
export function verifyLeaseText(input: string | Uint8Array, checks: LeaseChecks): LeaseVerdict {
  let lease: Lease;
  try {
    lease = parseLease(input);
  } catch (error) {
    if (!isBatonError(error, 'ERR_LEASE_MALFORMED')) throw error;
    return refuse('ERR_LEASE_MALFORMED', 'CRYPTOGRAPHIC_BINDING', error.message);
  }
  return verifyLease(lease, checks);
}
