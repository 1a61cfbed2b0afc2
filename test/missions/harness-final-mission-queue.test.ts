/**
 * Seed §7 (HAR-13), A7#14, A7#24, HAR-26: work whose own Mission the view knows is final
 * (terminal, sticky, or past mission_expiry) is never queued: a top-level create or a retry makes
 * the item `suppressed`, with signed Harness Evidence `queue_suppressed` / `suppress` /
 * `mission_not_active` (`successor_binding_required` when superseded) committed with it; a repeat
 * of the same create (same id) is still `work_item_conflict`, nothing more written. A suspended
 * Mission's top-level work still queues. Both engines, views driven with PRE-VERIFIED SETs and
 * Status answers (SIMULATED issuer).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatRfc3339 } from '../../src/core/time.js';
import { verifyHarnessEvidence } from '../../src/missions/index.js';
import { verifyEvidence } from '../../src/store/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { T0, binding, code, verifiedSignal, verifiedStatus } from './fixtures.js';
import { world, type World } from './world.js';

const engines = await enginesUnderTest();

const input = (key: string, id?: string) => ({
  kind: 'queue_item',
  action_class: 'consequential_write',
  lineage: 'invoice-agent',
  mission_binding: binding,
  idempotency_key: key,
  ...(id !== undefined && { queue_item_id: id }),
});

/** The item's Harness Evidence, each record's signature verified. */
async function evidenceOf(w: World, itemId: string) {
  const events = await w.harness.events(`work:${itemId}`);
  return Promise.all(
    events
      .filter((e) => e.type === 'harness_evidence')
      .map((e) => verifyHarnessEvidence(e.body, w.publicKey)),
  );
}

/** The members the suppression at creation must carry (A2.6). */
async function suppressedAtCreate(w: World, itemId: string) {
  const evidence = await evidenceOf(w, itemId);
  assert.equal(evidence.length, 1, 'one record');
  const [ev] = evidence;
  assert.ok(ev !== undefined);
  return [
    ev.event_type,
    ev.decision,
    ev.reason,
    ev.state,
    ev.state_source,
    ev.work_item,
    ev.prior_harness_state,
    ev.resulting_harness_state,
  ];
}

for (const e of engines) {
  test(`${e.name}: under a revoked Mission a top-level create and a retry are created suppressed, never queued, with signed queue_suppressed evidence; a repeat create stays work_item_conflict (seed §7, A7#14, HAR-26)`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const first = await w.harness.createItem(input('q-1'), 'operator');
    assert.equal(first.state, 'queued');
    await w.harness.dispatch(first.id, 'operator');
    await w.harness.complete(first.id, 'operator');
    await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0 + 1));

    const created = await w.harness.createItem(input('q-2', 'wrk_late'), 'operator');
    assert.equal(created.state, 'suppressed');
    assert.equal((await w.harness.getItem(created.id)).state, 'suppressed');
    assert.deepEqual(await suppressedAtCreate(w, created.id), [
      'queue_suppressed',
      'suppress',
      'mission_not_active',
      'revoked',
      'signal',
      created.id,
      undefined,
      'suppressed',
    ]);

    const retry = await w.harness.retry(first.id, 'operator');
    assert.equal(retry.state, 'suppressed');
    assert.equal(retry.retryOf, first.id);
    assert.equal(retry.idempotencyKey, 'q-1');
    assert.deepEqual(await suppressedAtCreate(w, retry.id), [
      'queue_suppressed',
      'suppress',
      'mission_not_active',
      'revoked',
      'signal',
      retry.id,
      undefined,
      'suppressed',
    ]);
    // The suppressed item is never dispatched.
    assert.equal(await code(w.harness.dispatch(retry.id, 'operator')), 'work_item_not_dispatchable');

    // A repeat of the same create (same id) is refused as before; nothing more is written.
    const items = await w.harness.listItems();
    const chain = await w.harness.events('work:wrk_late');
    assert.equal(
      await code(w.harness.createItem(input('q-2', 'wrk_late'), 'operator')),
      'work_item_conflict',
    );
    assert.deepEqual(await w.harness.listItems(), items);
    assert.deepEqual(await w.harness.events('work:wrk_late'), chain);
    assert.ok(
      (await w.harness.listItems()).every((i) => i.state !== 'queued'),
      'nothing is queued under the revoked Mission',
    );
    assert.equal((await verifyEvidence(w.store.engine)).ok, true);
  });

  test(`${e.name}: under a superseded Mission a create is suppressed with reason successor_binding_required, and a requeue under the old Mission is refused (A7#24)`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    await w.harness.applyVerifiedSignal(verifiedSignal('superseded', 2, T0 + 1));
    const item = await w.harness.createItem(input('s-1'), 'operator');
    assert.equal(item.state, 'suppressed');
    assert.deepEqual(await suppressedAtCreate(w, item.id), [
      'queue_suppressed',
      'suppress',
      'successor_binding_required',
      'superseded',
      'signal',
      item.id,
      undefined,
      'suppressed',
    ]);
    assert.equal(await code(w.harness.requeue(item.id, 'operator')), 'successor_binding_required');
    assert.equal((await w.harness.getItem(item.id)).state, 'suppressed');
  });

  test(`${e.name}: an active Mission past its mission_expiry is final: a create is suppressed, state expired, source status`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedStatus(
      verifiedStatus('active', T0, { missionExpiry: formatRfc3339(T0 + 10_000) }),
    );
    w.clock.advance(20_000);
    const item = await w.harness.createItem(input('x-1'), 'operator');
    assert.equal(item.state, 'suppressed');
    assert.deepEqual((await suppressedAtCreate(w, item.id)).slice(0, 5), [
      'queue_suppressed',
      'suppress',
      'mission_not_active',
      'expired',
      'status',
    ]);
  });

  test(`${e.name}: a top-level item under a suspended Mission is still queued (it may resume) and paused at dispatch`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('suspended', 1, T0));
    const item = await w.harness.createItem(input('p-1'), 'operator');
    assert.equal(item.state, 'queued');
    assert.deepEqual(await evidenceOf(w, item.id), []);
    assert.equal(await code(w.harness.dispatch(item.id, 'operator')), 'mission_not_active');
    assert.equal((await w.harness.getItem(item.id)).state, 'paused');
  });
}
