/**
 * A3.6 gated provider entry on both engines: the Mission's last check inside the occurrences'
 * enter transaction (lineage → occurrence → authority → mission view → item). Views are driven
 * with PRE-VERIFIED Status/SET objects; the provider is the occurrences tests' counting simulator.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isBatonError } from '../../src/core/errors.js';
import {
  ACTION_CLASSES,
  DEFAULT_MATRIX,
  pin,
  verifyHarnessEvidence,
  type StopMatrix,
} from '../../src/missions/index.js';
import { OccurrencesService } from '../../src/occurrences/index.js';
import { occurrencesUnitOfWork } from '../../src/store/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { createInput, SimulatedProvider } from '../occurrences/helpers.js';
import { binding, code, T0, verifiedSignal, verifiedStatus } from './fixtures.js';
import { world, type World } from './world.js';

const engines = await enginesUnderTest();

/** revoked/expired/completed/cascaded → terminate for every class. */
function strictMatrix() {
  const rows = { ...DEFAULT_MATRIX.matrix.rows } as Record<string, unknown>;
  for (const r of ['revoked', 'expired', 'completed', 'cascaded'])
    rows[r] = Object.fromEntries(ACTION_CLASSES.map((c) => [c, 'terminate']));
  return pin({ ...DEFAULT_MATRIX.matrix, id: 'strict', rows } as unknown as StopMatrix);
}

async function running(w: World, over: Record<string, unknown> = {}) {
  const g = await w.occurrences.takeover({ lineage: 'invoice-agent' });
  const item = await w.harness.createItem(
    {
      kind: 'queue_item',
      action_class: 'consequential_write',
      lineage: 'invoice-agent',
      mission_binding: binding,
      idempotency_key: 'pay-1',
      ...over,
    },
    'executor',
  );
  await w.harness.dispatch(item.id, 'executor', g.generation);
  const created = await w.occurrences.create({ ...createInput(g.credential, 'pay-1'), workItemId: item.id });
  return { g, item, occurrence: created.occurrence };
}

const types = async (w: World, subject: string) =>
  (await w.occurrences.getOccurrence(subject)).evidence.map((e) => e.type);

for (const e of engines) {
  test(`[${e.name}] A3.6 an active, fresh Mission lets entry proceed and records mission_checked continue before provider_entered`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedStatus(verifiedStatus('active', T0));
    const { g, occurrence } = await running(w);
    const ticket = await w.occurrences.enter({ credential: g.credential, occurrenceId: occurrence.id });
    assert.equal(ticket.occurrence.phase, 'entered');
    const evs = (await w.occurrences.getOccurrence(occurrence.id)).evidence;
    const checked = evs.find((x) => x.type === 'mission_checked');
    const body = checked?.body as Record<string, unknown> | undefined;
    assert.deepEqual(
      [body?.['decision'], body?.['state'], body?.['state_source']],
      ['continue', 'active', 'status'],
    );
    assert.ok(
      evs.findIndex((x) => x.type === 'mission_checked') <
        evs.findIndex((x) => x.type === 'provider_entered'),
    );
  });

  test(`[${e.name}] C-A25 A7#2 revoked after dispatch, before enter ⇒ 403 mission_not_active, still reserved, mission_checked committed, 0 effects`, async (t) => {
    const w = await world(t, e);
    const provider = new SimulatedProvider();
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const { g, item, occurrence } = await running(w);
    await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0 + 1000));
    const result = await w.occurrences.enter({ credential: g.credential, occurrenceId: occurrence.id }).then(
      (ticket) => provider.send(ticket),
      (err: unknown) => err,
    );
    assert.ok(isBatonError(result, 'mission_not_active'));
    assert.equal(result.status, 403);
    assert.equal(provider.totalCalls, 0);
    const o = await w.occurrences.getOccurrence(occurrence.id);
    assert.equal(o.occurrence.phase, 'reserved');
    const checked = o.evidence.find((x) => x.type === 'mission_checked');
    const body = checked?.body as Record<string, unknown> | undefined;
    assert.deepEqual([body?.['state'], body?.['decision']], ['revoked', 'suppress']);
    assert.equal((await w.harness.getItem(item.id)).state, 'suppressed');
  });

  test(`[${e.name}] A3.6 A3.7 a terminate row at entry releases the reservation in the same transaction (AOC-REQ-008)`, async (t) => {
    const w = await world(t, e);
    await w.harness.registerMatrix(strictMatrix());
    // mission_expiry passes between dispatch and enter: no signal, the entry check itself finds it.
    await w.harness.applyVerifiedStatus(
      verifiedStatus('active', T0, { missionExpiry: '2026-11-02T08:00:02Z' }),
    );
    const { g, item, occurrence } = await running(w, {
      mission_binding: { ...binding, stop_policy: 'strict@1' },
    });
    w.clock.advance(3000);
    assert.equal(
      await code(w.occurrences.enter({ credential: g.credential, occurrenceId: occurrence.id })),
      'mission_not_active',
    );
    const o = await w.occurrences.getOccurrence(occurrence.id);
    assert.equal(o.occurrence.phase, 'released');
    assert.deepEqual((await types(w, occurrence.id)).slice(-2), ['mission_checked', 'released']);
    assert.equal((await w.harness.getItem(item.id)).state, 'terminated');
    assert.equal((await w.occurrences.getAuthority('payouts')).reserved, 0);
  });

  test(`[${e.name}] A3.7 a pushed revocation with a terminate row releases the reserved occurrence of running work`, async (t) => {
    const w = await world(t, e);
    await w.harness.registerMatrix(strictMatrix());
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const { g, occurrence } = await running(w, { mission_binding: { ...binding, stop_policy: 'strict@1' } });
    await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0 + 1));
    assert.equal((await w.occurrences.getOccurrence(occurrence.id)).occurrence.phase, 'released');
    assert.equal(
      await code(w.occurrences.enter({ credential: g.credential, occurrenceId: occurrence.id })),
      'not_reserved',
    );
  });

  test(`[${e.name}] A3.6 create checks too: a stale view refuses governed creation; a harness-less Baton refuses governed work`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedStatus(verifiedStatus('active', T0));
    const { g, item, occurrence } = await running(w);
    w.clock.advance(61_000); // past max stale (60 s), inside the 300 s entry window
    assert.equal(
      await code(w.occurrences.create({ ...createInput(g.credential, 'pay-2'), workItemId: item.id })),
      'mission_status_unavailable',
    );
    // Another server without the harness wired: governed occurrences never enter (fail closed).
    const bare = new OccurrencesService({
      uow: occurrencesUnitOfWork(w.store.engine),
      domainKey: {
        kid: (await w.occurrences.getDomain()).kid,
        publicKey: (await w.occurrences.getDomain()).publicKey,
      },
      clock: w.clock,
    });
    assert.equal(
      await code(bare.create({ ...createInput(g.credential, 'pay-3'), workItemId: item.id })),
      'mission_status_unavailable',
    );
    assert.equal(
      await code(bare.enter({ credential: g.credential, occurrenceId: occurrence.id })),
      'mission_status_unavailable',
    );
    assert.equal((await w.occurrences.getOccurrence(occurrence.id)).occurrence.phase, 'reserved');
    // Ungoverned occurrences are untouched by the gate.
    const plain = await w.occurrences.create(createInput(g.credential, 'plain'));
    assert.equal(
      (await w.occurrences.enter({ credential: g.credential, occurrenceId: plain.occurrence.id })).occurrence
        .phase,
      'entered',
    );
  });

  test(`[${e.name}] HAR-12 C-A28 A7#14 retries: after revocation suppressed; of an entered occurrence, reconcile only (effects stay 1)`, async (t) => {
    const w = await world(t, e);
    const provider = new SimulatedProvider();
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const { g, item, occurrence } = await running(w);
    provider.send(await w.occurrences.enter({ credential: g.credential, occurrenceId: occurrence.id }));
    await w.harness.complete(item.id, 'executor');
    const retry = await w.harness.retry(item.id, 'executor');
    assert.deepEqual([retry.retryOf, retry.idempotencyKey], [item.id, 'pay-1']);
    await w.harness.dispatch(retry.id, 'executor', g.generation);
    const again = await w.occurrences.create({
      ...createInput(g.credential, retry.idempotencyKey ?? ''),
      workItemId: retry.id,
    });
    assert.deepEqual(
      [again.created, again.occurrence.id, again.occurrence.phase],
      [false, occurrence.id, 'entered'],
    );
    assert.equal(
      await code(w.occurrences.enter({ credential: g.credential, occurrenceId: occurrence.id })),
      'already_entered',
    );
    assert.equal(
      [...provider.effects.values()].reduce((a, b) => a + b, 0),
      1,
    );
    await w.harness.complete(retry.id, 'executor');
    await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0 + 5));
    // A7#14, seed §7: a retry after revocation is suppressed, never queued, with signed evidence.
    const late = await w.harness.retry(retry.id, 'executor');
    assert.deepEqual([late.state, late.idempotencyKey], ['suppressed', 'pay-1']);
    assert.equal((await w.harness.getItem(late.id)).state, 'suppressed');
    const evidence = (await w.harness.events(`work:${late.id}`)).filter(
      (ev) => ev.type === 'harness_evidence',
    );
    assert.equal(evidence.length, 1);
    const ev = await verifyHarnessEvidence(evidence[0]?.body, w.publicKey);
    assert.deepEqual(
      [ev.event_type, ev.decision, ev.reason, ev.state, ev.resulting_harness_state],
      ['queue_suppressed', 'suppress', 'mission_not_active', 'revoked', 'suppressed'],
    );
    assert.equal(await code(w.harness.dispatch(late.id, 'executor')), 'work_item_not_dispatchable');
  });

  test(`[${e.name}] HAR-06 A7#21 after takeover the predecessor's enter and dispatch are generation_retired; nothing is entered`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedStatus(verifiedStatus('active', T0));
    const { g, occurrence } = await running(w);
    const queued = await w.harness.createItem(
      {
        kind: 'queue_item',
        action_class: 'consequential_write',
        lineage: 'invoice-agent',
        mission_binding: binding,
        idempotency_key: 'pay-2',
      },
      'executor',
    );
    const successor = await w.occurrences.takeover({ lineage: 'invoice-agent' });
    assert.equal(
      await code(w.occurrences.enter({ credential: g.credential, occurrenceId: occurrence.id })),
      'generation_retired',
    );
    // AOC-REQ-006 inside the dispatch transaction too, not only at authentication.
    assert.equal(await code(w.harness.dispatch(queued.id, 'executor', g.generation)), 'generation_retired');
    assert.equal((await w.harness.getItem(queued.id)).state, 'queued');
    assert.equal(
      (await w.harness.dispatch(queued.id, 'executor', successor.generation)).item.state,
      'running',
    );
    assert.equal((await w.occurrences.getOccurrence(occurrence.id)).occurrence.phase, 'reserved');
  });
}
