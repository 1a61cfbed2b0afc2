/**
 * Recovery inside the granted window (draft §4 rules 1 and 3; DESIGN.md §6). The window runs from
 * acceptance to acceptance + t_granted_ms, inclusive; outside it recovery is refused with
 * ERR_RECOVERY_WINDOW and nothing changes.
 */
import { digestEquals, sha256HexTagJcs } from '../core/digest.js';
import type { LeaseRecord, ResourceRecord, ShadowRecord, SnapshotRecord } from './model.js';
import { applyOrRefuse, moved, refused, type Outcome, type ResourceModel } from './outcome.js';
import type { RecoveryAction, RecoveryReceiptBody } from './receipts.js';
import { lapse } from './machine.js';

export interface RecoveryView {
  resource: ResourceRecord;
  snapshot: SnapshotRecord | undefined;
  shadow: ShadowRecord | undefined;
}

type RecoveryDraft = Omit<
  RecoveryReceiptBody,
  'ptcl_version' | 'receipt_id' | 'issued_at' | 'sor_target_uri'
>;

function draft(
  rec: LeaseRecord,
  action: RecoveryAction,
  store: RecoveryDraft['store'],
  from: ResourceRecord | ShadowRecord,
  to: { epoch: number; digest: RecoveryDraft['post_image_state_hash'] },
): RecoveryDraft {
  return {
    receipt_type: 'recovery',
    lease_id: rec.leaseId,
    recovery_mode: rec.mode,
    action,
    store,
    prior_epoch: from.epoch,
    new_epoch: to.epoch,
    pre_image_state_hash: from.digest,
    post_image_state_hash: to.digest,
  };
}

/** A primary change made by recovery always takes a fresh epoch: current + 1. */
function primary(
  rec: LeaseRecord,
  action: RecoveryAction,
  resource: ResourceRecord,
  next: ResourceRecord,
): Outcome {
  return {
    kind: 'accepted',
    status: 200,
    resource: next,
    writes: [
      { kind: 'resource', record: next, priorEpoch: resource.epoch },
      {
        kind: 'lease',
        record: { ...rec, status: action === 'compensated' ? 'compensated' : 'restored' },
        insert: false,
      },
    ],
    receipt: draft(rec, action, 'primary', resource, next),
  };
}

function compensate(
  rec: LeaseRecord,
  resource: ResourceRecord,
  nowMs: number,
  model: ResourceModel,
): Outcome {
  // The staged payload is re-hashed: the lease binds it, not the ledger row it was read from.
  if (!digestEquals(sha256HexTagJcs(rec.inversePayload), rec.lease.inverse_payload_jcs_hash)) {
    return refused({
      code: 'ERR_INVERSE_PAYLOAD_MISMATCH',
      rule: 'FOUR_MODE_RESERVATION_MANDATE',
      message: 'staged inverse payload changed',
    });
  }
  const applied = applyOrRefuse(model, resource.state, rec.inversePayload);
  if (!('state' in applied)) return refused(applied);
  // Leases fence at most at MAX_FENCE_EPOCH, but several compensations may each step the epoch; one
  // that would leave the safe integers (where the fence token no longer parses) fails closed.
  if (resource.epoch >= Number.MAX_SAFE_INTEGER) {
    return refused({
      code: 'conflict',
      rule: 'MONOTONIC_CAS_FENCING',
      message: 'the resource epoch has no safe successor',
    });
  }
  return primary(rec, 'compensated', resource, moved(resource, applied.state, resource.epoch + 1, nowMs));
}

function restore(rec: LeaseRecord, view: RecoveryView, nowMs: number): Outcome {
  const { resource, snapshot } = view;
  // Restoring over a later commit would silently erase it: only the commit's own epoch may be restored.
  if (resource.epoch !== rec.committedEpoch) {
    return refused({
      code: 'ERR_STALE_FENCE_EPOCH',
      rule: 'MONOTONIC_CAS_FENCING',
      message: 'resource changed after the commit',
    });
  }
  if (
    snapshot === undefined ||
    !digestEquals(sha256HexTagJcs(snapshot.state), rec.lease.pre_image_state_hash)
  ) {
    return refused({
      code: 'ERR_PRE_IMAGE_MISMATCH',
      rule: 'MONOTONIC_CAS_FENCING',
      message: 'snapshot is not the leased pre-image',
    });
  }
  return primary(rec, 'restored', resource, moved(resource, snapshot.state, resource.epoch + 1, nowMs));
}

function discard(rec: LeaseRecord, shadow: ShadowRecord, resource: ResourceRecord): Outcome {
  const to = { epoch: shadow.baseEpoch, digest: rec.lease.pre_image_state_hash };
  return {
    kind: 'accepted',
    status: 200,
    resource,
    writes: [
      { kind: 'shadow_delete', leaseId: rec.leaseId },
      { kind: 'lease', record: { ...rec, status: 'discarded' }, insert: false },
    ],
    receipt: draft(rec, 'discarded', 'shadow', shadow, to),
  };
}

function withdraw(rec: LeaseRecord, resource: ResourceRecord): Outcome {
  return {
    kind: 'accepted',
    status: 200,
    resource,
    writes: [
      { kind: 'escrow_delete', leaseId: rec.leaseId },
      { kind: 'lease', record: { ...rec, status: 'withdrawn' }, insert: false },
    ],
    receipt: draft(rec, 'withdrawn', 'escrow', resource, resource),
  };
}

export function recover(rec: LeaseRecord, view: RecoveryView, nowMs: number, model: ResourceModel): Outcome {
  if (rec.status === 'escrowed' && nowMs > rec.windowEndsAtMs) return lapse(rec);
  if (nowMs > rec.windowEndsAtMs) {
    return refused({
      code: 'ERR_RECOVERY_WINDOW',
      rule: 'RECOVERY_WINDOW_INEQUALITY',
      message: 'recovery window has closed',
    });
  }
  if (rec.status === 'escrowed') return withdraw(rec, view.resource);
  if (rec.status === 'shadowed' && view.shadow !== undefined) return discard(rec, view.shadow, view.resource);
  if (rec.status === 'committed' && rec.mode === 'COMPENSATING_ACTION')
    return compensate(rec, view.resource, nowMs, model);
  if (rec.status === 'committed' && rec.mode === 'SNAPSHOT_RESTORE') return restore(rec, view, nowMs);
  return refused({
    code: 'conflict',
    rule: 'FOUR_MODE_RESERVATION_MANDATE',
    message: `lease is ${rec.status}; nothing to recover`,
  });
}
