/**
 * Every lease_id the parser accepts (1–256 visible ASCII, docs/leases.md §1) must stay reachable:
 * a committed lease recoverable inside its window (draft §4 rule 3), an escrowed one approvable, each
 * answer with a signed receipt (docs/leases.md §6). Fastify's default router cut path parameters at
 * 100 characters, so ids of 101–256 got a receipt-less 414. Ids beyond what any lease can have get a
 * signed, audited refusal instead of Fastify's 414.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { decodeReceiptHeader, type Receipt } from '../../src/leases/index.js';
import {
  allocate,
  assertAccepted,
  assertRefused,
  draftLease,
  harness,
  mutate,
  post,
  recoverLease,
  release,
  sign,
  type Harness,
} from './helpers.js';

let h: Harness;
before(async () => {
  h = await harness();
});
after(async () => {
  await h.close();
});

// Visible ASCII but `"` and `\`, of the given length; `special` ids need percent-encoding in a path.
const plain = (n: number): string => `urn:x:${'a'.repeat(n - 6)}`;
const special = (n: number): string => `urn:x:${'/%?#'.repeat(64)}`.slice(0, n);

const cases: Array<[string, string]> = [
  ['100 characters', plain(100)],
  ['101 characters', plain(101)],
  ['256 characters', plain(256)],
  ['101 characters needing percent-encoding', special(101)],
  ['256 characters needing percent-encoding (768 encoded)', special(256)],
];

for (const [name, base] of cases) {
  test(`a committed lease with an id of ${name} can be read and recovered`, async () => {
    const leaseId = `${base.slice(0, -1)}C`;
    assert.equal(leaseId.length, base.length);
    const lease = sign(h, await draftLease(h, '99282', 'COMPENSATING_ACTION', { leaseId }));
    const commit = await assertAccepted(h, await mutate(h, '99282', lease));
    assert.equal(commit.receipt_type, 'commit');
    const read = await fetch(`${h.sor.url}/ptcl/leases/${encodeURIComponent(leaseId)}`);
    assert.equal(read.status, 200);
    assert.equal(((await read.json()) as { lease_id: string }).lease_id, leaseId);
    const recovered = await assertAccepted(h, await recoverLease(h, leaseId));
    assert.equal(recovered.receipt_type === 'recovery' && recovered.action, 'compensated');
    assert.equal(recovered.lease_id, leaseId);
  });

  test(`an escrowed lease with an id of ${name} can be approved`, async () => {
    const leaseId = `${base.slice(0, -1)}E`;
    const lease = sign(h, await draftLease(h, '99282', 'HUMAN_ESCROW', { leaseId, inverse: release(1) }));
    const staged = { operation: allocate(1), inverse_payload: release(1) };
    const held = await assertAccepted(h, await mutate(h, '99282', lease, staged), 202);
    assert.equal(held.receipt_type, 'escrow_held');
    const approved = await assertAccepted(
      h,
      await post(h, `/ptcl/escrow/${encodeURIComponent(leaseId)}/approve`, undefined, true),
    );
    assert.equal(approved.receipt_type, 'commit');
    assert.equal(approved.lease_id, leaseId);
  });
}

test('a recovery or approval naming an id longer than any lease_id gets a signed not_found, not a bare 414', async () => {
  for (const id of [plain(257), special(300).padEnd(300, 'z'), 'b'.repeat(2000)]) {
    const recover = await post(h, `/ptcl/leases/${encodeURIComponent(id)}/recover`, { any: 1 });
    const r = await assertRefused(h, recover, 'not_found');
    assert.equal(r.lease_id, null);
    assert.equal(r.sor_target_uri, `${h.sor.origin}/ptcl/leases`);
    const approve = await post(h, `/ptcl/escrow/${encodeURIComponent(id)}/approve`, undefined, true);
    const a = await assertRefused(h, approve, 'not_found');
    assert.equal(a.sor_target_uri, `${h.sor.origin}/ptcl/escrow`);
  }
  // The approval fallback still requires the operator, as the approval route does.
  const anon = await post(h, `/ptcl/escrow/${plain(300)}/approve`);
  assert.equal(anon.status, 401);
  assert.equal(anon.receiptHeader, null);
  // A path of another shape under the fallback is still a plain 404.
  const other = await post(h, `/ptcl/leases/${plain(300)}/recover/more`, { any: 1 });
  assert.equal(other.status, 404);
  assert.equal(other.receiptHeader, null);
});

test('a leased request to a resource id longer than the router cuts gets a signed refusal', async () => {
  const lease = sign(h, await draftLease(h, '99282', 'COMPENSATING_ACTION'));
  const r = await mutate(h, 'x'.repeat(300), lease);
  const receipt: Receipt = await assertRefused(h, r, 'ERR_TARGET_MISMATCH');
  assert.equal(receipt.sor_target_uri, h.sor.targetUri('x'.repeat(300)));
  // Beyond the longest sor_target_uri a lease may name: refused by the collection's URI.
  const far = await mutate(h, 'y'.repeat(2100), lease);
  const farReceipt = await assertRefused(h, far, 'ERR_TARGET_MISMATCH');
  assert.equal(farReceipt.sor_target_uri, `${h.sor.origin}/api/v2/inventory/allocations`);
  assert.deepEqual(decodeReceiptHeader(far.receiptHeader ?? ''), farReceipt);
});
