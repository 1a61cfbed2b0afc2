/**
 * Building and signing leases, as a gateway does: read the resource (state + Agent-Fence-Token),
 * bind its pre-image and the inverse payload by their JCS hashes, name the epoch the commit will
 * create, sign.
 */
import { randomUUID } from 'node:crypto';
import { sha256HexTagJcs, type Sha256HexTag } from '../core/digest.js';
import { BatonError } from '../core/errors.js';
import type { JsonValue } from '../core/json.js';
import { formatRfc3339 } from '../core/time.js';
import { PTCL_VERSION, type Lease, type RecoveryMode, type UnsignedLease } from './model.js';
import { instantMs } from './instant.js';
import { leaseSigningInput } from './lease-jcs.js';
import { unsignedLeaseFromJson } from './parse.js';
import { signatureOver, type SigningKey } from './signing.js';
import { checkLeaseFace } from './verify.js';

export interface LeaseDraft {
  target: string;
  mode: RecoveryMode;
  tReqMs: number;
  tGrantedMs: number;
  /** The epoch the gateway read (Agent-Fence-Token); the lease fences at currentEpoch + 1. */
  currentEpoch: number;
  /** The state the gateway read: its JCS hash becomes pre_image_state_hash. */
  preImage: JsonValue;
  inversePayload: JsonValue;
  traceAnchorRef: Sha256HexTag;
  issuedAtMs: number;
  ttlMs: number;
  leaseId?: string;
}

export function buildLease(draft: LeaseDraft): UnsignedLease {
  return {
    ptcl_version: PTCL_VERSION,
    lease_id: draft.leaseId ?? `urn:uuid:${randomUUID()}`,
    sor_target_uri: draft.target,
    recovery_mode: draft.mode,
    t_req_ms: draft.tReqMs,
    t_granted_ms: draft.tGrantedMs,
    cas_fence_epoch: draft.currentEpoch + 1,
    pre_image_state_hash: sha256HexTagJcs(draft.preImage),
    inverse_payload_jcs_hash: sha256HexTagJcs(draft.inversePayload),
    trace_anchor_ref: draft.traceAnchorRef,
    issued_at: formatRfc3339(draft.issuedAtMs),
    expires_at: formatRfc3339(draft.issuedAtMs + draft.ttlMs),
  };
}

/**
 * Sign a lease. Baton never signs what it would refuse on its face (docs/leases.md §2): the shape is
 * checked first (ERR_LEASE_MALFORMED), then the verifier's own rules that need no resource and no
 * clock (`checkLeaseFace`: a recovery mode of the four, t_req_ms <= t_granted_ms, a window that,
 * accepted at the lease's `issued_at`, ends by 9999-12-31T23:59:59.999Z), thrown with the code the
 * verifier would give and `details.rule`.
 */
export function signLease(lease: UnsignedLease, key: SigningKey): Lease {
  // unsignedLeaseFromJson returns a fresh object holding exactly the lease members.
  const fresh = unsignedLeaseFromJson(lease) as Lease;
  const face = checkLeaseFace(fresh, instantMs(fresh.issued_at));
  if (face !== undefined) {
    throw new BatonError(face.code, `not signed: a verifier would refuse this lease (${face.message})`, {
      rule: face.rule,
    });
  }
  fresh.signature = signatureOver(leaseSigningInput(fresh), key);
  return fresh;
}
