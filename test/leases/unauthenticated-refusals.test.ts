/**
 * docs/leases.md §6: refusals of requests with no verified signature (draft §5 still gets its signed
 * receipt) are kept in a bounded table, the newest UNAUTHENTICATED_KEPT, not the append-only audit
 * log; a refusal of a lease whose signature verified stays in the full audit log.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { UNAUTHENTICATED_KEPT } from '../../src/sor/schema.js';
import { assertRefused, draftLease, harness, mutate, sign, type Harness } from './helpers.js';

let h: Harness;
before(async () => {
  h = await harness();
});
after(async () => {
  await h.close();
});

const ID = '99282';

test('unauthenticated refusals do not grow the audit log; the ring keeps the newest, counts them all', async () => {
  const auditBefore = h.sor.ledger.audit(0, 100_000).length;
  const n = UNAUTHENTICATED_KEPT + 25;
  // Through the service directly (the same path as POST without a lease), to keep the test quick.
  let last = '';
  for (let i = 0; i < n; i++) {
    const a = h.sor.service.mutate(h.sor.targetUri(ID), undefined, {
      operation: undefined,
      inversePayload: undefined,
    });
    assert.equal(a.rejection?.code, 'ERR_LEASE_MALFORMED');
    last = a.receipt.receipt_id;
  }
  // And over HTTP: an empty POST and one with an unparseable lease.
  await assertRefused(h, await mutate(h, ID, undefined), 'ERR_LEASE_MALFORMED');
  await assertRefused(h, await mutate(h, ID, 'not-a-lease'), 'ERR_LEASE_MALFORMED');
  assert.equal(
    h.sor.ledger.audit(0, 100_000).length,
    auditBefore,
    'no audit rows for unauthenticated refusals',
  );
  const kept = h.sor.ledger.unauthenticatedRefusals();
  assert.equal(kept.entries.length, UNAUTHENTICATED_KEPT, 'bounded');
  assert.equal(kept.total, n + 2, 'every one counted');
  assert.ok(kept.entries.some((e) => e.receipt.receipt_id === last));
});

test('a refusal of a lease whose signature verified is in the append-only audit log', async () => {
  const lease = sign(h, await draftLease(h, ID, 'COMPENSATING_ACTION'));
  const r = await mutate(h, ID, lease, { operation: { op: 'allocate', quantity: 1 } });
  const receipt = await assertRefused(h, r, 'ERR_INVERSE_PAYLOAD_MISMATCH');
  assert.ok(h.sor.ledger.audit(0, 100_000).some((e) => e.receipt.receipt_id === receipt.receipt_id));
  assert.equal(h.sor.ledger.verifyAuditChain(), undefined);
});
