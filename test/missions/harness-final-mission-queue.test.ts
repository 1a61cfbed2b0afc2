/**
 * Seed §7, A7#14: no work, top-level included, is newly queued under a Mission known final (a
 * create or a retry is refused, nothing written); a suspended Mission's top-level work still
 * queues. Both engines, views driven with PRE-VERIFIED SETs (SIMULATED issuer).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { enginesUnderTest } from '../store/engines.js';
import { T0, binding, code, verifiedSignal } from './fixtures.js';
import { world } from './world.js';

const engines = await enginesUnderTest();

for (const e of engines) {
  test(`${e.name}: no top-level work is newly queued under a Mission known final: create and retry are refused, nothing written (seed §7, A7#14)`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const input = (key: string) => ({
      kind: 'queue_item',
      action_class: 'consequential_write',
      lineage: 'invoice-agent',
      mission_binding: binding,
      idempotency_key: key,
    });
    const first = await w.harness.createItem(input('q-1'), 'operator');
    await w.harness.dispatch(first.id, 'operator');
    await w.harness.complete(first.id, 'operator');
    await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0 + 1));
    const before = await w.harness.listItems();
    assert.equal(await code(w.harness.createItem(input('q-2'), 'operator')), 'mission_not_active');
    assert.equal(await code(w.harness.retry(first.id, 'operator')), 'mission_not_active');
    assert.deepEqual(await w.harness.listItems(), before, 'nothing was queued');
  });

  test(`${e.name}: a top-level item under a suspended Mission is still queued (it may resume) and paused at dispatch`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('suspended', 1, T0));
    const item = await w.harness.createItem(
      {
        kind: 'queue_item',
        action_class: 'consequential_write',
        lineage: 'invoice-agent',
        mission_binding: binding,
        idempotency_key: 's-1',
      },
      'operator',
    );
    assert.equal(item.state, 'queued');
    assert.equal(await code(w.harness.dispatch(item.id, 'operator')), 'mission_not_active');
    assert.equal((await w.harness.getItem(item.id)).state, 'paused');
  });
}
