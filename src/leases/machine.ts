/**
 * The system of record's pure transitions (DESIGN.md §1 machine.ts shape): (records, command, now) →
 * writes + receipt draft, or a refusal. No I/O; the shell (service.ts) runs each inside one serialized
 * ledger transaction, so the fence check and the write it guards can never be separated.
 */
import { digestEquals, sha256HexTagJcs } from '../core/digest.js';
import type { JsonValue } from '../core/json.js';
import { formatRfc3339, parseRfc3339 } from '../core/time.js';
import { leaseSigningInput } from './lease-jcs.js';
import type {
  LeaseRecord,
  Rejection,
  ResourceRecord,
  ShadowRecord,
  SnapshotRecord,
  VerifiedLease,
} from './model.js';
import { applyOrRefuse, moved, refused, type Outcome, type ResourceModel, type Staged } from './outcome.js';
import { checkDocumentSignature, type KeyResolver } from './signing.js';

/** A primary commit: the resource takes epoch cas_fence_epoch; its pre-image is snapshotted. */
function commitPrimary(rec: LeaseRecord, resource: ResourceRecord, post: JsonValue, nowMs: number): Outcome {
  const epoch = rec.lease.cas_fence_epoch;
  const next = moved(resource, post, epoch, nowMs);
  const snapshot: SnapshotRecord = { ...pick(resource), leaseId: rec.leaseId };
  const recoverable = rec.status === 'committed';
  return {
    kind: 'accepted',
    status: 200,
    resource: next,
    writes: [
      { kind: 'resource', record: next, priorEpoch: resource.epoch },
      { kind: 'snapshot', record: snapshot },
      { kind: 'lease', record: { ...rec, committedEpoch: epoch }, insert: recoverable },
    ],
    receipt: {
      receipt_type: 'commit',
      lease_id: rec.leaseId,
      recovery_mode: rec.mode,
      store: 'primary',
      prior_epoch: resource.epoch,
      new_epoch: epoch,
      pre_image_state_hash: resource.digest,
      post_image_state_hash: next.digest,
      recovery_window_ends_at: recoverable ? formatRfc3339(rec.windowEndsAtMs) : null,
    },
  };
}

function pick(r: ResourceRecord): Omit<SnapshotRecord, 'leaseId'> {
  return { target: r.target, epoch: r.epoch, state: r.state, digest: r.digest };
}

/**
 * Draft §4 rule 3: under COMPENSATING_ACTION the inverse payload is the commit's compensation, staged
 * before the lock is released. The draft's lease signs the inverse payload (by its JCS hash) but has
 * no member for the forward operation, so the operation is bound here instead: the inverse payload,
 * applied to the post-image this commit would create, must give back the pre-image exactly (its
 * digest equals the resource's current digest, which check 10 found equal to pre_image_state_hash).
 * Otherwise whoever holds the lease header could stage any operation beside the signed inverse — say
 * `allocate 400` beside a lease made for `allocate 1` / `release 1` after the first attempt failed
 * unconsumed — and commit it. A refusal writes nothing and consumes no lease_id.
 */
function compensationRefusal(
  resource: ResourceRecord,
  post: JsonValue,
  inversePayload: JsonValue,
  model: ResourceModel,
): Rejection | undefined {
  const undone = applyOrRefuse(model, post, inversePayload);
  if ('state' in undone && digestEquals(sha256HexTagJcs(undone.state), resource.digest)) return undefined;
  // A fault of the model itself stays `internal`: it says nothing about the payload.
  if (!('state' in undone) && undone.code === 'internal') return undone;
  const why = 'state' in undone ? 'gives another state' : `does not apply (${undone.message})`;
  return {
    code: 'input_invalid',
    rule: 'FOUR_MODE_RESERVATION_MANDATE',
    message: `the inverse payload does not restore the pre-image: applied to the post-image it ${why}`,
  };
}

/** Admit a lease the verifier accepted against this very resource state. */
export function admit(
  lease: VerifiedLease,
  resource: ResourceRecord,
  staged: Staged,
  nowMs: number,
  model: ResourceModel,
): Outcome {
  const applied = applyOrRefuse(model, resource.state, staged.operation);
  if (!('state' in applied)) return refused(applied);
  if (lease.recovery_mode === 'COMPENSATING_ACTION') {
    const unbound = compensationRefusal(resource, applied.state, staged.inversePayload, model);
    if (unbound !== undefined) return refused(unbound);
  }
  const rec: LeaseRecord = {
    leaseId: lease.lease_id,
    target: resource.target,
    mode: lease.recovery_mode,
    status: 'committed',
    lease,
    ...staged,
    acceptedAtMs: nowMs,
    windowEndsAtMs: nowMs + lease.t_granted_ms,
    committedEpoch: null,
  };
  if (lease.recovery_mode === 'HUMAN_ESCROW') return hold(rec, resource, nowMs);
  if (lease.recovery_mode === 'DRY_RUN_SHADOW') return shadowWrite(rec, resource, applied.state);
  return commitPrimary(rec, resource, applied.state, nowMs);
}

function hold(rec: LeaseRecord, resource: ResourceRecord, nowMs: number): Outcome {
  // The mutation is applied at approval, so approval must also fall before expires_at (draft §4 rule 1).
  const approveBy = Math.min(nowMs + rec.lease.t_granted_ms, parseRfc3339(rec.lease.expires_at));
  const held: LeaseRecord = { ...rec, status: 'escrowed', windowEndsAtMs: approveBy };
  return {
    kind: 'accepted',
    status: 202,
    resource,
    writes: [
      { kind: 'lease', record: held, insert: true },
      {
        kind: 'escrow',
        record: { leaseId: rec.leaseId, target: rec.target, heldAtMs: nowMs, approveByMs: approveBy },
      },
    ],
    receipt: {
      receipt_type: 'escrow_held',
      lease_id: rec.leaseId,
      recovery_mode: 'HUMAN_ESCROW',
      store: 'escrow',
      current_epoch: resource.epoch,
      cas_fence_epoch: rec.lease.cas_fence_epoch,
      pre_image_state_hash: resource.digest,
      approve_by: formatRfc3339(approveBy),
    },
  };
}

function shadowWrite(rec: LeaseRecord, resource: ResourceRecord, post: JsonValue): Outcome {
  const epoch = rec.lease.cas_fence_epoch;
  const shadow: ShadowRecord = {
    leaseId: rec.leaseId,
    target: rec.target,
    baseEpoch: resource.epoch,
    epoch,
    state: post,
    digest: sha256HexTagJcs(post),
  };
  return {
    kind: 'accepted',
    status: 200,
    resource,
    writes: [
      { kind: 'shadow', record: shadow },
      { kind: 'lease', record: { ...rec, status: 'shadowed', committedEpoch: epoch }, insert: true },
    ],
    receipt: {
      receipt_type: 'commit',
      lease_id: rec.leaseId,
      recovery_mode: 'DRY_RUN_SHADOW',
      store: 'shadow',
      prior_epoch: resource.epoch,
      new_epoch: epoch,
      pre_image_state_hash: resource.digest,
      post_image_state_hash: shadow.digest,
      recovery_window_ends_at: formatRfc3339(rec.windowEndsAtMs),
    },
  };
}

/** An escrowed mutation whose window passed: it lapses, the resource untouched. */
export function lapse(rec: LeaseRecord): Outcome {
  return refused(
    { code: 'ERR_ESCROW_LAPSED', rule: 'HUMAN_ESCROW_WINDOW', message: 'escrow window passed' },
    [
      { kind: 'lease', record: { ...rec, status: 'lapsed' }, insert: false },
      { kind: 'escrow_delete', leaseId: rec.leaseId },
    ],
  );
}

/**
 * Operator approval of a HUMAN_ESCROW mutation: the signature (against the keys trusted now), the
 * fence and the pre-image are checked again, now.
 */
export function approve(
  rec: LeaseRecord,
  resource: ResourceRecord,
  nowMs: number,
  model: ResourceModel,
  keys: KeyResolver,
): Outcome {
  if (rec.status !== 'escrowed') {
    return refused({
      code: 'conflict',
      rule: 'HUMAN_ESCROW_WINDOW',
      message: `lease is ${rec.status}, not held`,
    });
  }
  // Approval releases the held side effect, so the lease must verify then (draft §4: "before
  // releasing any downstream side effect"; §5 fail closed): a gateway key removed from trust since
  // the hold no longer authorizes it. Refused without a write: the hold stays until it lapses.
  const forged = checkDocumentSignature(rec.lease, keys, () => leaseSigningInput(rec.lease));
  if (forged !== undefined) return refused(forged);
  if (nowMs > rec.windowEndsAtMs) return lapse(rec);
  if (resource.epoch >= rec.lease.cas_fence_epoch) {
    return refused({
      code: 'ERR_STALE_FENCE_EPOCH',
      rule: 'MONOTONIC_CAS_FENCING',
      message: 'epoch moved on',
    });
  }
  if (!digestEquals(resource.digest, rec.lease.pre_image_state_hash)) {
    return refused({
      code: 'ERR_PRE_IMAGE_MISMATCH',
      rule: 'MONOTONIC_CAS_FENCING',
      message: 'state changed',
    });
  }
  const applied = applyOrRefuse(model, resource.state, rec.operation);
  if (!('state' in applied)) return refused(applied);
  const outcome = commitPrimary({ ...rec, status: 'approved' }, resource, applied.state, nowMs);
  return { ...outcome, writes: [...outcome.writes, { kind: 'escrow_delete', leaseId: rec.leaseId }] };
}
