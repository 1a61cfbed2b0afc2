/**
 * Rebind to a successor Mission (A7#24), session taint (HAR-29), the takeover answer's `held`
 * list (A6) and the stored half's input hygiene (registerMatrix validates, an empty state is
 * reported `unknown`), on both engines. Views are driven with PRE-VERIFIED inputs (fixtures.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_MATRIX,
  verifyHarnessEvidence,
  type MissionBinding,
  type StopMatrix,
  type WorkItemRecord,
} from '../../src/missions/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { createInput } from '../occurrences/helpers.js';
import { MISSION, ORIGIN, T0, binding, code, verifiedSignal } from './fixtures.js';
import { world, type World } from './world.js';

const engines = await enginesUnderTest();
const SUCCESSOR = 'msn_successor_Q3x9vT2pL7mN4kR8sB1yZ';
const successor: MissionBinding = { ...binding, mission_id: SUCCESSOR };

function enqueue(w: World, over: Record<string, unknown> = {}): Promise<WorkItemRecord> {
  return w.harness.createItem(
    {
      kind: 'queue_item',
      action_class: 'consequential_write',
      lineage: 'invoice-agent',
      mission_binding: binding,
      ...over,
    },
    'executor',
  );
}

async function evidenceOf(w: World, subject: string) {
  const events = await w.harness.events(subject);
  return Promise.all(
    events
      .filter((x) => x.type === 'harness_evidence')
      .map((x) => verifyHarnessEvidence(x.body, w.publicKey)),
  );
}

const successorSignal = (state: string, version: number, at: number) =>
  verifiedSignal(state, version, at, { missionId: SUCCESSOR, jti: `succ_${version}_${at}` });

for (const e of engines) {
  test(`[${e.name}] HAR-24 A7#24 superseded ⇒ suppressed (successor_binding_required); requeue refused; rebind to an active successor ⇒ rebound, queued, dispatched under it`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const item = await enqueue(w);
    await w.harness.applyVerifiedSignal(verifiedSignal('superseded', 2, T0 + 1000));
    const stopped = await w.harness.getItem(item.id);
    assert.equal(stopped.state, 'suppressed');
    const ev = (await evidenceOf(w, `work:${item.id}`)).at(-1);
    assert.equal(ev?.reason, 'successor_binding_required');
    assert.equal(ev?.state, 'superseded');
    assert.equal(await code(w.harness.requeue(item.id, 'operator')), 'successor_binding_required');

    // The successor is not known yet: refused, nothing written.
    const body = { mission_binding: successor };
    assert.equal(await code(w.harness.rebind(item.id, body, 'operator')), 'mission_status_unavailable');
    assert.equal((await w.harness.getItem(item.id)).version, stopped.version);
    // Another issuer's Mission is no successor; nor is the superseded Mission itself.
    const foreign = { mission_binding: { ...successor, mission_origin: 'https://other.example.com' } };
    assert.equal(await code(w.harness.rebind(item.id, foreign, 'operator')), 'mission_binding_invalid');
    assert.equal(
      await code(w.harness.rebind(item.id, { mission_binding: binding }, 'operator')),
      'mission_binding_invalid',
    );
    // A body asserting a state is refused (callers set only the five binding members).
    assert.equal(
      await code(
        w.harness.rebind(item.id, { mission_binding: { ...successor, state: 'active' } }, 'operator'),
      ),
      'mission_binding_invalid',
    );

    await w.harness.applyVerifiedSignal(successorSignal('active', 1, T0 + 2000));
    w.clock.advance(2000);
    const rebound = await w.harness.rebind(item.id, body, 'operator');
    assert.equal(rebound.state, 'queued');
    assert.equal(rebound.binding?.mission_id, SUCCESSOR);
    assert.equal(rebound.version, stopped.version + 1);
    const stored = await w.harness.getItem(item.id);
    assert.deepEqual(stored.binding, successor);
    for (const subject of [
      `work:${item.id}`,
      `mission:${ORIGIN}#${MISSION}`,
      `mission:${ORIGIN}#${SUCCESSOR}`,
    ]) {
      const r = (await w.harness.events(subject)).find((x) => x.type === 'rebound');
      const b = r?.body as
        { from?: { id: string }; to?: { id: string }; successor_state?: string } | undefined;
      assert.equal(b?.from?.id, MISSION, subject);
      assert.equal(b?.to?.id, SUCCESSOR, subject);
      assert.equal(b?.successor_state, 'active', subject);
    }
    const d = await w.harness.dispatch(item.id, 'executor');
    assert.equal(d.item.state, 'running');
    // The resume is evidenced under the successor.
    const last = (await evidenceOf(w, `mission:${ORIGIN}#${SUCCESSOR}`)).at(-1);
    assert.equal(last?.event_type, 'resume_allowed');
    assert.equal(last?.mission.id, SUCCESSOR);
    // Rebound items follow the successor's stops.
    await w.harness.applyVerifiedSignal(successorSignal('revoked', 2, T0 + 3000));
    assert.equal((await w.harness.getItem(item.id)).state, 'suppressed');
  });

  test(`[${e.name}] HAR-24 A7#24 rebind never lifts another stop: revoked work, a revoked successor, a running item, a sub-agent handle`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    await w.harness.applyVerifiedSignal(successorSignal('revoked', 1, T0));
    const running = await enqueue(w);
    await w.harness.dispatch(running.id, 'executor');
    const body = { mission_binding: successor };
    assert.equal(await code(w.harness.rebind(running.id, body, 'operator')), 'work_item_not_dispatchable');
    const item = await enqueue(w);
    await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0 + 1000));
    assert.equal((await w.harness.getItem(item.id)).state, 'suppressed');
    // The predecessor is revoked, not superseded: its work is never moved to another Mission.
    assert.equal(await code(w.harness.rebind(item.id, body, 'operator')), 'mission_binding_invalid');
    const w2 = await world(t, e);
    await w2.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    await w2.harness.applyVerifiedSignal(successorSignal('revoked', 1, T0));
    const held = await enqueue(w2);
    const handle = await enqueue(w2, {
      kind: 'subagent_handle',
      parent_item: held.id,
      handle: {
        actor: { client_id: 'agent-7' },
        parent_mission: { id: MISSION, origin: ORIGIN },
        governed_by: { kind: 'parent_mission' },
      },
    });
    await w2.harness.applyVerifiedSignal(verifiedSignal('superseded', 2, T0 + 1000));
    assert.equal(await code(w2.harness.rebind(held.id, body, 'operator')), 'mission_not_active');
    assert.equal(await code(w2.harness.rebind(handle.id, body, 'operator')), 'mission_binding_invalid');
    assert.equal((await w2.harness.getItem(held.id)).binding?.mission_id, MISSION);
    // A legacy unbound row has no Mission to succeed.
    await w2.store.engine.transaction((tx) =>
      tx.run('UPDATE msn_items SET binding = NULL, mission_origin = NULL, mission_id = NULL WHERE id = ?', [
        held.id,
      ]),
    );
    assert.equal(await code(w2.harness.rebind(held.id, body, 'operator')), 'work_item_not_dispatchable');
  });

  test(`[${e.name}] HAR-29 a tainted session: egress items suppressed (session_tainted), other classes continue, children inherit, the taint is sticky`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const s = await w.harness.createSession(
      { mission_binding: binding, lineage: 'invoice-agent', session_id: 'sess_agent_42' },
      'executor',
    );
    const pay = await enqueue(w, { session_id: s.id, action_class: 'external_commitment' });
    const write = await enqueue(w, { session_id: s.id });
    const tainted = await w.harness.taintSession(s.id, { source: 'tool_result' }, 'executor');
    assert.equal(tainted.tainted, true);
    assert.equal((await w.harness.getItem(pay.id)).state, 'suppressed');
    const ev = (await evidenceOf(w, `work:${pay.id}`)).at(-1);
    assert.equal(ev?.reason, 'session_tainted');
    assert.equal(ev?.decision, 'suppress');
    assert.equal(ev?.session_id, s.id);
    assert.equal(ev?.state, 'active');
    // A consequential write of the same session is not egress: it dispatches.
    assert.equal((await w.harness.dispatch(write.id, 'executor')).item.state, 'running');
    // New egress work in the session, and a child of it without a session id, never dispatch.
    const later = await enqueue(w, { session_id: s.id, action_class: 'irreversible' });
    assert.equal(await code(w.harness.dispatch(later.id, 'executor')), 'work_item_not_dispatchable');
    assert.equal((await w.harness.getItem(later.id)).state, 'suppressed');
    const child = await enqueue(w, { parent_item: write.id, action_class: 'privileged_administration' });
    assert.equal(child.sessionId, s.id);
    assert.equal(await code(w.harness.dispatch(child.id, 'executor')), 'work_item_not_dispatchable');
    // An operator requeue does not approve: the next dispatch suppresses again.
    await w.harness.requeue(later.id, 'operator');
    assert.equal(await code(w.harness.dispatch(later.id, 'executor')), 'work_item_not_dispatchable');
    // Sticky and idempotent: a second taint keeps the version and records the source.
    const again = await w.harness.taintSession(s.id, { source: 'inbound_email' }, 'executor');
    assert.equal(again.version, tainted.version);
    const { session, evidence } = await w.harness.getSession(s.id);
    assert.equal(session.tainted, true);
    const taints = evidence.filter((x) => x.type === 'session_tainted').map((x) => x.body);
    assert.deepEqual(
      taints.map((b) => (b as { source: string; first: boolean }).first),
      [true, false],
    );
    assert.equal(await code(w.harness.taintSession(s.id, { source: 'a b' }, 'executor')), 'input_invalid');
    assert.equal(
      await code(w.harness.taintSession('sess_none', { source: 'x' }, 'executor')),
      'session_not_found',
    );
  });

  test(`[${e.name}] HAR-29 A3.6 an egress item running when its session is tainted never enters the provider`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const g = await w.occurrences.takeover({ lineage: 'invoice-agent' });
    const s = await w.harness.createSession(
      { mission_binding: binding, lineage: 'invoice-agent' },
      'executor',
    );
    const item = await enqueue(w, {
      session_id: s.id,
      action_class: 'irreversible',
      idempotency_key: 'pay-1',
    });
    await w.harness.dispatch(item.id, 'executor', g.generation);
    const { occurrence } = await w.occurrences.create({
      ...createInput(g.credential, 'pay-1'),
      workItemId: item.id,
    });
    await w.harness.taintSession(s.id, { source: 'fetched_document' }, 'executor');
    const refused = await code(
      w.occurrences.enter({ credential: g.credential, occurrenceId: occurrence.id }),
    );
    assert.equal(refused, 'work_item_not_dispatchable');
    const after = await w.occurrences.getOccurrence(occurrence.id);
    assert.equal(after.occurrence.phase, 'reserved');
    assert.ok(after.evidence.some((x) => x.type === 'mission_checked'));
    assert.ok(!after.evidence.some((x) => x.type === 'provider_entered'));
  });

  test(`[${e.name}] A6 the takeover answer lists the lineage's held items (paused, suppressed, handed off), not queued or running ones`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const g = await w.occurrences.takeover({ lineage: 'invoice-agent' });
    assert.deepEqual(g.held, []);
    const queued = await enqueue(w);
    const running = await enqueue(w);
    await w.harness.dispatch(running.id, 'executor', g.generation);
    const paused = await enqueue(w);
    await w.harness.stop(paused.id, 'pause', 'operator');
    const suppressed = await enqueue(w);
    await w.harness.stop(suppressed.id, 'suppress', 'operator');
    const handed = await enqueue(w);
    await w.harness.stop(handed.id, 'handoff', 'operator');
    const other = await enqueue(w, { lineage: 'other-agent' });
    await w.harness.stop(other.id, 'suppress', 'operator');
    const next = await w.occurrences.takeover({ lineage: 'invoice-agent' });
    assert.deepEqual(
      next.held.map((h) => [h.id, h.state]).sort(),
      [
        [paused.id, 'paused'],
        [suppressed.id, 'suppressed'],
        [handed.id, 'handed_off'],
      ].sort(),
    );
    assert.ok(!next.held.some((h) => h.id === queued.id || h.id === running.id));
    assert.equal((next.held[0]?.binding as { mission_id?: string } | null)?.mission_id, MISSION);
  });

  test(`[${e.name}] A3.10 registerMatrix validates: a weaker matrix or a digest not its document's is stop_matrix_invalid`, async (t) => {
    const w = await world(t, e);
    const rows = JSON.parse(JSON.stringify(DEFAULT_MATRIX.matrix.rows)) as Record<
      string,
      Record<string, string>
    >;
    for (const c of Object.keys(rows['revoked'] ?? {})) rows['revoked']![c] = 'pause';
    const weak = { ...DEFAULT_MATRIX.matrix, id: 'weak', rows } as unknown as StopMatrix;
    const refused = await code(
      w.harness.registerMatrix({ matrix: weak, ref: 'weak@1', digest: DEFAULT_MATRIX.digest }),
    );
    assert.equal(refused, 'stop_matrix_invalid');
    const renamed = { ...DEFAULT_MATRIX.matrix, id: 'renamed' };
    assert.equal(
      await code(
        w.harness.registerMatrix({ matrix: renamed, ref: 'renamed@1', digest: DEFAULT_MATRIX.digest }),
      ),
      'stop_matrix_invalid',
    );
    assert.equal(
      await code(enqueue(w, { mission_binding: { ...binding, stop_policy: 'weak@1' } })),
      'mission_binding_invalid',
    );
  });

  test(`[${e.name}] MCO-01 A7#9 an empty-string state is non-active and reported as unknown in Harness Evidence`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const item = await enqueue(w);
    await w.harness.applyVerifiedSignal(verifiedSignal('', 2, T0 + 1000));
    // The default matrix's `other` row (an unrecognised state) pauses.
    assert.equal((await w.harness.getItem(item.id)).state, 'paused');
    const ev = (await evidenceOf(w, `work:${item.id}`)).at(-1);
    assert.equal(ev?.state, 'unknown');
    assert.equal(ev?.decision, 'pause');
    assert.equal(await code(w.harness.dispatch(item.id, 'executor')), 'mission_not_active');
    assert.equal((await evidenceOf(w, `work:${item.id}`)).at(-1)?.state, 'unknown');
  });
}
