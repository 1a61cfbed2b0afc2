/**
 * A ResourceModel is the integrator's code. Whatever it throws that is not a BatonError (a plain
 * Error, a TypeError from a bug) or a state it returns that has no I-JSON form is a fault: draft §5
 * asks to fail closed *and* emit an auditable rejection receipt, so the answer is a signed `internal`
 * refusal (500) that is in the audit log, with a generic detail (the model's text stays inside),
 * nothing written and the lease not consumed. Real SQLite ledger, real HTTP on loopback.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject, JsonValue } from '../../src/core/json.js';
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
  type ResourceModel,
} from '../../src/leases/index.js';
import { inventoryModel } from '../../src/sor/inventory.js';
import { TRACE, allocate, release } from './helpers.js';
import { COLLECTION, mountSor, type MountedSor } from './mounted-sor.js';

const SECRET = 'secret-model-detail';
let broken = false;

/** The inventory model, plus operations that fault the ways integrators' models do. */
const faulty: ResourceModel = {
  apply(state, operation) {
    if (broken) throw new Error(`${SECRET}: database handle closed`);
    const op = (operation as JsonObject)['op'];
    if (op === 'explode') throw new Error(`${SECRET}: on_hand=40`);
    if (op === 'typo') return (undefined as unknown as { x: JsonValue }).x; // a TypeError
    if (op === 'vanish') return undefined as unknown as JsonValue; // no I-JSON form
    return inventoryModel.apply(state, operation);
  },
};

interface Answer {
  status: number;
  body: Record<string, unknown>;
  receipt: Receipt;
}

async function answer(res: Response): Promise<Answer> {
  const body = (await res.json()) as Record<string, unknown>;
  const header = res.headers.get('agent-commit-receipt');
  assert.ok(header !== null, `answer ${res.status} carries a receipt`);
  const receipt = body['receipt'] as Receipt;
  assert.deepEqual(decodeReceiptHeader(header), receipt);
  return { status: res.status, body, receipt };
}

async function read(s: MountedSor): Promise<{ epoch: number; state: JsonValue }> {
  const res = await fetch(`${s.base}${COLLECTION}/1`);
  return { epoch: Number(res.headers.get('agent-fence-token')), state: (await res.json()) as JsonValue };
}

async function lease(s: MountedSor, inverse: JsonValue): Promise<Lease> {
  const { epoch, state } = await read(s);
  const draft = buildLease({
    target: s.targetUri('1'),
    mode: 'COMPENSATING_ACTION',
    tReqMs: 450,
    tGrantedMs: 2000,
    currentEpoch: epoch,
    preImage: state,
    inversePayload: inverse,
    traceAnchorRef: TRACE,
    issuedAtMs: s.clock.wallMs(),
    ttlMs: 30_000,
  });
  return signLease(draft, s.gateway);
}

async function mutate(s: MountedSor, l: Lease, operation: JsonValue, inverse: JsonValue): Promise<Answer> {
  const res = await fetch(`${s.base}${COLLECTION}/1`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [LEASE_HEADER]: encodeLeaseHeader(l) },
    body: JSON.stringify({ operation, inverse_payload: inverse }),
  });
  return answer(res);
}

function assertFault(s: MountedSor, a: Answer): void {
  assert.equal(a.status, 500);
  assert.equal(a.body['code'], 'internal');
  assert.equal(a.body['detail'], 'the resource model failed');
  assert.ok(!JSON.stringify(a.body).includes(SECRET), 'the model’s own text is not repeated');
  assert.ok(a.receipt.receipt_type === 'rejection' && a.receipt.code === 'internal');
  assert.equal(a.receipt.receipt_type === 'rejection' && a.receipt.rule, 'RESOURCE_SEMANTICS');
  assert.ok(verifyReceipt(a.receipt, s.receiptKeys), 'signed by the system of record');
  const audited = s.ledger.audit(0, 1000).map((e) => e.receipt.receipt_id);
  assert.ok(audited.includes(a.receipt.receipt_id), 'in the audit log');
}

test('a model that throws a plain Error, a TypeError or returns no JSON: signed, audited internal refusal', async (t) => {
  const log: string[] = [];
  const s = await mountSor(faulty, '', log);
  t.after(() => s.close());
  const before = await read(s);
  const cases: Array<[string, JsonValue, JsonValue]> = [
    ['forward op throws Error', { op: 'explode', quantity: 1 }, release(3)],
    ['forward op hits a TypeError', { op: 'typo', quantity: 1 }, release(3)],
    ['forward op returns undefined', { op: 'vanish', quantity: 1 }, release(3)],
    ['inverse check throws Error', allocate(3), { op: 'explode', quantity: 3 }],
  ];
  for (const [name, operation, inverse] of cases) {
    const l = await lease(s, inverse);
    const a = await mutate(s, l, operation, inverse);
    assert.equal(a.status, 500, name);
    assertFault(s, a);
    assert.deepEqual(await read(s), before, `${name}: nothing written`);
    const rec = await fetch(`${s.base}/ptcl/leases/${encodeURIComponent(l.lease_id)}`);
    assert.equal(rec.status, 404, `${name}: the lease_id is not consumed`);
    await rec.body?.cancel();
  }
  // Kept out of the receipt and the body, but never swallowed: the operator's log has it.
  const faults = log.filter((l) => l.includes('the resource model failed'));
  assert.equal(faults.length, cases.length, 'each fault logged once');
  assert.ok(
    faults.some((l) => l.includes(SECRET)),
    'with what the model threw',
  );
});

test('a model fault during recovery is a signed, audited internal refusal; the lease stays recoverable', async (t) => {
  const s = await mountSor(faulty);
  t.after(() => s.close());
  const before = await read(s);
  const l = await lease(s, release(3));
  assert.equal((await mutate(s, l, allocate(3), release(3))).status, 200);
  const recover = async (): Promise<Answer> =>
    answer(
      await fetch(`${s.base}/ptcl/leases/${encodeURIComponent(l.lease_id)}/recover`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(signRecoveryOrder(l.lease_id, s.clock.wallMs(), s.gateway)),
      }),
    );
  broken = true;
  try {
    assertFault(s, await recover());
  } finally {
    broken = false;
  }
  const ok = await recover();
  assert.equal(ok.status, 200);
  assert.ok(ok.receipt.receipt_type === 'recovery' && ok.receipt.action === 'compensated');
  assert.deepEqual((await read(s)).state, before.state);
});
