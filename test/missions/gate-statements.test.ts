/**
 * What the Mission's last check adds to provider entry (issue 11 §8, A3.6), counted on both
 * engines with the counting engine (test/support/counting-engine.ts): an entry of a governed
 * occurrence under an active, fresh Mission against an entry of an ungoverned one. The check is
 * to cost what A3.6 needs and nothing else: the occurrence's mission binding and the mission view
 * in ONE indexed read, the work item locked in that same statement, and `mission_checked` appended
 * with the entry's own events. The bound is an upper bound: a change that adds a statement fails.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { generateEd25519KeyPair, publicKeyRaw } from '../../src/core/ed25519.js';
import { ManualClock } from '../../src/core/clock.js';
import { sequentialIdSource } from '../../src/core/ids.js';
import { OccurrencesService } from '../../src/occurrences/index.js';
import { harnessGate, migrate, occurrencesUnitOfWork, openHarnessOn } from '../../src/store/index.js';
import { countingEngine, resetCounts } from '../support/counting-engine.js';
import { enginesUnderTest, type EngineUnderTest } from '../store/engines.js';
import { createInput, domainConfig, paymentsProfile } from '../occurrences/helpers.js';
import { binding, T0, verifiedStatus } from './fixtures.js';

const engines = await enginesUnderTest();

/** Statements the gate may add to one entry: none, the gate lookup is one read either way. */
const EXTRA = 0;
/** Upper bounds of a gated entry, by engine (measured 13 / 6, printed below). */
const GATED = { sqlite: 13, postgres: 6 } as const;

async function counted(t: TestContext, e: EngineUnderTest) {
  const store = await e.open(t);
  await migrate(store.engine);
  const { engine, counts } = countingEngine(store.engine);
  const clock = new ManualClock(T0);
  const pair = generateEd25519KeyPair();
  const harness = openHarnessOn(engine, {
    domainPrivateKey: pair.privateKey,
    clock,
    ids: sequentialIdSource('h'),
  });
  const occurrences = new OccurrencesService({
    uow: occurrencesUnitOfWork(engine, harnessGate(harness)),
    domainKey: { kid: pair.kid, publicKey: publicKeyRaw(pair.publicKey).toString('base64url') },
    clock,
    ids: sequentialIdSource('o'),
  });
  await harness.registerMatrix();
  await occurrences.configureDomain(domainConfig() as never);
  await occurrences.registerProfile(paymentsProfile());
  await occurrences.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 100_000 });
  await harness.applyVerifiedStatus(verifiedStatus('active', T0));
  const g = await occurrences.takeover({ lineage: 'invoice-agent' });
  let n = 0;
  const reserve = async (governed: boolean): Promise<string> => {
    const key = `pay-${++n}`;
    let workItemId: string | undefined;
    if (governed) {
      const item = await harness.createItem(
        {
          kind: 'queue_item',
          action_class: 'consequential_write',
          lineage: 'invoice-agent',
          mission_binding: binding,
          idempotency_key: key,
        },
        'executor',
      );
      await harness.dispatch(item.id, 'executor', g.generation);
      workItemId = item.id;
    }
    const created = await occurrences.create({
      ...createInput(g.credential, key, 10),
      ...(workItemId !== undefined && { workItemId }),
    });
    return created.occurrence.id;
  };
  const enterCounted = async (occurrenceId: string) => {
    resetCounts(counts);
    const ticket = await occurrences.enter({ credential: g.credential, occurrenceId });
    assert.equal(ticket.occurrence.phase, 'entered');
    return { statements: counts.statements, transactions: counts.transactions, texts: [...counts.texts] };
  };
  // Warm both paths once (profile cache, matrix cache, prepared statements).
  await enterCounted(await reserve(true));
  await enterCounted(await reserve(false));
  return { enterCounted, reserve, occurrences, harness, store, credential: g.credential };
}

for (const e of engines) {
  test(`[${e.name}] issue 11 §8 A3.6 a gated entry costs no statement more than an ungated one, in the same one transaction`, async (t) => {
    const w = await counted(t, e);
    const gated = await w.enterCounted(await w.reserve(true));
    const ungated = await w.enterCounted(await w.reserve(false));
    console.log(`${e.name}: entry ${ungated.statements} statements ungated, ${gated.statements} gated`);
    assert.equal(gated.transactions, 1, 'the check is inside the entry transaction (A3.6)');
    assert.equal(ungated.transactions, 1);
    assert.ok(gated.statements <= GATED[e.kind], `gated ${gated.statements}:\n${gated.texts.join('\n')}`);
    assert.ok(
      gated.statements - ungated.statements <= EXTRA,
      `gated ${gated.statements} vs ungated ${ungated.statements}:\n${gated.texts.join('\n')}`,
    );
  });
}

for (const e of engines) {
  test(`[${e.name}] A3.6 C-A25 a governed occurrence whose Mission view is gone stops at entry as unavailable, item paused, mission_checked committed`, async (t) => {
    const w = await counted(t, e);
    const id = await w.reserve(true);
    // The view row removed behind Baton's back: the one-statement read finds the gate but no view.
    assert.equal(await w.store.tamper('DELETE FROM msn_views'), 1);
    await assert.rejects(w.occurrences.enter({ credential: w.credential, occurrenceId: id }), {
      code: 'mission_status_unavailable',
    });
    const o = await w.occurrences.getOccurrence(id);
    assert.equal(o.occurrence.phase, 'reserved');
    const checked = o.evidence.find((x) => x.type === 'mission_checked')?.body as Record<string, unknown>;
    assert.deepEqual([checked['state'], checked['decision']], ['unknown', 'pause']);
    assert.equal((await w.harness.getItem(checked['work_item'] as string)).state, 'paused');
  });
}
