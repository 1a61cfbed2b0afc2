/**
 * Draft §5 (replay), docs/leases.md §3: a retry of the exact lease already committed (its answer lost)
 * is ERR_LEASE_REPLAYED with the resource's current epoch — also after the lease's expires_at, where it
 * used to be told ERR_LEASE_EXPIRED with current_epoch null although the lease record says committed.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  assertAccepted,
  assertRefused,
  draftLease,
  harness,
  leaseStatus,
  mutate,
  readResource,
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

const ID = '99282';

test('a late retry of a committed lease is told replayed, with the current epoch, not expired', async () => {
  const lease = sign(h, await draftLease(h, ID, 'COMPENSATING_ACTION', { ttlMs: 30_000 }));
  await assertAccepted(h, await mutate(h, ID, lease));
  const now = await readResource(h, ID);
  h.clock.advance(31_000);
  const r = await mutate(h, ID, lease);
  const receipt = await assertRefused(h, r, 'ERR_LEASE_REPLAYED');
  assert.equal(receipt.receipt_type === 'rejection' && receipt.current_epoch, now.epoch);
  assert.equal(await leaseStatus(h, lease.lease_id), 'committed');
  assert.deepEqual(await readResource(h, ID), now, 'nothing changed');
  // A different lease that has expired is still ERR_LEASE_EXPIRED.
  const other = sign(h, await draftLease(h, ID, 'COMPENSATING_ACTION', { ttlMs: 1_000 }));
  h.clock.advance(2_000);
  await assertRefused(h, await mutate(h, ID, other), 'ERR_LEASE_EXPIRED');
});
