/**
 * RFC 9110 §15.5.2: a 401 MUST carry WWW-Authenticate (docs/leases.md §3): `Bearer` on the operator
 * routes, `PTCL-Lease` on a refusal whose lease signature does not verify.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { encodeLeaseHeader, signLease, signRecoveryOrder } from '../../src/leases/index.js';
import { assertRefused, draftLease, harness, mutate, recoverLease, type Harness } from './helpers.js';

let h: Harness;
before(async () => {
  h = await harness();
});
after(async () => {
  await h.close();
});

const ID = '99282';

test('operator routes answer 401 with WWW-Authenticate: Bearer', async () => {
  for (const [method, path] of [
    ['GET', '/ptcl/audit'],
    ['GET', '/ptcl/escrow'],
    ['POST', '/ptcl/escrow/urn:x:none/approve'],
  ] as const) {
    const res = await fetch(`${h.sor.url}${path}`, {
      method,
      headers: { authorization: 'Bearer wrong-token' },
    });
    assert.equal(res.status, 401, `${method} ${path}`);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer', `${method} ${path}`);
  }
});

test('a lease or recovery order whose signature does not verify: 401 with WWW-Authenticate: PTCL-Lease', async () => {
  const stranger = generateEd25519KeyPair();
  const key = { privateKey: stranger.privateKey, kid: stranger.kid };
  const lease = signLease(await draftLease(h, ID, 'COMPENSATING_ACTION'), key);
  const r = await fetch(`${h.sor.url}/api/v2/inventory/allocations/${ID}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'agent-compensation-lease': encodeLeaseHeader(lease) },
    body: JSON.stringify({
      operation: { op: 'allocate', quantity: 1 },
      inverse_payload: { op: 'release', quantity: 1 },
    }),
  });
  assert.equal(r.status, 401);
  assert.equal(r.headers.get('www-authenticate'), 'PTCL-Lease');
  // The same refusal through the helper: signed, audited.
  await assertRefused(h, await mutate(h, ID, lease), 'ERR_LEASE_SIGNATURE');
  const committed = signLease(await draftLease(h, ID, 'COMPENSATING_ACTION'), h.gateway);
  assert.equal((await mutate(h, ID, committed)).status, 200);
  const order = await fetch(`${h.sor.url}/ptcl/leases/${encodeURIComponent(committed.lease_id)}/recover`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(signRecoveryOrder(committed.lease_id, h.clock.wallMs(), key)),
  });
  assert.equal(order.status, 401);
  assert.equal(order.headers.get('www-authenticate'), 'PTCL-Lease');
  assert.equal(
    (await recoverLease(h, committed.lease_id)).status,
    200,
    'the gateway’s own order still works',
  );
});
