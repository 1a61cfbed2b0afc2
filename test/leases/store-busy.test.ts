/**
 * Lock contention on the system of record's database (docs/leases.md §3): when another connection
 * holds SQLite's write lock past the ledger's busy timeout, a leased request, recovery or approval is
 * answered `store_busy` — 503, retryable, `Retry-After` — with a signed rejection receipt, and a read
 * with a typed 503; never the driver's SQLITE_BUSY as an untyped 500. Nothing is consumed: the same
 * lease commits once the lock is released. The holder is a real second SQLite connection.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { sha256HexTag } from '../../src/core/digest.js';
import {
  LEASE_HEADER,
  decodeReceiptHeader,
  encodeLeaseHeader,
  signRecoveryOrder,
  verifyReceipt,
  type Receipt,
} from '../../src/leases/index.js';
import {
  OPERATOR,
  allocate,
  assertAccepted,
  auditIds,
  draftLease,
  harness,
  mutate,
  post,
  recoverLease,
  release,
  sign,
  type Harness,
  type Reply,
} from './helpers.js';

let h: Harness;
before(async () => {
  // A short wait, so the test does not sleep through SQLite's default 10 s.
  h = await harness(1, { busyTimeoutMs: 150 });
});
after(async () => {
  await h.close();
});

/** Hold the write lock on a second connection while `fn` runs. */
async function whileLocked<T>(fn: () => Promise<T>): Promise<T> {
  const other = new Database(h.dbPath);
  other.exec('BEGIN IMMEDIATE');
  try {
    return await fn();
  } finally {
    other.exec('ROLLBACK');
    other.close();
  }
}

function assertBusy(r: Reply, headers: { retryAfter: string | null }): Receipt {
  assert.equal(r.status, 503, JSON.stringify(r.body));
  assert.equal(r.body['code'], 'store_busy');
  assert.equal(headers.retryAfter, '1');
  assert.doesNotMatch(JSON.stringify(r.body), /SQLITE/);
  const receipt = r.body['receipt'] as Receipt;
  assert.equal(receipt.receipt_type, 'rejection');
  assert.equal(receipt.receipt_type === 'rejection' && receipt.code, 'store_busy');
  assert.ok(verifyReceipt(receipt, h.receiptKeys), 'the busy refusal is signed by the SoR key');
  assert.deepEqual(decodeReceiptHeader(r.receiptHeader ?? ''), receipt);
  return receipt;
}

/** POST, answered with its Retry-After header beside the reply. */
async function postRaw(
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<[Reply, string | null]> {
  const init: RequestInit = { method: 'POST', headers: { 'content-type': 'application/json', ...headers } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(`${h.sor.url}${path}`, init);
  const reply: Reply = {
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    receiptHeader: res.headers.get('agent-commit-receipt'),
    fence: res.headers.get('agent-fence-token'),
  };
  return [reply, res.headers.get('retry-after')];
}

test('a leased request meeting a held write lock gets store_busy 503 with a signed receipt; the lease stays usable', async () => {
  const lease = sign(h, await draftLease(h, '99282', 'COMPENSATING_ACTION'));
  const [busy, retryAfter] = await whileLocked(() =>
    postRaw(
      '/api/v2/inventory/allocations/99282',
      { [LEASE_HEADER]: encodeLeaseHeader(lease) },
      { operation: allocate(3), inverse_payload: release(3) },
    ),
  );
  const receipt = assertBusy(busy, { retryAfter });
  assert.equal(receipt.lease_id, lease.lease_id);
  assert.equal(
    receipt.receipt_type === 'rejection' && receipt.lease_hash,
    sha256HexTag(Buffer.from(JSON.stringify(lease))),
  );
  // Nothing could be written: the receipt is not in the audit log, and the lease was not consumed.
  assert.equal((await auditIds(h)).has(receipt.receipt_id), false);
  const commit = await assertAccepted(h, await mutate(h, '99282', lease));
  assert.equal(commit.receipt_type, 'commit');
  // A recovery meeting the lock gets the same answer, and succeeds afterwards.
  const order = signRecoveryOrder(lease.lease_id, h.clock.wallMs(), h.gateway);
  const [recovering, recoverRetry] = await whileLocked(() =>
    postRaw(`/ptcl/leases/${encodeURIComponent(lease.lease_id)}/recover`, {}, order),
  );
  assert.equal(assertBusy(recovering, { retryAfter: recoverRetry }).lease_id, lease.lease_id);
  await assertAccepted(h, await recoverLease(h, lease.lease_id));
});

test('an approval and a read meeting a held write lock get a typed, retryable 503', async () => {
  const [approval, approvalRetry] = await whileLocked(() =>
    postRaw('/ptcl/escrow/urn%3Ax%3Anone/approve', { authorization: `Bearer ${OPERATOR}` }),
  );
  assert.equal(assertBusy(approval, { retryAfter: approvalRetry }).lease_id, 'urn:x:none');
  const read = await whileLocked(() => fetch(`${h.sor.url}/api/v2/inventory/allocations/99282`));
  assert.equal(read.status, 503);
  assert.equal(read.headers.get('retry-after'), '1');
  const body = (await read.json()) as Record<string, unknown>;
  assert.equal(body['code'], 'store_busy');
  assert.doesNotMatch(JSON.stringify(body), /SQLITE/);
  // Without the lock the same approval is the ordinary signed not_found.
  assert.equal((await post(h, '/ptcl/escrow/urn%3Ax%3Anone/approve', undefined, true)).status, 404);
});
