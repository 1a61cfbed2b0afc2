/**
 * The stored harness on both engines, views driven with PRE-VERIFIED Status/SET objects (what the
 * consuming half's verifiers output; the end-to-end path with real JWTs comes at merge).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatonError, isBatonError } from '../../src/core/errors.js';
import {
  ACTION_CLASSES,
  DEFAULT_MATRIX,
  MATRIX_ROWS,
  pin,
  verifyHarnessEvidence,
  type WorkItemRecord,
} from '../../src/missions/index.js';
import { verifyEvidence } from '../../src/store/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { MISSION, ORIGIN, T0, binding, verifiedSignal, verifiedStatus } from './fixtures.js';
import { world, type World } from './world.js';

const engines = await enginesUnderTest();

async function enqueue(w: World, over: Record<string, unknown> = {}): Promise<WorkItemRecord> {
  return w.harness.createItem(
    {
      kind: 'queue_item',
      action_class: 'consequential_write',
      mission_binding: binding,
      idempotency_key: 'idem-1',
      session_id: undefined,
      ...over,
    },
    'executor',
  );
}

async function refusedWith(p: Promise<unknown>, code: string): Promise<BatonError> {
  let caught: unknown;
  await p.catch((e: unknown) => (caught = e));
  assert.ok(isBatonError(caught), `expected ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code);
  return caught;
}

async function harnessEvidenceOf(w: World, itemId: string) {
  const events = await w.harness.events(`work:${itemId}`);
  return Promise.all(
    events
      .filter((e) => e.type === 'harness_evidence')
      .map((e) => verifyHarnessEvidence(e.body, w.publicKey)),
  );
}

for (const e of engines) {
  test(`[${e.name}] HAR-13 A7#1 a revoked SET between enqueue and dispatch suppresses the item, signed and chained`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const item = await enqueue(w);
    const r = await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0 + 1000));
    assert.deepEqual(r, { result: 'applied', gap: false, stopped: 1 });
    assert.equal((await w.harness.getItem(item.id)).state, 'suppressed');
    const [ev] = await harnessEvidenceOf(w, item.id);
    assert.ok(ev !== undefined);
    assert.deepEqual(
      [
        ev.event_type,
        ev.decision,
        ev.reason,
        ev.state,
        ev.state_source,
        ev.prior_harness_state,
        ev.resulting_harness_state,
      ],
      ['queue_suppressed', 'suppress', 'mission_not_active', 'revoked', 'signal', 'queued', 'suppressed'],
    );
    await refusedWith(w.harness.dispatch(item.id, 'executor'), 'work_item_not_dispatchable');
    assert.deepEqual(
      (await w.harness.cacheFlags(ORIGIN, MISSION)).map((f) => f.reason),
      ['mission_not_active'],
    );
    const report = await verifyEvidence(w.store.engine);
    assert.equal(report.ok, true);
  });

  test(`[${e.name}] MSG-02 C-A18 A7#10 replay: identical redelivery is a no-op, other bytes conflict, old versions are ignored`, async (t) => {
    const w = await world(t, e);
    const v1 = verifiedSignal('active', 1, T0);
    assert.equal((await w.harness.applyVerifiedSignal(v1)).result, 'applied');
    assert.equal((await w.harness.applyVerifiedSignal(v1)).result, 'duplicate');
    assert.equal(
      (await w.harness.applyVerifiedSignal({ ...v1, digest: 'sha-256:other' })).result,
      'replay_conflict',
    );
    await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0 + 1));
    const late = await w.harness.applyVerifiedSignal(
      verifiedSignal('active', 1, T0 + 2, { jti: 'set_fresh' }),
    );
    assert.equal(late.result, 'ignored');
    assert.equal((await w.harness.getView(ORIGIN, MISSION))?.state, 'revoked');
    const types = (await w.harness.events(`mission:${ORIGIN}#${MISSION}`)).map((x) => x.type);
    assert.deepEqual(types, [
      'mission_signal_applied',
      'mission_signal_duplicate',
      'mission_signal_rejected',
      'mission_signal_applied',
      'mission_signal_ignored',
    ]);
  });

  test(`[${e.name}] A7#12 suspend pauses; active v3 lets it dispatch after a check; a late suspended v2 is ignored`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const item = await enqueue(w);
    await w.harness.applyVerifiedSignal(verifiedSignal('suspended', 2, T0));
    assert.equal((await w.harness.getItem(item.id)).state, 'paused');
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 3, T0 + 10));
    assert.equal(
      (await w.harness.applyVerifiedSignal(verifiedSignal('suspended', 2, T0 + 20, { jti: 'late' }))).result,
      'ignored',
    );
    const d = await w.harness.dispatch(item.id, 'executor');
    assert.equal(d.item.state, 'running');
    const evs = await harnessEvidenceOf(w, item.id);
    assert.deepEqual(
      evs.map((x) => [x.event_type, x.decision]),
      [
        ['queue_suppressed', 'pause'],
        ['resume_allowed', 'continue'],
      ],
    );
  });

  test(`[${e.name}] HAR-01 HAR-07 A7#16 unbound governed work is refused at create; a legacy unbound row never resumes`, async (t) => {
    const w = await world(t, e);
    await refusedWith(
      w.harness.createItem({ kind: 'queue_item', action_class: 'consequential_write' }, 'x'),
      'mission_binding_missing',
    );
    await refusedWith(
      w.harness.createItem(
        {
          kind: 'queue_item',
          action_class: 'consequential_write',
          mission_binding: { ...binding, state: 'active' },
        },
        'x',
      ),
      'mission_binding_invalid',
    );
    const item = await enqueue(w);
    assert.equal(
      await w.store.tamper(
        'UPDATE msn_items SET binding = NULL, mission_id = NULL, mission_origin = NULL WHERE id = ?',
        [item.id],
      ),
      1,
    );
    await refusedWith(w.harness.dispatch(item.id, 'executor'), 'mission_binding_missing');
    const [ev] = await harnessEvidenceOf(w, item.id);
    assert.deepEqual(
      [ev?.reason, ev?.state, ev?.state_source, ev?.decision],
      ['missing_mission_binding', 'unknown', 'harness', 'suppress'],
    );
    assert.equal((await w.harness.getItem(item.id)).state, 'suppressed');
  });

  test(`[${e.name}] HAR-04 HAR-05 A7#17 a child under another Mission without a recorded relation, or a wider binding, is mission_binding_invalid`, async (t) => {
    const w = await world(t, e);
    const parent = await enqueue(w, {
      mission_binding: { ...binding, authority_hash: `sha-256:${'A'.repeat(43)}` },
    });
    await refusedWith(
      enqueue(w, { parent_item: parent.id, mission_binding: { ...binding, mission_id: 'msn_other' } }),
      'mission_binding_invalid',
    );
    await refusedWith(
      enqueue(w, { parent_item: parent.id, mission_binding: binding }),
      'mission_binding_invalid',
    );
    const narrowCopy = await enqueue(w, { parent_item: parent.id, mission_binding: undefined });
    assert.equal(narrowCopy.binding?.authority_hash, parent.binding?.authority_hash);
    const child = await enqueue(w, {
      kind: 'subagent_handle',
      parent_item: parent.id,
      mission_binding: { ...binding, mission_id: 'msn_child' },
      handle: {
        actor: { client_id: 'agent_c' },
        parent_mission: { id: MISSION, origin: ORIGIN },
        governed_by: {
          kind: 'child_mission',
          mission: { id: 'msn_child', origin: ORIGIN, parent: { id: MISSION, origin: ORIGIN } },
        },
      },
    });
    assert.equal(child.handle?.governed_by.kind, 'child_mission');
  });

  test(`[${e.name}] HAR-20 seed §9 a subagent_handle without its handle is mission_binding_invalid, nothing written`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const session = await w.harness.createSession({ mission_binding: binding }, 'executor');
    const count = (await w.harness.listItems()).length;
    // Session ancestry alone MUST NOT authorize a sub-agent: no parent Mission, actor or authority.
    const err = await refusedWith(
      enqueue(w, { kind: 'subagent_handle', mission_binding: undefined, session_id: session.id }),
      'mission_binding_invalid',
    );
    assert.equal(err.details?.['path'], '$.handle');
    await refusedWith(enqueue(w, { kind: 'subagent_handle' }), 'mission_binding_invalid');
    await refusedWith(enqueue(w, { kind: 'subagent_handle', handle: null }), 'mission_binding_invalid');
    assert.equal((await w.harness.listItems()).length, count);
  });

  test(`[${e.name}] HAR-21 seed §9 a revocation reaches the child work of a sub-agent handle that is already done`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0, { missionId: 'msn_x', jti: 'x1' }));
    await w.harness.applyVerifiedSignal(
      verifiedSignal('active', 1, T0, { missionId: 'msn_indep', jti: 'i1' }),
    );
    const parent = await enqueue(w, { kind: 'task_node', idempotency_key: undefined });
    const spawn = (mission: string, kind: 'child_mission' | 'independent_mission', key: string) =>
      enqueue(w, {
        kind: 'subagent_handle',
        parent_item: parent.id,
        mission_binding: { ...binding, mission_id: mission },
        idempotency_key: key,
        handle: {
          actor: { client_id: `agent_${key}` },
          parent_mission: { id: MISSION, origin: ORIGIN },
          governed_by: {
            kind,
            mission: {
              id: mission,
              origin: ORIGIN,
              ...(kind === 'child_mission' && { parent: { id: MISSION, origin: ORIGIN } }),
            },
          },
        },
      });
    const h = await spawn('msn_x', 'child_mission', 'h');
    const ih = await spawn('msn_indep', 'independent_mission', 'ih');
    const task = (parentItem: string) =>
      enqueue(w, {
        kind: 'task_node',
        parent_item: parentItem,
        idempotency_key: undefined,
        mission_binding: undefined,
      });
    const [g1, g2, i1] = [await task(h.id), await task(h.id), await task(ih.id)];
    await w.harness.dispatch(h.id, 'executor');
    await w.harness.dispatch(g2.id, 'executor');
    await w.harness.dispatch(ih.id, 'executor');
    await w.harness.complete(h.id, 'executor');
    await w.harness.complete(ih.id, 'executor');
    const r = await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0 + 1000));
    const state = async (id: string) => (await w.harness.getItem(id)).state;
    assert.equal(await state(h.id), 'done', 'a finished handle is never a target');
    assert.equal(await state(g1.id), 'suppressed');
    assert.notEqual(await state(g2.id), 'running');
    assert.equal((await harnessEvidenceOf(w, g1.id)).at(-1)?.reason, 'parent_mission_not_active');
    assert.equal((await harnessEvidenceOf(w, g2.id)).at(-1)?.reason, 'parent_mission_not_active');
    // Under a finished handle governed by an independent Mission that is active, work continues.
    assert.equal(await state(i1.id), 'queued');
    assert.equal(await state(ih.id), 'done');
    assert.equal(r.stopped, 3, 'the parent item and the two children of the done child-Mission handle');
  });

  test(`[${e.name}] HAR-21..23 A7#18 a parent revocation stops dependent sub-agents; an independent active child continues`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    await w.harness.applyVerifiedSignal(
      verifiedSignal('active', 1, T0, { missionId: 'msn_indep', jti: 'i1' }),
    );
    await w.harness.applyVerifiedSignal(
      verifiedSignal('active', 1, T0, { missionId: 'msn_fake', jti: 'f1' }),
    );
    const parent = await enqueue(w);
    const handle = (id: string, kind: string, mission?: Record<string, unknown>) =>
      enqueue(w, {
        queue_item_id: id,
        kind: 'subagent_handle',
        parent_item: parent.id,
        ...(mission !== undefined && { mission_binding: { ...binding, mission_id: mission['id'] } }),
        handle: {
          actor: { client_id: `agent_${id}` },
          parent_mission: { id: MISSION, origin: ORIGIN },
          governed_by: { kind, ...(mission !== undefined && { mission }) },
        },
      });
    await handle('h_parent', 'parent_mission');
    await handle('h_indep', 'independent_mission', { id: 'msn_indep', origin: ORIGIN });
    await handle('h_fake', 'independent_mission', {
      id: 'msn_fake',
      origin: ORIGIN,
      parent: { id: MISSION, origin: ORIGIN },
    });
    await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0 + 1));
    const states = Object.fromEntries((await w.harness.listItems()).map((i) => [i.id, i.state]));
    assert.deepEqual(states, {
      [parent.id]: 'suppressed',
      h_parent: 'suppressed',
      h_indep: 'queued',
      h_fake: 'suppressed',
    });
    const indep = await harnessEvidenceOf(w, 'h_indep');
    assert.deepEqual(
      indep.map((x) => [x.event_type, x.reason, x.actor]),
      [['subagent_continued', 'independent_mission_active', 'agent_h_indep']],
    );
    const fake = await harnessEvidenceOf(w, 'h_fake');
    assert.deepEqual(
      fake.map((x) => [x.event_type, x.reason]),
      [['subagent_stopped', 'parent_mission_not_active']],
    );
  });

  test(`[${e.name}] A3.5 A7#13 a stale view pauses with mission_state_stale; a Status fetched outside the transaction lets it run`, async (t) => {
    let answer: 'active' | 'down' = 'down';
    const w = await world(t, e, {
      fetchStatus: (origin, id) => {
        if (answer === 'down')
          return Promise.reject(new BatonError('mission_status_unavailable', 'status 503'));
        return Promise.resolve(verifiedStatus('active', w.clock.wallMs(), { origin, missionId: id }));
      },
    });
    await w.harness.applyVerifiedStatus(verifiedStatus('active', T0));
    const item = await enqueue(w);
    w.clock.advance(120_000);
    await refusedWith(w.harness.dispatch(item.id, 'executor'), 'mission_status_unavailable');
    const [ev] = await harnessEvidenceOf(w, item.id);
    assert.deepEqual(
      [ev?.event_type, ev?.decision, ev?.reason],
      ['mission_state_stale', 'pause', 'mission_state_stale'],
    );
    answer = 'active';
    const d = await w.harness.dispatch(item.id, 'executor');
    assert.equal(d.item.state, 'running');
  });

  test(`[${e.name}] HAR-28 A7#20 100 concurrent dispatch/stop on one item over two servers: one winner per version, never running after a committed stop`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedStatus(verifiedStatus('active', T0));
    const item = await enqueue(w);
    const b = w.another().harness;
    const results = await Promise.allSettled(
      Array.from({ length: 100 }, (_, i) => {
        const h = i % 2 === 0 ? w.harness : b;
        return i % 3 === 0
          ? h.stop(item.id, 'suppress', 'operator')
          : i % 3 === 1
            ? h.dispatch(item.id, 'executor')
            : h.requeue(item.id, 'operator');
      }),
    );
    for (const r of results) if (r.status === 'rejected') assert.ok(isBatonError(r.reason), String(r.reason));
    const final = await w.harness.getItem(item.id);
    const changes = (await w.harness.events(`work:${item.id}`)).filter(
      (x) => x.type === 'work_state_changed',
    );
    // Every committed transition moved the version by exactly one: versions 2..final, no repeats.
    assert.deepEqual(
      changes.map((c) => (c.body as { version: number }).version),
      Array.from({ length: final.version - 1 }, (_, i) => i + 2),
    );
    let stoppedSince = false;
    for (const c of changes) {
      const body = c.body as { from: string; to: string };
      if (body.to === 'suppressed') stoppedSince = true;
      if (body.to === 'queued') stoppedSince = false;
      if (stoppedSince) assert.notEqual(body.to, 'running');
    }
  });

  test(`[${e.name}] A3.2 step 9 a refused Status makes an active view unknown, never keeps it; terminal stays`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedStatus(verifiedStatus('active', T0));
    await w.harness.recordStatusRefused(ORIGIN, MISSION, 'signature', 'signature_invalid');
    const v = await w.harness.getView(ORIGIN, MISSION);
    assert.equal(v?.state, null);
    assert.equal(w.harness.assessView(v).verdict, 'unknown');
    await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0 + 1));
    await w.harness.recordStatusRefused(ORIGIN, MISSION, 'nonce', 'jose_claim_invalid');
    assert.equal((await w.harness.getView(ORIGIN, MISSION))?.state, 'revoked');
    const types = (await w.harness.events(`mission:${ORIGIN}#${MISSION}`)).map((x) => x.type);
    assert.equal(types.filter((x) => x === 'mission_status_refused').length, 2);
  });

  test(`[${e.name}] A3.10 a matrix ref is immutable: the same ref with other content is refused`, async (t) => {
    const w = await world(t, e);
    const rows = Object.fromEntries(
      MATRIX_ROWS.map((r) => [r, Object.fromEntries(ACTION_CLASSES.map((c) => [c, 'handoff']))]),
    );
    const other = pin({ ...DEFAULT_MATRIX.matrix, rows } as never);
    await refusedWith(w.harness.registerMatrix(other), 'stop_matrix_invalid');
    await refusedWith(
      enqueue(w, { mission_binding: { ...binding, stop_policy: 'nope@1' } }),
      'mission_binding_invalid',
    );
  });
}
