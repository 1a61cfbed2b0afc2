/**
 * Receipts the system of record signs (DESIGN.md §6): a commit answers with an Agent-Commit-Receipt,
 * every refusal with a rejection receipt, and both go to the audit log. One signature scheme for all
 * (signing.ts). Each receipt's epochs and digests describe the store it names in `store`.
 */
import type { Sha256HexTag } from '../core/digest.js';
import { ERROR_CODES, type BatonErrorCode } from '../core/errors.js';
import { formatRfc3339, isRfc3339DateTime } from '../core/time.js';
import {
  LEASE_RULES,
  PTCL_VERSION,
  RECOVERY_MODES,
  type DocumentSignature,
  type LeaseRule,
  type RecoveryMode,
  type Rejection,
} from './model.js';
import { checkDocumentSignature, signDocument, type KeyResolver, type SigningKey } from './signing.js';

interface ReceiptHead {
  ptcl_version: typeof PTCL_VERSION;
  receipt_id: string;
  issued_at: string;
  sor_target_uri: string;
}

/** A mutation applied: to the primary resource, or (DRY_RUN_SHADOW) only to the shadow store. */
export interface CommitReceiptBody extends ReceiptHead {
  receipt_type: 'commit';
  lease_id: string;
  recovery_mode: RecoveryMode;
  store: 'primary' | 'shadow';
  prior_epoch: number;
  new_epoch: number;
  pre_image_state_hash: Sha256HexTag;
  post_image_state_hash: Sha256HexTag;
  recovery_window_ends_at: string | null;
}

/** HUMAN_ESCROW: the mutation is held; nothing changed yet. */
export interface EscrowReceiptBody extends ReceiptHead {
  receipt_type: 'escrow_held';
  lease_id: string;
  recovery_mode: 'HUMAN_ESCROW';
  store: 'escrow';
  current_epoch: number;
  cas_fence_epoch: number;
  pre_image_state_hash: Sha256HexTag;
  approve_by: string;
}

export type RecoveryAction = 'compensated' | 'restored' | 'discarded' | 'withdrawn';

/** A recovery carried out inside the granted window. */
export interface RecoveryReceiptBody extends ReceiptHead {
  receipt_type: 'recovery';
  lease_id: string;
  recovery_mode: RecoveryMode;
  action: RecoveryAction;
  store: 'primary' | 'shadow' | 'escrow';
  prior_epoch: number;
  new_epoch: number;
  pre_image_state_hash: Sha256HexTag;
  post_image_state_hash: Sha256HexTag;
}

/** Any refusal. `lease_hash` is the SHA-256 of the lease bytes as presented (null when none was). */
export interface RejectionReceiptBody extends ReceiptHead {
  receipt_type: 'rejection';
  lease_id: string | null;
  code: BatonErrorCode;
  rule: LeaseRule;
  current_epoch: number | null;
  lease_hash: Sha256HexTag | null;
}

export type ReceiptBody = CommitReceiptBody | EscrowReceiptBody | RecoveryReceiptBody | RejectionReceiptBody;
export type Receipt = ReceiptBody & { signature: DocumentSignature };

/** Everything but the head, which the shell fills with a fresh id and the time. */
export type ReceiptDraft =
  | Omit<CommitReceiptBody, keyof ReceiptHead | 'sor_target_uri'>
  | Omit<EscrowReceiptBody, keyof ReceiptHead | 'sor_target_uri'>
  | Omit<RecoveryReceiptBody, keyof ReceiptHead | 'sor_target_uri'>
  | Omit<RejectionReceiptBody, keyof ReceiptHead | 'sor_target_uri'>;

export function rejectionDraft(
  rejection: Rejection,
  facts: { leaseId: string | null; epoch: number | null; leaseHash: Sha256HexTag | null },
): ReceiptDraft {
  return {
    receipt_type: 'rejection',
    lease_id: facts.leaseId,
    code: rejection.code,
    rule: rejection.rule,
    current_epoch: facts.epoch,
    lease_hash: facts.leaseHash,
  };
}

export function signReceipt(
  draft: ReceiptDraft,
  head: { receiptId: string; nowMs: number; target: string },
  key: SigningKey,
): Receipt {
  const body = {
    ptcl_version: PTCL_VERSION,
    receipt_id: head.receiptId,
    issued_at: formatRfc3339(head.nowMs),
    sor_target_uri: head.target,
    ...draft,
  } as ReceiptBody;
  return signDocument(body, key) as Receipt;
}

const SHA256_TAG = /^sha256:[0-9a-f]{64}$/;
const EPOCH = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const TEXT = (v: unknown): boolean => typeof v === 'string' && v.length > 0;
const INSTANT = (v: unknown): boolean => typeof v === 'string' && isRfc3339DateTime(v);
const DIGEST = (v: unknown): boolean => typeof v === 'string' && SHA256_TAG.test(v);
const ONE_OF =
  (values: readonly string[]) =>
  (v: unknown): boolean =>
    typeof v === 'string' && values.includes(v);
const OR_NULL =
  (check: (v: unknown) => boolean) =>
  (v: unknown): boolean =>
    v === null || check(v);
const MODE = ONE_OF(RECOVERY_MODES);

type Shape = Readonly<Record<string, (v: unknown) => boolean>>;

/** Members every receipt has (docs/leases.md §7), `receipt_type` and `signature` included. */
const HEAD: Shape = {
  ptcl_version: (v) => v === PTCL_VERSION,
  receipt_id: TEXT,
  issued_at: INSTANT,
  sor_target_uri: TEXT,
  receipt_type: TEXT,
  signature: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
};

/** The further members of each receipt type, exactly (docs/leases.md §7). */
const SHAPES: Readonly<Record<ReceiptBody['receipt_type'], Shape>> = {
  commit: {
    lease_id: TEXT,
    recovery_mode: MODE,
    store: ONE_OF(['primary', 'shadow']),
    prior_epoch: EPOCH,
    new_epoch: EPOCH,
    pre_image_state_hash: DIGEST,
    post_image_state_hash: DIGEST,
    recovery_window_ends_at: OR_NULL(INSTANT),
  },
  escrow_held: {
    lease_id: TEXT,
    recovery_mode: (v) => v === 'HUMAN_ESCROW',
    store: (v) => v === 'escrow',
    current_epoch: EPOCH,
    cas_fence_epoch: EPOCH,
    pre_image_state_hash: DIGEST,
    approve_by: INSTANT,
  },
  recovery: {
    lease_id: TEXT,
    recovery_mode: MODE,
    action: ONE_OF(['compensated', 'restored', 'discarded', 'withdrawn']),
    store: ONE_OF(['primary', 'shadow', 'escrow']),
    prior_epoch: EPOCH,
    new_epoch: EPOCH,
    pre_image_state_hash: DIGEST,
    post_image_state_hash: DIGEST,
  },
  rejection: {
    lease_id: OR_NULL(TEXT),
    code: (v) => typeof v === 'string' && Object.hasOwn(ERROR_CODES, v),
    rule: ONE_OF(LEASE_RULES),
    current_epoch: OR_NULL(EPOCH),
    lease_hash: OR_NULL(DIGEST),
  },
};

/**
 * Whether unchecked JSON has exactly the members of one receipt type, each of its form (docs/leases.md
 * §7): a signed lease, a recovery order or a receipt with a made-up member value is not a receipt.
 */
export function isReceiptShape(value: unknown): value is Receipt {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const object = value as Record<string, unknown>;
  const type = object['receipt_type'];
  if (typeof type !== 'string' || !Object.hasOwn(SHAPES, type)) return false;
  const shape: Shape = { ...HEAD, ...SHAPES[type as ReceiptBody['receipt_type']] };
  const names = Object.keys(object);
  if (names.length !== Object.keys(shape).length) return false;
  return names.every((name) => Object.hasOwn(shape, name) && shape[name]!(object[name]));
}

/**
 * Whether a value is a receipt — exactly the members of its `receipt_type`, each of its form
 * (`isReceiptShape`) — carrying a valid signature by a key the caller trusts. It takes unchecked JSON
 * (what `decodeReceiptHeader` returns): anything else, a validly signed lease or recovery order
 * included, is false, never a throw.
 */
export function verifyReceipt(receipt: unknown, keys: KeyResolver): boolean {
  if (!isReceiptShape(receipt)) return false;
  return checkDocumentSignature(receipt, keys) === undefined;
}
