/** Shared shapes of the system of record's transitions (machine.ts, recover.ts). */
import { sha256HexTagJcs } from '../core/digest.js';
import { isBatonError } from '../core/errors.js';
import { canonicalize } from '../core/jcs.js';
import type { JsonValue } from '../core/json.js';
import type {
  EscrowRecord,
  LeaseRecord,
  Rejection,
  ResourceRecord,
  ShadowRecord,
  SnapshotRecord,
} from './model.js';
import type { ReceiptDraft } from './receipts.js';

/** A refusal with no model fault behind it: its code, the draft rule it enforces and why. */
export const reject = (code: Rejection['code'], rule: Rejection['rule'], message: string): Rejection => ({
  code,
  rule,
  message,
});

/** What a resource means: how an operation (or an inverse payload) changes its state. */
export interface ResourceModel {
  /**
   * The new state; throws a BatonError (`input_invalid` for an operation that makes no sense,
   * `conflict` for one the state refuses) when it refuses. Anything else thrown is a fault: the
   * request is refused with `internal` (500), a signed receipt and an audit row (applyOrRefuse).
   */
  apply(state: JsonValue, operation: JsonValue): JsonValue;
}

export type Write =
  /** A compare-and-set: the ledger writes only if the stored epoch is still `priorEpoch`. */
  | { kind: 'resource'; record: ResourceRecord; priorEpoch: number }
  /** `insert` for a newly accepted lease: the ledger's unique lease_id index refuses a second one. */
  | { kind: 'lease'; record: LeaseRecord; insert: boolean }
  | { kind: 'snapshot'; record: SnapshotRecord }
  | { kind: 'shadow'; record: ShadowRecord }
  | { kind: 'shadow_delete'; leaseId: string }
  | { kind: 'escrow'; record: EscrowRecord }
  | { kind: 'escrow_delete'; leaseId: string };

export type Outcome =
  | { kind: 'accepted'; status: 200 | 202; writes: Write[]; receipt: ReceiptDraft; resource: ResourceRecord }
  | { kind: 'refused'; rejection: Rejection; writes: Write[] };

export interface Staged {
  operation: JsonValue;
  inversePayload: JsonValue;
}

export const refused = (rejection: Rejection, writes: Write[] = []): Outcome => ({
  kind: 'refused',
  rejection,
  writes,
});

/** What a refusal says when the model failed with anything but a BatonError: its text stays inside. */
export const MODEL_FAULT_MESSAGE = 'the resource model failed';

/**
 * Run the model. A BatonError is the model's refusal and keeps its code and message. Anything else
 * thrown (a plain Error, a TypeError from a bug, a non-Error value) is a fault: draft §5 asks to fail
 * closed *and* emit an auditable rejection receipt, so it becomes a refusal with code `internal`
 * (HTTP 500) — signed and audited by the shell like any other, nothing written — instead of escaping
 * the transaction as a receipt-less 500. Its text is not repeated: it is the model's, not the
 * system of record's, and may carry state the caller must not see.
 */
export function applyOrRefuse(
  model: ResourceModel,
  state: JsonValue,
  op: JsonValue,
): { state: JsonValue } | Rejection {
  const fault: Rejection = { code: 'internal', rule: 'RESOURCE_SEMANTICS', message: MODEL_FAULT_MESSAGE };
  let next: JsonValue;
  try {
    next = model.apply(state, op);
  } catch (error) {
    if (!isBatonError(error)) return { ...fault, cause: error };
    return { code: error.code, rule: 'RESOURCE_SEMANTICS', message: error.message };
  }
  // A state with no I-JSON form (undefined, NaN, a cycle) could not be digested or stored: the
  // same fault, refused here rather than thrown later from inside the transaction.
  try {
    canonicalize(next);
  } catch (error) {
    return { ...fault, cause: error };
  }
  return { state: next };
}

export function moved(
  resource: ResourceRecord,
  state: JsonValue,
  epoch: number,
  nowMs: number,
): ResourceRecord {
  return { target: resource.target, epoch, state, digest: sha256HexTagJcs(state), updatedAtMs: nowMs };
}
