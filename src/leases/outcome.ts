/** Shared shapes of the system of record's transitions (machine.ts, recover.ts). */
import { sha256HexTagJcs } from '../core/digest.js';
import { isBatonError } from '../core/errors.js';
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

/** What a resource means: how an operation (or an inverse payload) changes its state. */
export interface ResourceModel {
  /** The new state; throws a BatonError when the state refuses the operation. */
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

export function applyOrRefuse(
  model: ResourceModel,
  state: JsonValue,
  op: JsonValue,
): { state: JsonValue } | Rejection {
  try {
    return { state: model.apply(state, op) };
  } catch (error) {
    if (!isBatonError(error)) throw error;
    return { code: error.code, rule: 'RESOURCE_SEMANTICS', message: error.message };
  }
}

export function moved(
  resource: ResourceRecord,
  state: JsonValue,
  epoch: number,
  nowMs: number,
): ResourceRecord {
  return { target: resource.target, epoch, state, digest: sha256HexTagJcs(state), updatedAtMs: nowMs };
}
