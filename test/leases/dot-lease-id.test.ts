/**
 * A lease_id of only dots (`.`, `..`, …) is ERR_LEASE_MALFORMED (docs/leases.md §1): URL path
 * normalisation turns `/ptcl/leases/../recover` into another path, so such a lease, once committed,
 * could never be read, recovered or approved (draft §4 rule 3: recovery inside the window).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isBatonError } from '../../src/core/errors.js';
import { parseLease, signLease, signatureOver, type Lease } from '../../src/leases/index.js';
import { leaseSigningInput } from '../../src/leases/lease-jcs.js';
import { assertRefused, draftLease, harness, mutate, readResource, type Harness } from './helpers.js';

let h: Harness;
before(async () => {
  h = await harness();
});
after(async () => {
  await h.close();
});

const ID = '99282';

for (const leaseId of ['.', '..', '...']) {
  test(`a lease whose lease_id is ${JSON.stringify(leaseId)} is refused ERR_LEASE_MALFORMED and changes nothing`, async () => {
    const draft = { ...(await draftLease(h, ID, 'COMPENSATING_ACTION')), lease_id: leaseId };
    assert.throws(
      () => signLease(draft, h.gateway),
      (e: unknown) => isBatonError(e, 'ERR_LEASE_MALFORMED'),
    );
    // A gateway that signs it anyway: the system of record refuses it before any state changes.
    const lease: Lease = { ...draft, signature: signatureOver(leaseSigningInput(draft), h.gateway) };
    const before = await readResource(h, ID);
    await assertRefused(h, await mutate(h, ID, lease), 'ERR_LEASE_MALFORMED');
    assert.deepEqual(await readResource(h, ID), before);
    const read = await fetch(`${h.sor.url}/ptcl/leases/${encodeURIComponent(leaseId)}`);
    assert.notEqual(read.status, 200, 'no lease record was kept');
  });
}

test('ids with dots among other characters stay valid', async () => {
  for (const leaseId of ['.a', 'a..', '..b..', 'urn:x:...']) {
    const lease = signLease(
      { ...(await draftLease(h, ID, 'COMPENSATING_ACTION')), lease_id: leaseId },
      h.gateway,
    );
    assert.equal(parseLease(JSON.stringify(lease)).lease_id, leaseId);
  }
});
