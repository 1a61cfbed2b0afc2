/**
 * verifyReceipt is true only for a receipt (docs/leases.md §7 and "Verifying leases yourself"):
 * exactly the members of its receipt_type, each of its form, ptcl_version "1.0", signed by a trusted
 * key. Before, any document with a valid signature passed: a signed lease, a recovery order, or
 * `{"receipt_type":"commit","new_epoch":"lol"}` signed by the receipt key.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  signDocument,
  signLease,
  signRecoveryOrder,
  verifyReceipt,
  type Receipt,
} from '../../src/leases/index.js';
import {
  allocate,
  assertAccepted,
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
const receipts = new Map<string, Receipt>();
before(async () => {
  h = await harness();
  const committed = sign(h, await draftLease(h, '99282', 'COMPENSATING_ACTION'));
  receipts.set('commit', await assertAccepted(h, await mutate(h, '99282', committed)));
  receipts.set('recovery', await assertAccepted(h, await recoverLease(h, committed.lease_id)));
  const held = sign(h, await draftLease(h, '99282', 'HUMAN_ESCROW', { inverse: release(1) }));
  const staged = { operation: allocate(1), inverse_payload: release(1) };
  receipts.set('escrow_held', await assertAccepted(h, await mutate(h, '99282', held, staged), 202));
  const approved = await post(
    h,
    `/ptcl/escrow/${encodeURIComponent(held.lease_id)}/approve`,
    undefined,
    true,
  );
  receipts.set('commit (escrow approval, no window)', await assertAccepted(h, approved));
  receipts.set('rejection', (await mutate(h, '99282', undefined)).body['receipt'] as Receipt);
});
after(async () => {
  await h.close();
});

test('a receipt of every type verifies', () => {
  assert.equal(receipts.size, 5);
  for (const [name, receipt] of receipts) assert.ok(verifyReceipt(receipt, h.receiptKeys), name);
  const approval = receipts.get('commit (escrow approval, no window)');
  assert.equal(approval?.receipt_type === 'commit' && approval.recovery_window_ends_at, null);
});

/** A receipt's body, without its signature, changed by `edit`, then signed again by the SoR's key. */
function resigned(receipt: Receipt, edit: (body: Record<string, unknown>) => void): unknown {
  const { signature: _signature, ...body } = structuredClone(receipt) as Receipt & Record<string, unknown>;
  edit(body);
  return signDocument(body, h.sorKey);
}

test('a signed lease, a recovery order and a made-up commit receipt do not verify, though signed by the trusted key', async () => {
  // Each is signed by the very key the resolver trusts: only the shape can refuse them.
  const lease = signLease(await draftLease(h, '99282', 'COMPENSATING_ACTION'), h.sorKey);
  const order = signRecoveryOrder(lease.lease_id, h.clock.wallMs(), h.sorKey);
  const junk = signDocument({ receipt_type: 'commit', new_epoch: 'lol' }, h.sorKey);
  for (const doc of [lease, order, junk]) assert.equal(verifyReceipt(doc, h.receiptKeys), false);
});

test('a receipt with a missing, unknown or ill-formed member does not verify, though signed by the trusted key', () => {
  for (const [name, receipt] of receipts) {
    // Control: re-signed unchanged, it verifies; so each edit below is what refuses it.
    assert.ok(
      verifyReceipt(
        resigned(receipt, () => {}),
        h.receiptKeys,
      ),
      name,
    );
    const edits: Array<[string, (b: Record<string, unknown>) => void]> = [
      ['ptcl_version 1.1', (b) => (b['ptcl_version'] = '1.1')],
      ['unknown member', (b) => (b['note'] = 'x')],
      ['missing lease_id', (b) => delete b['lease_id']],
      ['issued_at not RFC 3339', (b) => (b['issued_at'] = 'yesterday')],
      ['receipt_type unknown', (b) => (b['receipt_type'] = 'receipt')],
      ['receipt_id empty', (b) => (b['receipt_id'] = '')],
    ];
    const byType: Record<string, Array<[string, (b: Record<string, unknown>) => void]>> = {
      commit: [
        ['new_epoch text', (b) => (b['new_epoch'] = 'lol')],
        ['prior_epoch negative', (b) => (b['prior_epoch'] = -1)],
        ['store escrow', (b) => (b['store'] = 'escrow')],
        ['recovery_mode unknown', (b) => (b['recovery_mode'] = 'YOLO')],
        ['post digest upper-case', (b) => (b['post_image_state_hash'] = `sha256:${'A'.repeat(64)}`)],
      ],
      escrow_held: [
        ['recovery_mode not HUMAN_ESCROW', (b) => (b['recovery_mode'] = 'SNAPSHOT_RESTORE')],
        ['approve_by null', (b) => (b['approve_by'] = null)],
        ['cas_fence_epoch fraction', (b) => (b['cas_fence_epoch'] = 1.5)],
      ],
      recovery: [
        ['action unknown', (b) => (b['action'] = 'undone')],
        ['new_epoch unsafe', (b) => (b['new_epoch'] = 2 ** 53)],
      ],
      rejection: [
        ['code unknown', (b) => (b['code'] = 'ERR_MADE_UP')],
        ['rule unknown', (b) => (b['rule'] = 'MADE_UP')],
        ['lease_hash not a digest', (b) => (b['lease_hash'] = 'sha256:00')],
        ['current_epoch text', (b) => (b['current_epoch'] = '7')],
      ],
    };
    for (const [what, edit] of [...edits, ...(byType[receipt.receipt_type] ?? [])]) {
      assert.equal(verifyReceipt(resigned(receipt, edit), h.receiptKeys), false, `${name}: ${what}`);
    }
  }
});
