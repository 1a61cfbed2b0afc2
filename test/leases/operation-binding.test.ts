/**
 * The draft's lease signs the inverse payload but names no forward operation, so under
 * COMPENSATING_ACTION the system of record binds the operation to its staged compensation: applied to
 * the post-image, the inverse payload must give back the pre-image exactly (docs/leases.md §3, draft
 * §4 rule 3). Without that, a lease made for `allocate 1` / `release 1` whose first POST failed
 * unconsumed could be replayed by anyone who saw its header with `allocate 400` beside the same inverse.
 * Real reference system of record over HTTP on loopback, real signatures.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LEASE_HEADER, encodeLeaseHeader } from '../../src/leases/index.js';
import {
  OPERATOR,
  allocate,
  assertAccepted,
  assertRefused,
  draftLease,
  harness,
  leaseStatus,
  mutate,
  readResource,
  recoverLease,
  release,
  sign,
} from './helpers.js';

const allocated = (s: unknown): number => (s as { allocated: number }).allocated;
const ID = '99282'; // on_hand 500, allocated 0: allocate 400 fits the stock

test('COMPENSATING_ACTION: a lease replayed with another operation beside its inverse is refused, unconsumed', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const before = await readResource(h, ID);
  const lease = sign(h, await draftLease(h, ID, 'COMPENSATING_ACTION', { inverse: release(1) }));

  // The gateway's own first attempt reaches the system of record truncated: refused, nothing consumed.
  const truncated = await fetch(`${h.sor.url}/api/v2/inventory/allocations/${ID}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [LEASE_HEADER]: encodeLeaseHeader(lease) },
    body: '{"operation":{"op":"allocate","quantity":1},',
  });
  assert.equal(truncated.status, 400);
  await truncated.body?.cancel();

  // Someone who saw the header stages an operation of their own beside the signed inverse.
  for (const operation of [allocate(400), allocate(2)]) {
    const r = await mutate(h, ID, lease, { operation, inverse_payload: release(1) });
    const receipt = await assertRefused(h, r, 'input_invalid');
    assert.equal(receipt.receipt_type === 'rejection' && receipt.rule, 'FOUR_MODE_RESERVATION_MANDATE');
    assert.equal(receipt.receipt_type === 'rejection' && receipt.lease_id, lease.lease_id);
    assert.match(String(r.body['detail']), /inverse payload does not restore the pre-image/);
    assert.deepEqual(await readResource(h, ID), before, 'nothing written');
    const rec = await fetch(`${h.sor.url}/ptcl/leases/${encodeURIComponent(lease.lease_id)}`);
    assert.equal(rec.status, 404, 'the lease_id is not consumed');
    await rec.body?.cancel();
  }

  // The operation the inverse undoes still commits, and its compensation restores the pre-image.
  const ok = await assertAccepted(
    h,
    await mutate(h, ID, lease, { operation: allocate(1), inverse_payload: release(1) }),
  );
  assert.ok(ok.receipt_type === 'commit' && ok.pre_image_state_hash === lease.pre_image_state_hash);
  assert.equal(allocated((await readResource(h, ID)).state), 1);
  await assertAccepted(h, await recoverLease(h, lease.lease_id));
  assert.deepEqual((await readResource(h, ID)).state, before.state);
  assert.equal(await leaseStatus(h, lease.lease_id), 'compensated');
});

test('COMPENSATING_ACTION: an inverse that applies but lands elsewhere (release 2 after allocate 3) is refused', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const id = '99281'; // allocated 12: release 2 after allocate 3 applies, to 13, not 12
  const before = await readResource(h, id);
  const lease = sign(h, await draftLease(h, id, 'COMPENSATING_ACTION', { inverse: release(2) }));
  const r = await mutate(h, id, lease, { operation: allocate(3), inverse_payload: release(2) });
  const receipt = await assertRefused(h, r, 'input_invalid');
  assert.equal(receipt.receipt_type === 'rejection' && receipt.rule, 'FOUR_MODE_RESERVATION_MANDATE');
  assert.match(String(r.body['detail']), /does not restore the pre-image/);
  assert.deepEqual(await readResource(h, id), before, 'nothing written');
});

test('HUMAN_ESCROW: the escrow queue shows the operator the held operation, which the lease does not name', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const held = sign(h, await draftLease(h, ID, 'HUMAN_ESCROW', { inverse: release(1) }));
  await assertAccepted(
    h,
    await mutate(h, ID, held, { operation: allocate(7), inverse_payload: release(1) }),
    202,
  );
  const queue = await fetch(`${h.sor.url}/ptcl/escrow`, { headers: { authorization: `Bearer ${OPERATOR}` } });
  const { pending } = (await queue.json()) as { pending: Array<Record<string, unknown>> };
  assert.deepEqual(
    pending.map((p) => [p['lease_id'], p['operation']]),
    [[held.lease_id, allocate(7)]],
  );
});
