/**
 * Issue 11 §8 / A3.6 on both engines: the one-statement read provider entry decides `continue`
 * from (`lockEntryFacts`) holds the same values as the whole view and item (`lockEntryGate`), and
 * the item's session taint (HAR-29) — a taint the item has not been moved for still stops entry.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EntryFacts, WorkItemRecord } from '../../src/missions/index.js';
import { MissionsRepositorySql } from '../../src/store/missions-repository.js';
import { enginesUnderTest } from '../store/engines.js';
import { createInput } from '../occurrences/helpers.js';
import { T0, binding, verifiedStatus } from './fixtures.js';
import { world, type World } from './world.js';

const engines = await enginesUnderTest();
const HASH = 'sha-256:-rBZZJ8tVIyGoR1tBg6BO6QG0kimVvef8vjigpoVuPw';

async function governed(w: World, over: Record<string, unknown>) {
  const g = await w.occurrences.takeover({ lineage: 'invoice-agent' });
  const item: WorkItemRecord = await w.harness.createItem(
    {
      kind: 'queue_item',
      action_class: 'irreversible',
      lineage: 'invoice-agent',
      mission_binding: { ...binding, authority_hash: HASH },
      idempotency_key: 'pay-1',
      expires_at: '2026-11-03T08:00:00Z',
      ...over,
    },
    'executor',
  );
  await w.harness.dispatch(item.id, 'executor', g.generation);
  const { occurrence } = await w.occurrences.create({
    ...createInput(g.credential, 'pay-1'),
    workItemId: item.id,
  });
  return { g, item, occurrenceId: occurrence.id };
}

function reads(w: World, occurrenceId: string) {
  return w.store.engine.transaction(async (tx) => {
    const repo = new MissionsRepositorySql(tx);
    return { facts: await repo.lockEntryFacts(occurrenceId), full: await repo.lockEntryGate(occurrenceId) };
  });
}

for (const e of engines) {
  test(`[${e.name}] issue 11 §8 A3.6 the entry facts are the full view's and item's values, and the session's taint`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedStatus(verifiedStatus('active', T0, { authorityHash: HASH }));
    const s = await w.harness.createSession(
      { mission_binding: binding, lineage: 'invoice-agent' },
      'executor',
    );
    const { occurrenceId } = await governed(w, { session_id: s.id });
    const { facts, full } = await reads(w, occurrenceId);
    const v = full?.view;
    const i = full?.item;
    assert.ok(v !== undefined && i !== undefined);
    const expected: EntryFacts = {
      view: {
        state: v.state,
        stateSource: v.stateSource,
        authorityHash: v.authorityHash,
        checkedAt: v.checkedAt,
        freshUntil: v.freshUntil,
        missionExpiry: v.missionExpiry,
      },
      item: {
        id: i.id,
        state: i.state,
        hold: i.hold,
        expiresAt: i.expiresAt,
        sessionId: i.sessionId,
        actionClass: i.actionClass,
        binding: i.binding,
        parentId: i.parentId,
        handle: i.handle,
      },
      sessionTainted: false,
    };
    assert.deepEqual(facts, expected);
    assert.equal(facts?.item?.expiresAt, Date.parse('2026-11-03T08:00:00Z'));
    assert.equal(facts?.view?.state, 'active');
    // Tainted behind the item's back (its egress items not moved): the facts say so.
    assert.equal(await w.store.tamper('UPDATE msn_sessions SET tainted = 1 WHERE id = ?', [s.id]), 1);
    assert.equal((await reads(w, occurrenceId)).facts?.sessionTainted, true);
  });

  test(`[${e.name}] HAR-29 A3.6 a tainted session stops an egress entry even when its item still runs`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedStatus(verifiedStatus('active', T0, { authorityHash: HASH }));
    const s = await w.harness.createSession(
      { mission_binding: binding, lineage: 'invoice-agent' },
      'executor',
    );
    const { g, item, occurrenceId } = await governed(w, { session_id: s.id });
    assert.equal(await w.store.tamper('UPDATE msn_sessions SET tainted = 1 WHERE id = ?', [s.id]), 1);
    await assert.rejects(w.occurrences.enter({ credential: g.credential, occurrenceId }), {
      code: 'work_item_not_dispatchable',
    });
    const o = await w.occurrences.getOccurrence(occurrenceId);
    assert.equal(o.occurrence.phase, 'reserved');
    const checked = o.evidence.find((x) => x.type === 'mission_checked')?.body as Record<string, unknown>;
    assert.deepEqual([checked['decision'], checked['reason']], ['suppress', 'session_tainted']);
    assert.equal((await w.harness.getItem(item.id)).state, 'suppressed');
  });

  test(`[${e.name}] issue 11 §8 an ungoverned occurrence has no entry facts`, async (t) => {
    const w = await world(t, e);
    const g = await w.occurrences.takeover({ lineage: 'invoice-agent' });
    const { occurrence } = await w.occurrences.create(createInput(g.credential, 'pay-plain'));
    const { facts, full } = await reads(w, occurrence.id);
    assert.equal(facts, undefined);
    assert.equal(full, undefined);
  });
}
