/**
 * A3.6 through create-and-enter (issue 16 §4), on both engines: a governed occurrence is refused
 * by the Mission exactly as create then enter refuse it — `mission_not_active`, the create and the
 * `mission_checked` stop committed, the provider never called — and an active Mission enters it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isBatonError } from '../../src/core/errors.js';
import { enginesUnderTest } from '../store/engines.js';
import { T0, verifiedSignal, verifiedStatus } from './fixtures.js';
import { dispatchedItem, world } from './world.js';

const engines = await enginesUnderTest();

for (const e of engines) {
  test(`[${e.name}] create-and-enter on an active Mission: mission_checked continue, then provider_entered`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const { input } = await dispatchedItem(w, 'pay-ok');
    const r = await w.occurrences.createAndEnter(input);
    assert.equal(r.ticket?.occurrence.phase, 'entered');
    const types = (await w.occurrences.getOccurrence(r.occurrence.id)).evidence.map((x) => x.type);
    assert.deepEqual(types, ['occurrence_created', 'mission_checked', 'provider_entered']);
  });

  test(`[${e.name}] C-A25 create-and-enter after a revocation refuses as create then enter do`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const one = await dispatchedItem(w, 'pay-one');
    const two = await dispatchedItem(w, 'pay-two', one.g);
    // Reserved while the Mission was active (the single create), entered after the revocation.
    const held = await w.occurrences.create(one.input);
    const fresh = two.input;
    await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0 + 1000));
    const codeOf = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (x: unknown) => (isBatonError(x) ? x.code : String(x)),
      );
    // The revocation suppressed the item: the replay's relink refuses, in both forms, before entry.
    const replayBoth = await codeOf(w.occurrences.createAndEnter(one.input));
    const replaySingle = await codeOf(w.occurrences.create(one.input));
    assert.equal(replayBoth, replaySingle);
    assert.notEqual(replayBoth, 'ok');
    const o = await w.occurrences.getOccurrence(held.occurrence.id);
    assert.equal(o.occurrence.phase, 'reserved');
    assert.ok(!o.evidence.some((x) => x.type === 'provider_entered'), 'the provider was never entered');
    assert.equal((await w.harness.getItem(one.item.id)).state, 'suppressed');
    // A fresh governed create after the revocation: the same refusal from both forms, nothing kept.
    const both = await codeOf(w.occurrences.createAndEnter(fresh));
    const single = await codeOf(w.occurrences.create(fresh));
    assert.equal(both, single);
    assert.notEqual(both, 'ok');
  });
}

for (const e of engines) {
  test(`[${e.name}] C-A25 the Mission expires between create and entry: create-and-enter refuses as create then enter`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedStatus(
      verifiedStatus('active', T0, { missionExpiry: '2026-11-02T08:00:02Z' }),
    );
    const { input } = await dispatchedItem(w, 'pay-late');
    const held = await w.occurrences.create(input);
    w.clock.advance(3000);
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (x: unknown) => x,
      );
    const both = await refusal(w.occurrences.createAndEnter(input));
    const replay = await refusal(w.occurrences.create(input));
    assert.ok(isBatonError(both, 'mission_not_active'), String(both));
    assert.ok(isBatonError(replay, both.code), 'create then enter stops at the same create');
    assert.equal(both.status, 403);
    const types = (await w.occurrences.getOccurrence(held.occurrence.id)).evidence.map((x) => x.type);
    assert.deepEqual(types, ['occurrence_created'], 'nothing entered, nothing else written');
  });
}
