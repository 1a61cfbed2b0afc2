/**
 * Seed §11 / §9.1: Harness Evidence about dependent child work stopped because of its parent
 * Mission describes one Mission — the child's own, with its observed state — and names the parent
 * as the cause (`parent_mission`); the parent's chain carries the record too. Both engines, views
 * driven with PRE-VERIFIED SETs (SIMULATED issuer), real signed evidence.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { enginesUnderTest } from '../store/engines.js';
import { MISSION, ORIGIN, T0, binding, code, verifiedSignal } from './fixtures.js';
import { evidenceOf, world } from './world.js';

const engines = await enginesUnderTest();

const CHILD = 'msn_child';

for (const e of engines) {
  test(`${e.name}: Harness Evidence for a child stopped by its parent names the child's own Mission and state, the parent as the cause, on both chains (seed §11, §9.1)`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0, { missionId: CHILD, jti: 'c1' }));
    const parent = await w.harness.createItem(
      {
        kind: 'queue_item',
        action_class: 'consequential_write',
        lineage: 'invoice-agent',
        mission_binding: binding,
        idempotency_key: 'p-1',
      },
      'executor',
    );
    const handle = await w.harness.createItem(
      {
        kind: 'subagent_handle',
        action_class: 'consequential_write',
        lineage: 'invoice-agent',
        parent_item: parent.id,
        mission_binding: { ...binding, mission_id: CHILD },
        idempotency_key: 'h-1',
        handle: {
          actor: { client_id: 'agent_c' },
          parent_mission: { id: MISSION, origin: ORIGIN },
          governed_by: {
            kind: 'child_mission',
            mission: { id: CHILD, origin: ORIGIN, parent: { id: MISSION, origin: ORIGIN } },
          },
        },
      },
      'executor',
    );
    // Propagation (A3.7): the parent's suspension pauses the handle.
    await w.harness.applyVerifiedSignal(verifiedSignal('suspended', 2, T0 + 1));
    assert.equal((await w.harness.getItem(handle.id)).state, 'paused');
    // The dispatch check (A3.1 / HAR-21): the parent is still suspended, so the resume is refused.
    assert.equal(await code(w.harness.dispatch(handle.id, 'executor')), 'mission_not_active');
    const records = (await evidenceOf(w, `work:${handle.id}`)).filter(
      (r) => r.reason === 'parent_mission_not_active',
    );
    assert.equal(records.length, 2, 'one from the propagation, one from the dispatch check');
    for (const r of records) {
      assert.equal(r.mission.id, CHILD, 'the record is about the child Mission');
      assert.equal(r.state, 'active', "the child Mission's own observed state, not the parent's");
      assert.deepEqual(r.parent_mission, { id: MISSION, origin: ORIGIN, state: 'suspended' });
    }
    // The parent Mission's chain shows the stops of its dependent child too.
    const onParent = (await evidenceOf(w, `mission:${ORIGIN}#${MISSION}`)).filter(
      (r) => r.work_item === handle.id,
    );
    assert.equal(onParent.length, 2);
    assert.ok(onParent.every((r) => r.mission.id === CHILD && r.parent_mission?.id === MISSION));
  });
}
