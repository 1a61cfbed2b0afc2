/**
 * PTCL records (compensation-leases-cas-fencing.txt §3, DESIGN.md §6) as types. Member names keep the
 * draft's wire spelling. Choices the draft leaves open are listed in docs/leases.md.
 */
import type { Sha256HexTag } from '../core/digest.js';
import type { JsonValue } from '../core/json.js';
import type { BatonErrorCode } from '../core/errors.js';

export const PTCL_VERSION = '1.0';
export const LEASE_MEDIA_TYPE = 'application/agent-tx-lease+json';
/** Draft §5: any clock skew exceeding 60 seconds fails closed. */
export const MAX_CLOCK_SKEW_MS = 60_000;
/**
 * The last instant a receipt can name in RFC 3339: 9999-12-31T23:59:59.999Z. Past it
 * Date#toISOString writes a six-digit `+YYYYYY` year (not RFC 3339), and past 8.64e15 ms it throws.
 */
export const LATEST_INSTANT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/**
 * The largest cas_fence_epoch a lease may name: 2^53 − 2. A commit sets the epoch to it and a
 * recovery takes current + 1, which must stay a safe integer (an Agent-Fence-Token parses as one).
 */
export const MAX_FENCE_EPOCH = Number.MAX_SAFE_INTEGER - 1;
/**
 * The longest lease_id (docs/leases.md §1): 1–256 visible ASCII characters. A Fastify host of
 * leasePlugin must route path parameters at least this long (its `maxParamLength`, which
 * find-my-way measures after percent-decoding), or the lease's recovery and approval are unreachable.
 */
export const LEASE_ID_MAX_LENGTH = 256;

/** Draft §4 rule 3 and §6: the registry of recovery modes — exactly these four. */
export const RECOVERY_MODES = [
  'COMPENSATING_ACTION',
  'SNAPSHOT_RESTORE',
  'DRY_RUN_SHADOW',
  'HUMAN_ESCROW',
] as const;
export type RecoveryMode = (typeof RECOVERY_MODES)[number];

export function isRecoveryMode(value: string): value is RecoveryMode {
  return (RECOVERY_MODES as readonly string[]).includes(value);
}

/** `{alg, kid, sig}`: Ed25519 over the JCS of the document without its `signature` member. */
export interface DocumentSignature {
  alg: string;
  kid: Sha256HexTag;
  sig: string;
}

/** Every member of the draft's lease plus `issued_at` / `expires_at` (DESIGN.md §6). */
export interface UnsignedLease {
  ptcl_version: typeof PTCL_VERSION;
  lease_id: string;
  sor_target_uri: string;
  /** Checked against the four modes by the verifier, so a signed unknown mode gets its own code. */
  recovery_mode: string;
  t_req_ms: number;
  t_granted_ms: number;
  cas_fence_epoch: number;
  pre_image_state_hash: Sha256HexTag;
  inverse_payload_jcs_hash: Sha256HexTag;
  trace_anchor_ref: Sha256HexTag;
  issued_at: string;
  expires_at: string;
}

export interface Lease extends UnsignedLease {
  signature: DocumentSignature;
}

/** A lease that passed every rule that does not need the system of record's state. */
export interface VerifiedLease extends Lease {
  recovery_mode: RecoveryMode;
}

/** The draft rule (or Baton's named addition) a refusal enforces; carried in every rejection receipt. */
export const LEASE_RULES = [
  'RECOVERY_WINDOW_INEQUALITY',
  'MONOTONIC_CAS_FENCING',
  'FOUR_MODE_RESERVATION_MANDATE',
  'CRYPTOGRAPHIC_BINDING',
  'CLOCK_SKEW',
  'TARGET_BINDING',
  'LEASE_REPLAY',
  'HUMAN_ESCROW_WINDOW',
  'RESOURCE_SEMANTICS',
] as const;
export type LeaseRule = (typeof LEASE_RULES)[number];

export interface Rejection {
  code: BatonErrorCode;
  rule: LeaseRule;
  message: string;
  /**
   * What a resource model threw when it failed (code `internal`): for the operator's log only,
   * never signed, audited or sent (leasePlugin logs it; a shell of your own should too).
   */
  cause?: unknown;
}

/** What the verifier needs to know about the resource: its epoch and the digest of its state. */
export interface ResourceFence {
  epoch: number;
  digest: Sha256HexTag;
}

// --- the system of record's records ----------------------------------------------------------

export interface ResourceRecord extends ResourceFence {
  target: string;
  state: JsonValue;
  updatedAtMs: number;
}

export const LEASE_STATUSES = [
  'committed',
  'shadowed',
  'escrowed',
  'approved',
  'rejected',
  'lapsed',
  'withdrawn',
  'compensated',
  'restored',
  'discarded',
] as const;
export type LeaseStatus = (typeof LEASE_STATUSES)[number];

/** One accepted lease. Its `lease_id` is unique: a second presentation is a replay. */
export interface LeaseRecord {
  leaseId: string;
  target: string;
  mode: RecoveryMode;
  status: LeaseStatus;
  lease: VerifiedLease;
  operation: JsonValue;
  inversePayload: JsonValue;
  acceptedAtMs: number;
  /** Last instant (inclusive) for recovery, or for escrow approval under HUMAN_ESCROW. */
  windowEndsAtMs: number;
  /** The epoch the commit created (shadow epoch under DRY_RUN_SHADOW); null while held in escrow. */
  committedEpoch: number | null;
}

/** The pre-image of a primary commit, kept for SNAPSHOT_RESTORE and for audit. */
export interface SnapshotRecord {
  leaseId: string;
  target: string;
  epoch: number;
  state: JsonValue;
  digest: Sha256HexTag;
}

/** A DRY_RUN_SHADOW write: the would-be post-image, never visible on the primary resource. */
export interface ShadowRecord {
  leaseId: string;
  target: string;
  baseEpoch: number;
  epoch: number;
  state: JsonValue;
  digest: Sha256HexTag;
}

/** A HUMAN_ESCROW mutation waiting for an operator. */
export interface EscrowRecord {
  leaseId: string;
  target: string;
  heldAtMs: number;
  approveByMs: number;
}
