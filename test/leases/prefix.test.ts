/**
 * leasePlugin mounted under a Fastify `prefix` (docs/leases.md §8): bodies Fastify refuses unread
 * (over the 1 MiB limit) still get the module's signed, audited refusal instead of Fastify's own 413,
 * and receipts that name an endpoint name the one that was called, prefix included. Real SQLite
 * ledger, real HTTP on loopback, real signatures.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonValue } from '../../src/core/json.js';
import {
  LEASE_HEADER,
  buildLease,
  decodeReceiptHeader,
  encodeLeaseHeader,
  signLease,
  signRecoveryOrder,
  verifyReceipt,
  type Lease,
  type Receipt,
} from '../../src/leases/index.js';
import { inventoryModel } from '../../src/sor/inventory.js';
import { OPERATOR, TRACE, allocate, release } from './helpers.js';
import { COLLECTION, mountSor, type MountedSor } from './mounted-sor.js';

const PAD = 'x'.repeat(1024 * 1024);

interface Answer {
  status: number;
  body: Record<string, unknown>;
  receipt: Receipt | undefined;
}

async function call(s: MountedSor, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const header = res.headers.get('agent-commit-receipt');
  const json = (await res.json()) as Record<string, unknown>;
  const answer: Answer = { status: res.status, body: json, receipt: undefined };
  if (header !== null) {
    answer.receipt = json['receipt'] as Receipt;
    assert.deepEqual(decodeReceiptHeader(header), answer.receipt, 'the header carries the body’s receipt');
  }
  return answer;
}

async function signedLease(s: MountedSor, mode: 'COMPENSATING_ACTION' | 'HUMAN_ESCROW'): Promise<Lease> {
  const res = await fetch(`${s.base}${COLLECTION}/1`);
  const epoch = Number(res.headers.get('agent-fence-token'));
  const state = (await res.json()) as JsonValue;
  return signLease(
    buildLease({
      target: s.targetUri('1'),
      mode,
      tReqMs: 450,
      tGrantedMs: 2000,
      currentEpoch: epoch,
      preImage: state,
      inversePayload: release(3),
      traceAnchorRef: TRACE,
      issuedAtMs: s.clock.wallMs(),
      ttlMs: 30_000,
    }),
    s.gateway,
  );
}

/** A signed rejection with this code, the receipt in body and header alike, in the audit log. */
function assertRefused(s: MountedSor, a: Answer, code: string, target: string): void {
  assert.equal(a.body['code'], code, `expected ${code}, got ${String(a.body['code'])} (${a.status})`);
  assert.ok(a.receipt !== undefined, 'a receipt in Agent-Commit-Receipt');
  assert.deepEqual(a.body['receipt'], a.receipt);
  assert.ok(a.receipt.receipt_type === 'rejection' && a.receipt.code === code);
  assert.equal(a.receipt.sor_target_uri, target);
  assert.ok(verifyReceipt(a.receipt, s.receiptKeys));
  // Unread bodies carry no verified signature: kept in the bounded table (docs/leases.md §6).
  const kept = [...s.ledger.audit(0, 1000), ...s.ledger.unauthenticatedRefusals().entries];
  assert.ok(kept.some((e) => e.receipt.receipt_id === a.receipt?.receipt_id));
}

for (const prefix of ['/sor', '/sor/', '/a/b']) {
  test(`mounted under prefix ${prefix}: refusals of unread bodies are signed; endpoint receipts name the prefix`, async (t) => {
    const s = await mountSor(inventoryModel, prefix);
    t.after(() => s.close());
    assert.equal(s.base, `${s.origin}${prefix.replace(/\/$/, '')}`);
    const lease = await signedLease(s, 'COMPENSATING_ACTION');
    const leaseHeader = { [LEASE_HEADER]: encodeLeaseHeader(lease) };
    const big = { operation: allocate(3), inverse_payload: release(3), pad: PAD };

    const tooLarge = await call(s, `${COLLECTION}/1`, big, leaseHeader);
    assert.equal(tooLarge.status, 400, 'not Fastify’s own 413');
    assertRefused(s, tooLarge, 'input_invalid', s.targetUri('1'));
    const ok = await call(
      s,
      `${COLLECTION}/1`,
      { operation: allocate(3), inverse_payload: release(3) },
      leaseHeader,
    );
    assert.equal(ok.status, 200, 'the lease was not consumed by the refusal');

    const enc = encodeURIComponent(lease.lease_id);
    const recoverUri = `${s.base}/ptcl/leases/${enc}/recover`;
    assertRefused(
      s,
      await call(s, `/ptcl/leases/${enc}/recover`, { pad: PAD }),
      'ERR_LEASE_MALFORMED',
      recoverUri,
    );
    // A refusal that finds no lease names the endpoint called: under the prefix.
    const ghost = 'urn:uuid:00000000-0000-4000-8000-000000000000';
    const ghostOrder = signRecoveryOrder(ghost, s.clock.wallMs(), s.gateway);
    const ghostUri = `${s.base}/ptcl/leases/${encodeURIComponent(ghost)}/recover`;
    assertRefused(
      s,
      await call(s, `/ptcl/leases/${encodeURIComponent(ghost)}/recover`, ghostOrder),
      'not_found',
      ghostUri,
    );

    const operator = { authorization: `Bearer ${OPERATOR}` };
    const approveUri = `${s.base}/ptcl/escrow/${encodeURIComponent(ghost)}/approve`;
    const approve = `/ptcl/escrow/${encodeURIComponent(ghost)}/approve`;
    assertRefused(s, await call(s, approve, { pad: PAD }, operator), 'input_invalid', approveUri);
    assertRefused(s, await call(s, approve, {}, operator), 'not_found', approveUri);
    const stranger = await call(s, approve, { pad: PAD });
    assert.equal(stranger.status, 401, 'approval still needs an operator');
    assert.equal(stranger.receipt, undefined);
  });
}
