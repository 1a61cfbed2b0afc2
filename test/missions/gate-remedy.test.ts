/**
 * A remedy (AOC-REQ-012: compensation, refund or replacement) names the harness work item it is
 * done for as create and reissue do (`workItemId`), and is then gated like them: create checks the
 * item and its Mission, and entry checks the Mission again (A3.6). A remedy given a work item is
 * never created ungoverned.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createInput, SimulatedProvider } from '../occurrences/helpers.js';
import { enginesUnderTest } from '../store/engines.js';
import { binding, code, T0, verifiedSignal } from './fixtures.js';
import { world, type World } from './world.js';

const engines = await enginesUnderTest();

/** A running governed item under an active Mission, and its payment, entered and sent. */
async function paid(w: World) {
  await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
  const g = await w.occurrences.takeover({ lineage: 'invoice-agent' });
  const item = await w.harness.createItem(
    {
      kind: 'queue_item',
      action_class: 'consequential_write',
      lineage: 'invoice-agent',
      mission_binding: binding,
      idempotency_key: 'pay-1',
    },
    'executor',
  );
  await w.harness.dispatch(item.id, 'executor', g.generation);
  const created = await w.occurrences.create({ ...createInput(g.credential, 'pay-1'), workItemId: item.id });
  new SimulatedProvider().send(
    await w.occurrences.enter({ credential: g.credential, occurrenceId: created.occurrence.id }),
  );
  return { g, item, paid: created.occurrence };
}

for (const e of engines) {
  test(`[${e.name}] A3.6 AOC-REQ-012 a remedy with a work item is governed: its entry after revocation is mission_not_active`, async (t) => {
    const w = await world(t, e);
    const { g, item, paid: original } = await paid(w);
    const refund = await w.occurrences.remedy({
      ...createInput(g.credential, 'refund-1'),
      remedyOf: original.id,
      kind: 'refund',
      workItemId: item.id,
    });
    assert.equal(refund.created, true);
    await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0 + 1000));
    const entry = w.occurrences.enter({ credential: g.credential, occurrenceId: refund.occurrence.id });
    assert.equal(await code(entry), 'mission_not_active');
    const o = await w.occurrences.getOccurrence(refund.occurrence.id);
    assert.equal(o.occurrence.phase, 'reserved');
    assert.ok(
      o.evidence.some((x) => x.type === 'mission_checked'),
      'the gate recorded its decision',
    );
  });

  test(`[${e.name}] A3.6 a remedy naming another lineage's or no such work item is refused and creates nothing`, async (t) => {
    const w = await world(t, e);
    const { g, paid: original } = await paid(w);
    const refund = w.occurrences.remedy({
      ...createInput(g.credential, 'refund-2'),
      remedyOf: original.id,
      kind: 'refund',
      workItemId: 'wi_no_such_item',
    });
    assert.equal(await code(refund), 'work_item_not_found');
    const again = await w.occurrences.remedy({
      ...createInput(g.credential, 'refund-2'),
      remedyOf: original.id,
      kind: 'refund',
    });
    assert.equal(again.created, true, 'the refused remedy left no occurrence under its creation key');
  });
}
