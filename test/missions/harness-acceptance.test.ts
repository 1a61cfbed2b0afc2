/**
 * A7 acceptance tests whose stored side had only pure tests, now on both engines (issue 11 §7):
 * #8 reliance edges, #9 unrecognised states, #15 expired items, #24 supersession. Views are driven
 * with PRE-VERIFIED inputs (the consuming half's outputs); the Status/SET wire side of each is in
 * status-*.test.ts and signals-*.test.ts, and end to end in `baton conformance --suite harness`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isBatonError } from '../../src/core/errors.js';
import { formatRfc3339 } from '../../src/core/time.js';
import { verifyHarnessEvidence, type WorkItemRecord } from '../../src/missions/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { binding, MISSION, ORIGIN, T0, verifiedSignal, verifiedStatus } from './fixtures.js';
import { world, type World } from './world.js';

const engines = await enginesUnderTest();

function enqueue(w: World, over: Record<string, unknown> = {}): Promise<WorkItemRecord> {
  return w.harness.createItem(
    {
      kind: 'queue_item',
      action_class: 'consequential_write',
      mission_binding: binding,
      idempotency_key: `idem-${Math.random().toString(36).slice(2)}`,
      ...over,
    },
    'executor',
  );
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    assert.ok(isBatonError(e), String(e));
    return e.code;
  }
}

async function evidenceOf(w: World, itemId: string) {
  const events = await w.harness.events(`work:${itemId}`);
  return Promise.all(
    events
      .filter((e) => e.type === 'harness_evidence')
      .map((e) => verifyHarnessEvidence(e.body, w.publicKey)),
  );
}

for (const e of engines) {
  test(`[${e.name}] MST-05 HAR-03 A7#8 an active Status is relied on at expires_at + 29 s, refetched at + 31 s; suspended is never relied on`, async (t) => {
    let fetched = 0;
    const w = await world(t, e, {
      fetchStatus: (origin, id) => {
        fetched += 1;
        return Promise.resolve(verifiedStatus('active', w.clock.wallMs(), { origin, missionId: id }));
      },
    });
    // expires_at = T0 + 20 s (inside max stale 60 s), fresh_until = expires_at + 30 s.
    const status = verifiedStatus('active', T0, {
      expiresAt: formatRfc3339(T0 + 20_000),
      freshUntil: formatRfc3339(T0 + 50_000),
    });
    await w.harness.applyVerifiedStatus(status);
    w.clock.advance(49_000);
    const a = await enqueue(w);
    assert.equal((await w.harness.dispatch(a.id, 'executor')).item.state, 'running');
    assert.equal(fetched, 0, 'relied on at expires_at + 29 s without a fetch');
    w.clock.advance(2_000);
    const b = await enqueue(w);
    assert.equal((await w.harness.dispatch(b.id, 'executor')).item.state, 'running');
    assert.equal(fetched, 1, 'refetched at expires_at + 31 s');
    await w.harness.applyVerifiedSignal(verifiedSignal('suspended', 2, w.clock.wallMs()));
    w.clock.advance(1_000);
    const c = await enqueue(w);
    assert.equal(await codeOf(w.harness.dispatch(c.id, 'executor')), 'mission_not_active');
    assert.equal((await w.harness.getItem(c.id)).state, 'paused');
  });

  for (const state of ['frozen', 'ACTIVE', '']) {
    test(`[${e.name}] MCO-01 HAR-24 A7#9 an unrecognised state ${JSON.stringify(state)} by SET or Status is non-active: stopped, never continued`, async (t) => {
      const w = await world(t, e);
      await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
      const queued = await enqueue(w);
      const r = await w.harness.applyVerifiedSignal(verifiedSignal(state, 2, T0 + 1000));
      assert.equal(r.result, 'applied');
      assert.notEqual((await w.harness.getItem(queued.id)).state, 'queued');
      assert.equal(await codeOf(w.harness.dispatch(queued.id, 'executor')), 'mission_not_active');
      assert.notEqual((await w.harness.getItem(queued.id)).state, 'running');
      const [ev] = await evidenceOf(w, queued.id);
      // As received, except "": A2.6 `state` is REQUIRED "(or `unknown`)", so an empty one reads unknown.
      assert.equal(ev?.state, state === '' ? 'unknown' : state, 'the state as received');
      assert.notEqual(ev?.decision, 'continue');
      // By Status too (a fresh view on another Mission).
      const other = { ...binding, mission_id: 'msn_other_status' };
      await w.harness.applyVerifiedStatus(verifiedStatus(state, T0 + 1000, { missionId: other.mission_id }));
      const item = await enqueue(w, { mission_binding: other });
      assert.notEqual(await codeOf(w.harness.dispatch(item.id, 'executor')), 'ok');
      assert.notEqual((await w.harness.getItem(item.id)).state, 'running');
    });
  }

  test(`[${e.name}] HAR-15 A7#15 an item past expires_at is suppressed with queue_item_expired while the Mission is active`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedStatus(verifiedStatus('active', T0));
    const item = await enqueue(w, { expires_at: formatRfc3339(T0 + 1000) });
    w.clock.advance(2000);
    assert.notEqual(await codeOf(w.harness.dispatch(item.id, 'executor')), 'ok');
    assert.equal((await w.harness.getItem(item.id)).state, 'suppressed');
    const [ev] = await evidenceOf(w, item.id);
    assert.deepEqual(
      [ev?.event_type, ev?.reason, ev?.state, ev?.decision],
      ['queue_suppressed', 'queue_item_expired', 'active', 'suppress'],
    );
  });

  test(`[${e.name}] HAR-24 A7#24 superseded ⇒ suppressed; requeue under the old Mission ⇒ successor_binding_required`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const item = await enqueue(w);
    await w.harness.applyVerifiedSignal(verifiedSignal('superseded', 2, T0 + 1000));
    assert.equal((await w.harness.getItem(item.id)).state, 'suppressed');
    assert.equal(await codeOf(w.harness.requeue(item.id, 'operator')), 'successor_binding_required');
    assert.equal((await w.harness.getItem(item.id)).state, 'suppressed');
    const view = await w.harness.getView(ORIGIN, MISSION);
    assert.equal(view?.state, 'superseded');
  });
}
