import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { test } from 'node:test';
import { createPublicKey } from 'node:crypto';
import { sha256HexTagJcs } from '../../src/core/digest.js';
import { signLease } from '../../src/leases/index.js';
import { startSor } from '../../src/sor/server.js';
import {
  OPERATOR,
  allocate,
  assertAccepted,
  assertRefused,
  draftLease,
  harness,
  leaseStatus,
  mutate,
  post,
  readResource,
  recoverLease,
  release,
  sign,
  type Harness,
} from './helpers.js';

const ID = '99281';
const allocated = (s: unknown): number => (s as { allocated: number }).allocated;

async function commit(
  h: Harness,
  mode: Parameters<typeof draftLease>[2],
  over: Parameters<typeof draftLease>[3] = {},
) {
  const lease = sign(h, await draftLease(h, ID, mode, over));
  const r = await mutate(h, ID, lease);
  return { lease, r };
}

test('COMPENSATING_ACTION: the staged inverse payload is applied under a fresh epoch, inside the window only', async (t) => {
  const h = await harness(2);
  t.after(() => h.close());
  const before = await readResource(h, ID);
  const { lease, r } = await commit(h, 'COMPENSATING_ACTION');
  const receipt = await assertAccepted(h, r);
  assert.ok(receipt.receipt_type === 'commit' && receipt.store === 'primary');
  assert.equal(receipt.receipt_type === 'commit' && receipt.pre_image_state_hash, lease.pre_image_state_hash);
  const committed = await readResource(h, ID);
  assert.equal(committed.epoch, lease.cas_fence_epoch);
  assert.equal(allocated(committed.state), allocated(before.state) + 3);

  await assertRefused(h, await recoverLease(h, lease.lease_id, h.gateways[1]), 'ERR_LEASE_SIGNATURE');
  await assertRefused(
    h,
    await recoverLease(h, lease.lease_id, h.gateway, h.clock.wallMs() - 61_000),
    'ERR_CLOCK_SKEW',
  );
  h.clock.advance(lease.t_granted_ms); // the last instant of the window
  const rec = await assertAccepted(h, await recoverLease(h, lease.lease_id));
  assert.ok(rec.receipt_type === 'recovery' && rec.action === 'compensated');
  const after = await readResource(h, ID);
  assert.deepEqual(after.state, before.state);
  assert.equal(after.epoch, committed.epoch + 1, 'recovery takes a fresh epoch');
  await assertRefused(h, await recoverLease(h, lease.lease_id), 'conflict');

  const late = await commit(h, 'COMPENSATING_ACTION');
  await assertAccepted(h, late.r);
  const unchanged = await readResource(h, ID);
  h.clock.advance(late.lease.t_granted_ms + 1);
  await assertRefused(h, await recoverLease(h, late.lease.lease_id), 'ERR_RECOVERY_WINDOW');
  assert.deepEqual(await readResource(h, ID), unchanged);
});

test('COMPENSATING_ACTION undoes its own effect even after a later commit', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const base = allocated((await readResource(h, ID)).state);
  const a = await commit(h, 'COMPENSATING_ACTION');
  await assertAccepted(h, a.r);
  const b = sign(h, await draftLease(h, ID, 'COMPENSATING_ACTION', { inverse: release(2) }));
  await assertAccepted(h, await mutate(h, ID, b, { operation: allocate(2), inverse_payload: release(2) }));
  await assertAccepted(h, await recoverLease(h, a.lease.lease_id));
  assert.equal(allocated((await readResource(h, ID)).state), base + 2);
});

test('COMPENSATING_ACTION: a commit whose inverse payload cannot undo it is refused, nothing written', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const before = await readResource(h, ID);
  // allocated is 12 + 3 after the commit: releasing 1000 can never apply; `restock` is no operation.
  for (const inverse of [release(1000), { op: 'restock', quantity: 3 }]) {
    const lease = sign(h, await draftLease(h, ID, 'COMPENSATING_ACTION', { inverse }));
    const r = await mutate(h, ID, lease, { operation: allocate(3), inverse_payload: inverse });
    const receipt = await assertRefused(h, r, 'input_invalid');
    assert.equal(receipt.receipt_type === 'rejection' && receipt.rule, 'FOUR_MODE_RESERVATION_MANDATE');
    assert.deepEqual(await readResource(h, ID), before, 'nothing committed');
    const rec = await fetch(`${h.sor.url}/ptcl/leases/${encodeURIComponent(lease.lease_id)}`);
    assert.equal(rec.status, 404, 'the lease_id is not consumed');
  }
  // Only COMPENSATING_ACTION applies its inverse payload; SNAPSHOT_RESTORE restores the snapshot.
  const snapshot = sign(h, await draftLease(h, ID, 'SNAPSHOT_RESTORE', { inverse: release(1000) }));
  await assertAccepted(
    h,
    await mutate(h, ID, snapshot, { operation: allocate(3), inverse_payload: release(1000) }),
  );
});

test('fence epochs keep a safe successor: a lease fences at most at 2^53 - 2, a compensation past 2^53 - 1 is refused', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const id = '99282';
  const top = Number.MAX_SAFE_INTEGER - 1;
  const draft = await draftLease(h, id, 'COMPENSATING_ACTION');
  assert.throws(
    () => signLease({ ...draft, cas_fence_epoch: top + 1 }, h.gateway),
    (e: unknown) => e instanceof Error && 'code' in e && e.code === 'ERR_LEASE_MALFORMED',
    'Baton never signs a fence that leaves no room for recovery',
  );
  const early = sign(h, draft);
  await assertAccepted(h, await mutate(h, id, early));
  const last = sign(h, { ...(await draftLease(h, id, 'COMPENSATING_ACTION')), cas_fence_epoch: top });
  await assertAccepted(h, await mutate(h, id, last));
  assert.equal((await readResource(h, id)).epoch, top);
  await assertAccepted(h, await recoverLease(h, last.lease_id));
  const atMax = await readResource(h, id); // parses the published Agent-Fence-Token
  assert.equal(atMax.epoch, Number.MAX_SAFE_INTEGER);
  // The earlier commit's compensation would take epoch 2^53: refused, nothing changes.
  await assertRefused(h, await recoverLease(h, early.lease_id), 'conflict');
  assert.deepEqual(await readResource(h, id), atMax);
  assert.equal(await leaseStatus(h, early.lease_id), 'committed');
});

test('SNAPSHOT_RESTORE: the pre-image comes back (digest checked) under a fresh epoch, inside the window only', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const before = await readResource(h, ID);
  const { lease, r } = await commit(h, 'SNAPSHOT_RESTORE');
  await assertAccepted(h, r);
  h.clock.advance(1000);
  const rec = await assertAccepted(h, await recoverLease(h, lease.lease_id));
  assert.ok(rec.receipt_type === 'recovery' && rec.action === 'restored');
  assert.equal(rec.receipt_type === 'recovery' && rec.post_image_state_hash, lease.pre_image_state_hash);
  const after = await readResource(h, ID);
  assert.deepEqual(after.state, before.state);
  assert.equal(sha256HexTagJcs(after.state), lease.pre_image_state_hash);
  assert.equal(after.epoch, lease.cas_fence_epoch + 1);

  const late = await commit(h, 'SNAPSHOT_RESTORE');
  await assertAccepted(h, late.r);
  h.clock.advance(late.lease.t_granted_ms + 1);
  const unchanged = await readResource(h, ID);
  await assertRefused(h, await recoverLease(h, late.lease.lease_id), 'ERR_RECOVERY_WINDOW');
  assert.deepEqual(await readResource(h, ID), unchanged);

  // Restoring over a later commit would erase it: refused.
  const first = await commit(h, 'SNAPSHOT_RESTORE');
  await assertAccepted(h, first.r);
  await assertAccepted(h, (await commit(h, 'COMPENSATING_ACTION')).r);
  const moved = await readResource(h, ID);
  await assertRefused(h, await recoverLease(h, first.lease.lease_id), 'ERR_STALE_FENCE_EPOCH');
  assert.deepEqual(await readResource(h, ID), moved);
});

test('DRY_RUN_SHADOW: writes only to the shadow and says so; discarded inside the window only', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const before = await readResource(h, ID);
  const { lease, r } = await commit(h, 'DRY_RUN_SHADOW');
  const receipt = await assertAccepted(h, r);
  assert.ok(receipt.receipt_type === 'commit' && receipt.store === 'shadow');
  assert.deepEqual(await readResource(h, ID), before, 'the primary resource is untouched');
  const shadowUrl = `${h.sor.url}/ptcl/shadow/${encodeURIComponent(lease.lease_id)}`;
  const shadow = (await (await fetch(shadowUrl)).json()) as { state: unknown; epoch: number; digest: string };
  assert.equal(allocated(shadow.state), allocated(before.state) + 3);
  assert.equal(shadow.epoch, lease.cas_fence_epoch);
  assert.equal(receipt.receipt_type === 'commit' && receipt.post_image_state_hash, shadow.digest);

  // The dry run consumed no primary epoch: a real lease at the same fence still commits.
  await assertAccepted(h, (await commit(h, 'COMPENSATING_ACTION')).r);

  const rec = await assertAccepted(h, await recoverLease(h, lease.lease_id));
  assert.ok(rec.receipt_type === 'recovery' && rec.action === 'discarded' && rec.store === 'shadow');
  assert.equal((await fetch(shadowUrl)).status, 404);

  const late = await commit(h, 'DRY_RUN_SHADOW');
  await assertAccepted(h, late.r);
  h.clock.advance(late.lease.t_granted_ms + 1);
  await assertRefused(h, await recoverLease(h, late.lease.lease_id), 'ERR_RECOVERY_WINDOW');
  assert.equal(
    (await fetch(`${h.sor.url}/ptcl/shadow/${encodeURIComponent(late.lease.lease_id)}`)).status,
    200,
  );
});

async function escrow(h: Harness, over: Parameters<typeof draftLease>[3] = {}) {
  const { lease, r } = await commit(h, 'HUMAN_ESCROW', over);
  const receipt = await assertAccepted(h, r, 202);
  assert.equal(receipt.receipt_type, 'escrow_held');
  return lease;
}

const approvePath = (leaseId: string): string => `/ptcl/escrow/${encodeURIComponent(leaseId)}/approve`;

test('HUMAN_ESCROW: held until an operator approves inside the window; lapses otherwise', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const before = await readResource(h, ID);
  const lease = await escrow(h);
  assert.deepEqual(await readResource(h, ID), before, 'nothing applied while held');
  assert.equal((await post(h, approvePath(lease.lease_id))).status, 401, 'approval needs an operator');
  const queue = await fetch(`${h.sor.url}/ptcl/escrow`, { headers: { authorization: `Bearer ${OPERATOR}` } });
  assert.deepEqual(
    ((await queue.json()) as { pending: Array<{ lease_id: string }> }).pending.map((p) => p.lease_id),
    [lease.lease_id],
  );
  h.clock.advance(lease.t_granted_ms);
  const receipt = await assertAccepted(h, await post(h, approvePath(lease.lease_id), undefined, true));
  assert.ok(
    receipt.receipt_type === 'commit' &&
      receipt.store === 'primary' &&
      receipt.new_epoch === lease.cas_fence_epoch,
  );
  assert.equal(allocated((await readResource(h, ID)).state), allocated(before.state) + 3);
  assert.equal(await leaseStatus(h, lease.lease_id), 'approved');

  const late = await escrow(h);
  const held = await readResource(h, ID);
  h.clock.advance(late.t_granted_ms + 1);
  await assertRefused(h, await post(h, approvePath(late.lease_id), undefined, true), 'ERR_ESCROW_LAPSED');
  assert.deepEqual(await readResource(h, ID), held);
  assert.equal(await leaseStatus(h, late.lease_id), 'lapsed');
});

test('HUMAN_ESCROW: the sweep lets overdue holds lapse; expires_at bounds approval; fence rechecked; withdrawal', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const swept = await escrow(h);
  h.clock.advance(swept.t_granted_ms + 1);
  assert.equal(h.sor.service.sweep().length, 1);
  assert.equal(await leaseStatus(h, swept.lease_id), 'lapsed');

  const short = await escrow(h, { ttlMs: 1000, tGrantedMs: 5000 });
  h.clock.advance(1001);
  await assertRefused(h, await post(h, approvePath(short.lease_id), undefined, true), 'ERR_ESCROW_LAPSED');

  const stale = await escrow(h);
  await assertAccepted(h, (await commit(h, 'COMPENSATING_ACTION')).r);
  const moved = await readResource(h, ID);
  await assertRefused(
    h,
    await post(h, approvePath(stale.lease_id), undefined, true),
    'ERR_STALE_FENCE_EPOCH',
  );
  assert.deepEqual(await readResource(h, ID), moved);

  const withdrawn = await escrow(h);
  const rec = await assertAccepted(h, await recoverLease(h, withdrawn.lease_id));
  assert.ok(rec.receipt_type === 'recovery' && rec.action === 'withdrawn');
  await assertRefused(h, await post(h, approvePath(withdrawn.lease_id), undefined, true), 'conflict');
  assert.deepEqual(await readResource(h, ID), moved);
  assert.equal(h.sor.ledger.verifyAuditChain(), undefined);
});

test('HUMAN_ESCROW: approval re-checks the lease signature against the keys trusted then', async (t) => {
  const h = await harness(2);
  const dir = dirname(h.dbPath);
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const lease = await escrow(h);
  const before = await readResource(h, ID);
  // The system of record restarts over the same database, no longer trusting the lease's signer.
  await h.sor.close();
  const sor = await startSor({
    dbPath: h.dbPath,
    signer: h.sorKey,
    trusted: [createPublicKey(h.gateways[1]!.privateKey)],
    operatorToken: OPERATOR,
    clock: h.clock,
    sweepIntervalMs: 0,
    publicOrigin: h.sor.origin,
  });
  t.after(() => sor.close());
  const now: Harness = { ...h, sor };
  const r = await post(now, approvePath(lease.lease_id), undefined, true);
  const receipt = await assertRefused(now, r, 'ERR_LEASE_SIGNATURE');
  assert.equal(receipt.receipt_type === 'rejection' && receipt.lease_id, lease.lease_id);
  assert.deepEqual(await readResource(now, ID), before, 'the held mutation was not applied');
  assert.equal(await leaseStatus(now, lease.lease_id), 'escrowed', 'a refusal changes nothing');
  assert.deepEqual(
    sor.ledger.pendingEscrows().map((e) => e.leaseId),
    [lease.lease_id],
  );
});
