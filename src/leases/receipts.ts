/**
 * Receipts the system of record signs (DESIGN.md §6): a commit answers with an Agent-Commit-Receipt,
 * every refusal with a rejection receipt, and both go to the audit log. One signature scheme for all
 * (signing.ts). Each receipt's epochs and digests describe the store it names in `store`.
 */
import type { Sha256HexTag } from '../core/digest.js';
import type { BatonErrorCode } from '../core/errors.js';
import { formatRfc3339 } from '../core/time.js';
import {
  PTCL_VERSION,
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

/**
 * Whether a receipt carries a valid signature by a key the caller trusts. It takes unchecked JSON
 * (what `decodeReceiptHeader` returns): anything that is not a signed document is false, never a throw.
 */
export function verifyReceipt(receipt: unknown, keys: KeyResolver): boolean {
  if (typeof receipt !== 'object' || receipt === null || Array.isArray(receipt)) return false;
  return checkDocumentSignature(receipt as { signature: DocumentSignature }, keys) === undefined;
}
