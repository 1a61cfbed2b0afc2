/**
 * HAR-21/23 (seed §9, §9.1): dependent child work re-checks its parent Mission chain at dispatch,
 * resume, retry, spawn and provider entry; and HAR-08 / seed §10: a retry never lifts an
 * operator's stop, a terminate or a handoff. Both engines, views driven with PRE-VERIFIED
 * Status/SET objects (what the consuming half's verifiers output), real signed evidence.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dependencies, decideRetry, verifyHarnessEvidence } from '../../src/missions/index.js';
import type { WorkItemRecord } from '../../src/missions/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { createInput } from '../occurrences/helpers.js';
import { MISSION, ORIGIN, T0, binding, code, item, verifiedSignal } from './fixtures.js';
import { world, type World } from './world.js';

const engines = await enginesUnderTest();
const CHILD = 'msn_child';

const childActive = (version: number, at: number) =>
  verifiedSignal('active', version, at, {
    missionId: CHILD,
    jti: `c${version}`,
    ...(version > 1 && { priorState: 'active' }),
  });

async function parentItem(w: World): Promise<WorkItemRecord> {
  return w.harness.createItem(
    {
      kind: 'queue_item',
      action_class: 'consequential_write',
      lineage: 'invoice-agent',
      mission_binding: binding,
      idempotency_key: 'p-1',
    },
    'executor',
  );
}

/** A sub-agent handle bound to the child Mission, whose parent is MISSION. */
function childHandle(w: World, parentId: string | undefined, key = 'h-1'): Promise<WorkItemRecord> {
  return w.harness.createItem(
    {
      kind: 'subagent_handle',
      action_class: 'consequential_write',
      lineage: 'invoice-agent',
      ...(parentId !== undefined && { parent_item: parentId }),
      mission_binding: { ...binding, mission_id: CHILD },
      idempotency_key: key,
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
}

async function reasonsOf(w: World, id: string): Promise<string[]> {
  const events = (await w.harness.events(`work:${id}`)).filter((e) => e.type === 'harness_evidence');
  const verified = await Promise.all(events.map((e) => verifyHarnessEvidence(e.body, w.publicKey)));
  return verified.map((v) => v.reason);
}

test('HAR-21/23 dependencies(): a child Mission depends on its parent chain; an independent one does not', () => {
  const m1 = { id: MISSION, origin: ORIGIN };
  const child = item({
    id: 'h',
    kind: 'subagent_handle',
    parentId: 'p',
    binding: { ...binding, mission_id: CHILD },
    handle: {
      actor: { client_id: 'a' },
      parent_mission: m1,
      governed_by: { kind: 'child_mission', mission: { id: CHILD, origin: ORIGIN, parent: m1 } },
    },
  });
  const root = item({ id: 'p' });
  assert.deepEqual(dependencies([child, root]), [m1]);
  // A descendant of the handle under the same child Mission depends on the parent too.
  const task = item({ id: 't', parentId: 'h', binding: { ...binding, mission_id: CHILD } });
  assert.deepEqual(dependencies([task, child, root]), [m1]);
  const independent = item({
    id: 'i',
    kind: 'subagent_handle',
    binding: { ...binding, mission_id: 'msn_indep' },
    handle: {
      actor: { client_id: 'b' },
      parent_mission: m1,
      governed_by: { kind: 'independent_mission', mission: { id: 'msn_indep', origin: ORIGIN } },
    },
  });
  assert.deepEqual(dependencies([independent, root]), []);
  // An "independent" Mission whose declared parent is the parent Mission is not (HAR-23).
  const fake = item({
    ...independent,
    handle: {
      actor: { client_id: 'b' },
      parent_mission: m1,
      governed_by: {
        kind: 'independent_mission',
        mission: { id: 'msn_indep', origin: ORIGIN, parent: m1 },
      },
    },
  });
  assert.deepEqual(dependencies([fake, root]), [m1]);
  // The item's own Mission is never its own dependency.
  assert.deepEqual(dependencies([item({ parentId: 'p' }), root]), []);
});

test('HAR-08 seed §10 decideRetry: held, terminated and handed-off items are refused; a Mission pause is not', () => {
  const refused = (i: WorkItemRecord) => {
    const r = decideRetry(i, 'wrk_r', T0);
    return 'kind' in r && r.kind === 'refused' ? r.code : 'ok';
  };
  assert.equal(refused(item({ state: 'handed_off' })), 'work_item_not_dispatchable');
  assert.equal(refused(item({ state: 'terminated' })), 'work_item_not_dispatchable');
  assert.equal(refused(item({ state: 'suppressed', hold: true })), 'work_item_not_dispatchable');
  assert.equal(refused(item({ state: 'paused', hold: true })), 'work_item_not_dispatchable');
  assert.equal(refused(item({ state: 'paused' })), 'ok');
  assert.equal(refused(item({ state: 'suppressed' })), 'ok');
  assert.equal(refused(item({ state: 'done' })), 'ok');
});

for (const e of engines) {
  test(`[${e.name}] HAR-21 (a) a handle paused by its parent Mission's suspension is not resumed while its own child Mission is active`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    await w.harness.applyVerifiedSignal(childActive(1, T0));
    const parent = await parentItem(w);
    const handle = await childHandle(w, parent.id);
    const task = await w.harness.createItem(
      { kind: 'task_node', action_class: 'consequential_write', parent_item: handle.id },
      'executor',
    );
    await w.harness.applyVerifiedSignal(verifiedSignal('suspended', 2, T0 + 1));
    assert.equal((await w.harness.getItem(handle.id)).state, 'paused');
    const before = (await w.harness.getItem(handle.id)).version;
    // The child Mission is active and fresh: only the parent's suspension stops the resume.
    assert.equal(await code(w.harness.dispatch(handle.id, 'executor')), 'mission_not_active');
    const after = await w.harness.getItem(handle.id);
    assert.equal(after.state, 'paused');
    assert.equal(after.version, before + 1, 'the stop was committed with its evidence (C-A25)');
    assert.equal((await reasonsOf(w, handle.id)).at(-1), 'parent_mission_not_active');
    // A descendant of the handle, under the child Mission, is held back the same way.
    assert.equal(await code(w.harness.dispatch(task.id, 'executor')), 'mission_not_active');
    assert.notEqual((await w.harness.getItem(task.id)).state, 'running');
    // Once the parent is active again (a SET after the suspension), the handle resumes.
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 3, T0 + 2));
    assert.equal((await w.harness.dispatch(handle.id, 'executor')).item.state, 'running');
  });

  test(`[${e.name}] HAR-21 (b) no spawn under a revoked parent Mission; an unknown parent fails closed at dispatch`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    await w.harness.applyVerifiedSignal(childActive(1, T0));
    const parent = await parentItem(w);
    await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0 + 1));
    assert.equal((await w.harness.getItem(parent.id)).state, 'suppressed');
    const count = (await w.harness.listItems()).length;
    assert.equal(await code(childHandle(w, parent.id, 'h-2')), 'mission_not_active');
    // A root handle naming the revoked parent Mission is refused too; a refusal writes nothing.
    assert.equal(await code(childHandle(w, undefined, 'h-3')), 'mission_not_active');
    assert.equal((await w.harness.listItems()).length, count);
    // A parent Mission nothing is known of: created queued, and its dispatch fails closed.
    const orphan = await w.harness.createItem(
      {
        kind: 'subagent_handle',
        action_class: 'consequential_write',
        mission_binding: { ...binding, mission_id: CHILD },
        handle: {
          actor: { client_id: 'agent_o' },
          parent_mission: { id: 'msn_never_seen', origin: ORIGIN },
          governed_by: { kind: 'child_mission', mission: { id: CHILD, origin: ORIGIN } },
        },
      },
      'executor',
    );
    assert.equal(await code(w.harness.dispatch(orphan.id, 'executor')), 'mission_status_unavailable');
    assert.equal((await w.harness.getItem(orphan.id)).state, 'paused');
  });

  test(`[${e.name}] HAR-21 (c) a retry of a handle suppressed by its parent's revocation is refused`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    await w.harness.applyVerifiedSignal(childActive(1, T0));
    const parent = await parentItem(w);
    const handle = await childHandle(w, parent.id);
    await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0 + 1));
    assert.equal((await w.harness.getItem(handle.id)).state, 'suppressed');
    const count = (await w.harness.listItems()).length;
    assert.equal(await code(w.harness.retry(handle.id, 'executor')), 'mission_not_active');
    assert.equal((await w.harness.listItems()).length, count);
  });

  test(`[${e.name}] HAR-21 seed §9 (d) no same-Mission spawn, child task or handle retry under a revoked Mission; nothing written`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const parent = await parentItem(w);
    const sameHandle = (parentId: string | undefined, key: string) =>
      w.harness.createItem(
        {
          kind: 'subagent_handle',
          action_class: 'consequential_write',
          lineage: 'invoice-agent',
          ...(parentId === undefined ? { mission_binding: binding } : { parent_item: parentId }),
          idempotency_key: key,
          handle: {
            actor: { client_id: 'agent_s' },
            parent_mission: { id: MISSION, origin: ORIGIN },
            governed_by: { kind: 'parent_mission' },
          },
        },
        'executor',
      );
    const handle = await sameHandle(parent.id, 's-1');
    await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0 + 1));
    assert.equal((await w.harness.getItem(parent.id)).state, 'suppressed');
    assert.equal((await w.harness.getItem(handle.id)).state, 'suppressed');
    const count = (await w.harness.listItems()).length;
    const events = (await w.harness.events(`work:${handle.id}`)).length;
    // A handle governed by the revoked parent Mission, with or without a parent item.
    assert.equal(await code(sameHandle(parent.id, 's-2')), 'mission_not_active');
    assert.equal(await code(sameHandle(undefined, 's-3')), 'mission_not_active');
    // A task node under the suppressed parent item (it copies the revoked binding).
    assert.equal(
      await code(
        w.harness.createItem(
          { kind: 'task_node', action_class: 'consequential_write', parent_item: parent.id },
          'executor',
        ),
      ),
      'mission_not_active',
    );
    // A retry of the same-Mission handle the revocation suppressed.
    assert.equal(await code(w.harness.retry(handle.id, 'executor')), 'mission_not_active');
    assert.equal((await w.harness.listItems()).length, count, 'a refusal writes nothing');
    assert.equal((await w.harness.events(`work:${handle.id}`)).length, events);
  });

  test(`[${e.name}] HAR-21 A3.6 entry of a running handle stops when its parent Mission went stale, though its own is fresh`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    await w.harness.applyVerifiedSignal(childActive(1, T0));
    const g = await w.occurrences.takeover({ lineage: 'invoice-agent' });
    const parent = await parentItem(w);
    const handle = await childHandle(w, parent.id);
    await w.harness.dispatch(handle.id, 'executor', g.generation);
    const created = await w.occurrences.create({
      ...createInput(g.credential, 'h-1'),
      workItemId: handle.id,
    });
    // The parent's SET view is fresh for 60 s after it was applied; the child's is renewed.
    w.clock.advance(50_000);
    await w.harness.applyVerifiedSignal(childActive(2, T0 + 50_000));
    w.clock.advance(20_000);
    assert.equal(
      await code(w.occurrences.enter({ credential: g.credential, occurrenceId: created.occurrence.id })),
      'mission_status_unavailable',
    );
    assert.equal((await w.occurrences.getOccurrence(created.occurrence.id)).occurrence.phase, 'reserved');
    assert.equal((await w.harness.getItem(handle.id)).state, 'paused');
    assert.equal((await reasonsOf(w, handle.id)).at(-1), 'parent_mission_not_active');
  });

  test(`[${e.name}] HAR-08 seed §10 a retry never lifts an operator stop, a handoff or a terminate; a Mission pause may be retried`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const made: WorkItemRecord[] = [];
    for (const d of ['handoff', 'terminate', 'suppress', 'pause'])
      made.push(
        await w.harness.createItem(
          {
            kind: 'queue_item',
            action_class: 'consequential_write',
            mission_binding: binding,
            idempotency_key: `k-${d}`,
          },
          'executor',
        ),
      );
    const [handed, terminated, suppressed, paused] = made.map((i) => i.id) as [
      string,
      string,
      string,
      string,
    ];
    await w.harness.stop(handed, 'handoff', 'operator');
    await w.harness.stop(terminated, 'terminate', 'operator');
    await w.harness.stop(suppressed, 'suppress', 'operator');
    await w.harness.stop(paused, 'pause', 'operator');
    const count = (await w.harness.listItems()).length;
    for (const id of [handed, terminated, suppressed, paused])
      assert.equal(await code(w.harness.retry(id, 'executor')), 'work_item_not_dispatchable', id);
    assert.equal((await w.harness.listItems()).length, count, 'a refused retry writes nothing');
    // An operator pause is not lifted by the executor's resume either (HAR-08).
    assert.equal(await code(w.harness.dispatch(paused, 'executor')), 'work_item_not_dispatchable');
    assert.notEqual((await w.harness.getItem(paused)).state, 'running');
    // The operator's requeue lifts it; the next dispatch checks as usual.
    await w.harness.requeue(suppressed, 'operator');
    assert.equal((await w.harness.dispatch(suppressed, 'executor')).item.state, 'running');
    // A Mission-caused pause (suspended) may be retried; the copy is checked at its dispatch.
    const queued = await w.harness.createItem(
      {
        kind: 'queue_item',
        action_class: 'consequential_write',
        mission_binding: binding,
        idempotency_key: 'k-m',
      },
      'executor',
    );
    await w.harness.applyVerifiedSignal(verifiedSignal('suspended', 2, T0 + 1));
    assert.equal((await w.harness.getItem(queued.id)).state, 'paused');
    const retry = await w.harness.retry(queued.id, 'executor');
    assert.equal(retry.state, 'queued');
    assert.equal(await code(w.harness.dispatch(retry.id, 'executor')), 'mission_not_active');
  });
}
