/**
 * The signal batcher (src/missions/signal-batcher.ts; issue 11 §8, A3.4): SETs applied together
 * share ONE harness transaction, counted on the real engine (both engines) through a wrapper
 * around its `transaction`; each caller is told its own SET's outcome (applied, a duplicate or a
 * replay conflict for a jti replayed inside the batch, ignored for a version going backwards);
 * a SET whose application fails rejects only its own caller with its own error; a lone SET is
 * applied without waiting for company. The queueing rules (arrival order, one batch in flight,
 * nothing told before the transaction ended, a failure of the whole batch or of the liveness
 * write beside it) run against a hand-driven `applyTaken`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { faultyTransaction } from '../support/faulty-transaction.js';
import { BatonError } from '../../src/core/errors.js';
import { ManualClock } from '../../src/core/clock.js';
import { generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { sequentialIdSource } from '../../src/core/ids.js';
import {
  missionSubject,
  SignalBatcher,
  type BatchedSignal,
  type MissionsService,
  type SignalAnswer,
  type VerifiedMissionSignal,
} from '../../src/missions/index.js';
import type { StoreEngine, Transaction } from '../../src/store/engine.js';
import { openHarnessOn, verifyEvidence } from '../../src/store/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { ORIGIN, T0, verifiedSignal } from './fixtures.js';
import { world } from './world.js';

const engines = await enginesUnderTest();

/**
 * `engine` whose transactions are counted (every call of `transaction`, whatever it runs), and
 * whose statements throw BatonError `unavailable` while `failing(sql, params)` says so.
 */
function wrapped(
  engine: StoreEngine,
  failing: (sql: string, params: readonly unknown[]) => boolean = () => false,
): { engine: StoreEngine; transactions: () => number } {
  let transactions = 0;
  const wrap = (tx: Transaction): Transaction => faultyTransaction(tx, failing, 'the statement failed');
  const counted = {
    ...engine,
    kind: engine.kind,
    transaction: <T>(fn: (tx: Transaction) => Promise<T>) => {
      transactions += 1;
      return engine.transaction((tx) => fn(wrap(tx)));
    },
    read: <T>(fn: Parameters<StoreEngine['read']>[0]) => engine.read(fn) as Promise<T>,
    close: () => engine.close(),
  } as StoreEngine;
  return { engine: counted, transactions: () => transactions };
}

function harnessOn(engine: StoreEngine): MissionsService {
  return openHarnessOn(engine, {
    domainPrivateKey: generateEd25519KeyPair().privateKey,
    clock: new ManualClock(T0 + 10_000),
    ids: sequentialIdSource('b'),
  });
}

const batcherOf = (h: MissionsService, o: { maxBatch?: number } = {}) =>
  new SignalBatcher({ applyTaken: (take) => h.applyTakenSignals(take), ...o });

/** Each promise's outcome: its SET's result, or the rejection's error. */
async function outcomes(ps: readonly Promise<SignalAnswer>[]): Promise<unknown[]> {
  return (await Promise.allSettled(ps)).map((r): unknown =>
    r.status === 'fulfilled' ? r.value.result : r.reason,
  );
}

const mission = (i: number) => `msn_batch_${i}`;

for (const e of engines) {
  test(`[${e.name}] issue 11 §8 SETs applied together share one harness transaction; each caller gets its own answer`, async (t) => {
    const w = await world(t, e);
    const counted = wrapped(w.store.engine);
    const batcher = batcherOf(harnessOn(counted.engine));
    const signals = [0, 1, 2, 3, 4, 5, 6, 7].map((i) =>
      verifiedSignal('active', 1, T0 + i, {
        missionId: mission(i),
        jti: `set_m${i}`,
        digest: `sha-256:m${i}`,
      }),
    );
    const answers = await Promise.all(signals.map((s) => batcher.apply(s)));
    assert.deepEqual(
      answers.map((a) => a.result),
      signals.map(() => 'applied'),
    );
    assert.equal(counted.transactions(), 1, 'eight SETs, one transaction');
    assert.deepEqual(batcher.stats, { batches: 1, signals: 8, largestBatch: 8 });
    for (const [i] of signals.entries())
      assert.equal((await w.harness.getView(ORIGIN, mission(i)))?.state, 'active');
    assert.equal((await verifyEvidence(w.store.engine)).ok, true);
  });

  test(`[${e.name}] issue 11 §8 C-A18 A3.3 inside one batch: a replayed jti is a duplicate or a conflict, a version going backwards is ignored`, async (t) => {
    const w = await world(t, e);
    const counted = wrapped(w.store.engine);
    const batcher = batcherOf(harnessOn(counted.engine));
    const first = verifiedSignal('active', 1, T0);
    const got = await outcomes([
      batcher.apply(first),
      batcher.apply(first),
      batcher.apply({ ...first, state: 'suspended', digest: 'sha-256:other' }),
      batcher.apply(verifiedSignal('suspended', 3, T0 + 2)),
      batcher.apply(verifiedSignal('active', 2, T0 + 1)),
    ]);
    assert.deepEqual(got, ['applied', 'duplicate', 'replay_conflict', 'applied', 'ignored']);
    assert.equal(counted.transactions(), 1);
    const view = await w.harness.getView(ORIGIN, verifiedSignal('active', 1, T0).missionId);
    assert.deepEqual([view?.state, view?.signalVersion], ['suspended', 3]);
    const types = (await w.harness.events(missionSubject(ORIGIN, first.missionId))).map((x) => x.type);
    assert.equal(types.filter((x) => x === 'mission_signal_applied').length, 2);
    assert.equal(types.filter((x) => x === 'mission_signal_duplicate').length, 1);
    assert.equal(types.filter((x) => x === 'mission_signal_rejected').length, 1);
    assert.equal(types.filter((x) => x === 'mission_signal_ignored').length, 1);
  });

  test(`[${e.name}] issue 11 §8 a SET whose application fails rejects only its own caller, with its own error`, async (t) => {
    const w = await world(t, e);
    const poison = verifiedSignal('active', 1, T0, { missionId: mission(2), jti: 'set_poison' });
    const sick = wrapped(
      w.store.engine,
      (sql, params) => sql.includes('msn_sets_seen') && params.includes(poison.jti),
    );
    const batcher = batcherOf(harnessOn(sick.engine));
    const got = await outcomes([
      batcher.apply(verifiedSignal('active', 1, T0, { missionId: mission(1), jti: 'set_one' })),
      batcher.apply(poison),
      batcher.apply(verifiedSignal('active', 1, T0, { missionId: mission(3), jti: 'set_three' })),
    ]);
    assert.equal(got[0], 'applied');
    assert.equal(got[2], 'applied');
    assert.ok(got[1] instanceof BatonError, 'the poisoned SET is refused');
    assert.deepEqual([got[1].code, got[1].message], ['unavailable', 'INJECTED: the statement failed']);
    assert.equal((await w.harness.getView(ORIGIN, mission(1)))?.state, 'active');
    assert.equal((await w.harness.getView(ORIGIN, mission(3)))?.state, 'active');
    assert.equal(await w.harness.getView(ORIGIN, mission(2)), undefined, 'nothing of it was applied');
    // The batch failed as a whole, then each SET ran alone: one failed transaction and three.
    assert.equal(sick.transactions(), 4);
  });

  test(`[${e.name}] issue 11 §8 a lone SET is applied at once, in a transaction of its own`, async (t) => {
    const w = await world(t, e);
    const counted = wrapped(w.store.engine);
    const batcher = batcherOf(harnessOn(counted.engine));
    const answer = await batcher.apply(verifiedSignal('active', 1, T0));
    assert.deepEqual(answer, { result: 'applied', gap: false, stopped: 0 });
    assert.equal(counted.transactions(), 1);
    // A later SET, alone again after the first answer: its own batch, nothing waited for it.
    assert.equal((await batcher.apply(verifiedSignal('suspended', 2, T0 + 1))).result, 'applied');
    assert.deepEqual(batcher.stats, { batches: 2, signals: 2, largestBatch: 1 });
    assert.equal(counted.transactions(), 2);
  });
}

/** A hand-driven `applyTaken`: each call is held until the test ends it. */
function heldApply() {
  const calls: {
    signals: readonly VerifiedMissionSignal[];
    end: (a: readonly BatchedSignal[] | Error) => void;
  }[] = [];
  const applyTaken = (take: () => readonly VerifiedMissionSignal[]) =>
    new Promise<readonly BatchedSignal[]>((resolve, reject) => {
      calls.push({ signals: take(), end: (a) => (a instanceof Error ? reject(a) : resolve(a)) });
    });
  return { calls, applyTaken };
}

const applied = (gap = false): BatchedSignal => ({ ok: true, result: 'applied', gap, stopped: 0 });
const jtis = (signals: readonly VerifiedMissionSignal[]) => signals.map((s) => s.jti);
const sig = (n: number) => verifiedSignal('active', n, T0 + n, { jti: `set_${n}` });

/** Let pending callbacks and turns of the event loop run (no timer: a bounded number of turns). */
async function turns(n = 8): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

test('issue 11 §8 A3.4 SETs arriving while a batch is in flight wait for the next, in order; nobody is told before its transaction ended', async () => {
  const held = heldApply();
  const batcher = new SignalBatcher({ applyTaken: held.applyTaken });
  const told: string[] = [];
  const apply = (n: number) =>
    batcher.apply(sig(n)).then((a) => {
      told.push(`${n}:${a.result}`);
      return a;
    });
  const p1 = apply(1);
  await turns();
  assert.equal(held.calls.length, 1);
  assert.deepEqual(jtis(held.calls[0]!.signals), ['set_1']);
  const later = [apply(2), apply(3), apply(4)];
  await turns();
  assert.equal(held.calls.length, 1, 'one batch in flight at a time');
  assert.deepEqual(told, [], 'nothing told before the transaction ended');
  held.calls[0]!.end([applied()]);
  await p1;
  await turns();
  assert.equal(held.calls.length, 2);
  assert.deepEqual(
    jtis(held.calls[1]!.signals),
    ['set_2', 'set_3', 'set_4'],
    'the next batch, in arrival order',
  );
  assert.deepEqual(told, ['1:applied']);
  held.calls[1]!.end([applied(), { ok: true, result: 'duplicate', gap: false, stopped: 0 }, applied(true)]);
  const answers = await Promise.all(later);
  assert.deepEqual(
    answers.map((a) => [a.result, a.gap]),
    [
      ['applied', false],
      ['duplicate', false],
      ['applied', true],
    ],
  );
});

test('issue 11 §8 maxBatch: no batch takes more SETs than allowed; the rest follow in order', async () => {
  const held = heldApply();
  const batcher = new SignalBatcher({ applyTaken: held.applyTaken, maxBatch: 2 });
  const all = [1, 2, 3, 4, 5].map((n) => batcher.apply(sig(n)));
  for (const expected of [['set_1', 'set_2'], ['set_3', 'set_4'], ['set_5']]) {
    await turns();
    const call = held.calls.at(-1)!;
    assert.deepEqual(jtis(call.signals), expected);
    call.end(call.signals.map(() => applied()));
  }
  assert.equal((await Promise.all(all)).length, 5);
  assert.deepEqual(batcher.stats, { batches: 3, signals: 5, largestBatch: 2 });
  assert.throws(() => new SignalBatcher({ applyTaken: held.applyTaken, maxBatch: 0 }), /at least one SET/);
});

test('issue 11 §8 an error reaches exactly its callers: a SET’s own, the whole batch’s, the liveness write’s', async () => {
  const held = heldApply();
  let liveness: Error | undefined;
  let besides = 0;
  const batcher = new SignalBatcher({
    applyTaken: held.applyTaken,
    alongside: () => {
      besides += 1;
      return liveness === undefined ? Promise.resolve() : Promise.reject(liveness);
    },
  });
  // One SET's own failure: only its caller; the others are answered.
  const own = new BatonError('unavailable', 'this SET could not be applied');
  const first = [1, 2, 3].map((n) => batcher.apply(sig(n)));
  await turns();
  held.calls[0]!.end([applied(), { ok: false, error: own }, applied()]);
  assert.deepEqual(await outcomes(first), ['applied', own, 'applied']);
  // The whole batch failed (nothing says what committed): every caller of it, and only them.
  const whole = new BatonError('store_busy', 'the batch could not run');
  const second = [4, 5].map((n) => batcher.apply(sig(n)));
  await turns();
  held.calls[1]!.end(whole);
  assert.deepEqual(await outcomes(second), [whole, whole]);
  // A wrong number of answers is refused, not guessed at.
  const third = [6, 7].map((n) => batcher.apply(sig(n)));
  await turns();
  held.calls[2]!.end([applied()]);
  const wrong = await outcomes(third);
  assert.ok(wrong.every((x) => x instanceof BatonError && x.code === 'internal'));
  // The liveness write beside the batch failed: the callers whose SET applied get its error,
  // the one whose SET failed keeps its own.
  liveness = new BatonError('unavailable', 'liveness write failed');
  const fourth = [8, 9].map((n) => batcher.apply(sig(n)));
  await turns();
  held.calls[3]!.end([applied(), { ok: false, error: own }]);
  assert.deepEqual(await outcomes(fourth), [liveness, own]);
  assert.equal(besides, 4, 'one liveness write per batch');
  // The batcher goes on after all of it.
  liveness = undefined;
  const fifth = batcher.apply(sig(10));
  await turns();
  held.calls[4]!.end([applied()]);
  assert.equal((await fifth).result, 'applied');
});

test('issue 11 §8 an applyTaken that throws before returning a promise rejects its batch, and the batcher goes on', async () => {
  let calls = 0;
  const boom = new BatonError('internal', 'thrown synchronously');
  const batcher = new SignalBatcher({
    applyTaken: (take) => {
      calls += 1;
      if (calls === 1) throw boom;
      return Promise.resolve(take().map(() => applied()));
    },
  });
  assert.deepEqual(await outcomes([batcher.apply(sig(1)), batcher.apply(sig(2))]), [boom, boom]);
  assert.equal((await batcher.apply(sig(3))).result, 'applied');
});
