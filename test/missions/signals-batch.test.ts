/**
 * A batch of lifecycle SETs in ONE transaction (issue 11 §8; A3.4 steps 5–7) on both engines: the
 * jti replay and strictly-growing version rules decide inside the batch exactly as one SET after
 * another; a SET refused at verification (a bad signature) refuses only itself, over a real RFC
 * 8936 poll on loopback with real ES256 signatures; a SET whose application fails is applied
 * alone neither; a batch that dies half way leaves nothing applied (fault injection on the real
 * engine: statements start failing, as when the database goes away mid-transaction).
 */
import assert from 'node:assert/strict';
import { KeyObject } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import Fastify from 'fastify';
import { exportJWK, generateKeyPair } from 'jose';
import { faultyTransaction } from '../support/faulty-transaction.js';
import { BatonError } from '../../src/core/errors.js';
import { systemClock } from '../../src/core/clock.js';
import { signJwsWithKey } from '../../src/core/jose.js';
import { formatRfc3339 } from '../../src/core/time.js';
import {
  LIFECYCLE_EVENT,
  localMissionKeys,
  missionSubject,
  SetPoller,
  verifyMissionSets,
  type MissionsService,
} from '../../src/missions/index.js';
import type { StoreEngine, Transaction } from '../../src/store/engine.js';
import { openHarnessOn, verifyEvidence } from '../../src/store/index.js';
import { generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { sequentialIdSource } from '../../src/core/ids.js';
import { ManualClock } from '../../src/core/clock.js';
import { enginesUnderTest } from '../store/engines.js';
import { binding, MISSION, ORIGIN, T0, verifiedSignal } from './fixtures.js';
import { world } from './world.js';

const engines = await enginesUnderTest();
const AUD = 'https://erp.example.com';

const results = (answers: Awaited<ReturnType<MissionsService['applyVerifiedSignals']>>) =>
  answers.map((a) => (a.ok ? a.result : 'failed'));

async function types(h: MissionsService): Promise<string[]> {
  return (await h.events(missionSubject(ORIGIN, MISSION))).map((e) => e.type);
}

/** `engine` whose statements fail (BatonError `unavailable`) while `failing(sql, params)` says so. */
function faulty(engine: StoreEngine, failing: (sql: string, params: readonly unknown[]) => boolean) {
  const wrap = (tx: Transaction): Transaction => faultyTransaction(tx, failing, 'the database went away');
  return {
    ...engine,
    kind: engine.kind,
    transaction: <T>(fn: (tx: Transaction) => Promise<T>) => engine.transaction((tx) => fn(wrap(tx))),
    read: <T>(fn: Parameters<StoreEngine['read']>[0]) => engine.read(fn) as Promise<T>,
    close: () => engine.close(),
  } as StoreEngine;
}

function harnessOn(engine: StoreEngine): MissionsService {
  return openHarnessOn(engine, {
    domainPrivateKey: generateEd25519KeyPair().privateKey,
    clock: new ManualClock(T0 + 10_000),
    ids: sequentialIdSource('f'),
  });
}

for (const e of engines) {
  test(`[${e.name}] issue 11 §8 C-A18 a jti replayed inside one batch: same bytes duplicate, other bytes replay_conflict, applied once`, async (t) => {
    const w = await world(t, e);
    const first = verifiedSignal('active', 1, T0);
    const answers = await w.harness.applyVerifiedSignals([
      first,
      first,
      { ...first, state: 'suspended', digest: 'sha-256:other' },
      verifiedSignal('suspended', 2, T0 + 1),
    ]);
    assert.deepEqual(results(answers), ['applied', 'duplicate', 'replay_conflict', 'applied']);
    const view = await w.harness.getView(ORIGIN, MISSION);
    assert.deepEqual([view?.state, view?.signalVersion], ['suspended', 2]);
    const seen = await types(w.harness);
    assert.equal(seen.filter((x) => x === 'mission_signal_applied').length, 2);
    assert.equal(seen.filter((x) => x === 'mission_signal_duplicate').length, 1);
    assert.equal(seen.filter((x) => x === 'mission_signal_rejected').length, 1);
  });

  test(`[${e.name}] issue 11 §8 A3.3 a version going backwards inside a batch is ignored, the later one stands`, async (t) => {
    const w = await world(t, e);
    const answers = await w.harness.applyVerifiedSignals([
      verifiedSignal('active', 1, T0),
      verifiedSignal('suspended', 3, T0 + 2),
      verifiedSignal('active', 2, T0 + 1),
      verifiedSignal('suspended', 3, T0 + 2, { jti: 'set_again_3', digest: 'sha-256:again3' }),
    ]);
    assert.deepEqual(results(answers), ['applied', 'applied', 'ignored', 'ignored']);
    const view = await w.harness.getView(ORIGIN, MISSION);
    assert.deepEqual([view?.state, view?.signalVersion], ['suspended', 3]);
    // The same answers as one SET after another on a fresh store.
    const one = await world(t, e);
    const alone: string[] = [];
    for (const s of [
      verifiedSignal('active', 1, T0),
      verifiedSignal('suspended', 3, T0 + 2),
      verifiedSignal('active', 2, T0 + 1),
      verifiedSignal('suspended', 3, T0 + 2, { jti: 'set_again_3', digest: 'sha-256:again3' }),
    ])
      alone.push((await one.harness.applyVerifiedSignal(s)).result);
    assert.deepEqual(alone, results(answers));
  });

  test(`[${e.name}] issue 11 §8 A3.7 a revocation inside a batch stops the Mission's queued work in that transaction; every chain verifies`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
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
    const answers = await w.harness.applyVerifiedSignals([
      verifiedSignal('suspended', 2, T0 + 1),
      verifiedSignal('revoked', 3, T0 + 2, { priorState: 'suspended' }),
      verifiedSignal('active', 4, T0 + 3, { priorState: 'revoked' }),
    ]);
    assert.deepEqual(
      answers.map((a) => (a.ok ? [a.result, a.stopped] : 'failed')),
      [
        ['applied', 1],
        ['applied', 1],
        ['ignored', 0],
      ],
    );
    assert.equal((await w.harness.getItem(item.id)).state, 'suppressed');
    const work = (await w.harness.events(`work:${item.id}`)).map((x) => x.type);
    assert.equal(work.filter((x) => x === 'harness_evidence').length, 2);
    const view = await w.harness.getView(ORIGIN, MISSION);
    assert.deepEqual([view?.state, view?.signalVersion], ['revoked', 3]);
    assert.equal((await verifyEvidence(w.store.engine)).ok, true);
  });

  test(`[${e.name}] issue 11 §8 a batch that dies half way applies nothing; redelivered, it applies in order`, async (t) => {
    const w = await world(t, e);
    const batch = [1, 2, 3, 4].map((v) => verifiedSignal(v % 2 === 1 ? 'active' : 'suspended', v, T0 + v));
    let statements = 0;
    // The database goes away after the batch's first SETs were written (and stays away).
    const down = harnessOn(faulty(w.store.engine, () => ++statements > 8));
    const answers = await down.applyVerifiedSignals(batch);
    assert.ok(statements > 8, 'the failure came after statements of the batch had run');
    assert.deepEqual(results(answers), ['failed', 'failed', 'failed', 'failed']);
    assert.ok(answers.every((a) => !a.ok && a.error instanceof BatonError && a.error.code === 'unavailable'));
    assert.equal(await w.harness.getView(ORIGIN, MISSION), undefined, 'no view was written');
    assert.deepEqual(await types(w.harness), [], 'no evidence was written');
    const replay = await w.harness.applyVerifiedSignals(batch);
    assert.deepEqual(results(replay), ['applied', 'applied', 'applied', 'applied']);
    assert.equal((await w.harness.getView(ORIGIN, MISSION))?.signalVersion, 4);
  });

  test(`[${e.name}] issue 11 §8 a SET whose application fails refuses only itself: the others apply, each alone`, async (t) => {
    const w = await world(t, e);
    const poison = verifiedSignal('suspended', 2, T0 + 2);
    const sick = harnessOn(
      faulty(w.store.engine, (sql, params) => sql.includes('msn_sets_seen') && params.includes(poison.jti)),
    );
    const answers = await sick.applyVerifiedSignals([
      verifiedSignal('active', 1, T0 + 1),
      poison,
      verifiedSignal('suspended', 3, T0 + 3),
    ]);
    assert.deepEqual(results(answers), ['applied', 'failed', 'applied']);
    const view = await w.harness.getView(ORIGIN, MISSION);
    assert.deepEqual([view?.state, view?.signalVersion], ['suspended', 3]);
    // Redelivered once the fault is gone, the poisoned SET is now behind: ignored, never applied.
    assert.equal((await w.harness.applyVerifiedSignal(poison)).result, 'ignored');
  });

  test(`[${e.name}] issue 11 §8 MSG-01 an RFC 8936 poll with one bad signature: only that SET refused (setErrs), the rest applied in one transaction and acknowledged`, async (t) => {
    const w = await world(t, e);
    const poll = await transmitter(t);
    const sets = [
      await poll.sign(1, 'active'),
      await poll.sign(2, 'suspended'),
      await poll.sign(3, 'active'),
    ];
    const forged = `${sets[1]!.slice(0, -8)}AAAAAAAA`;
    poll.offer({ set_1: sets[0]!, set_2: forged, set_3: sets[2]! });
    let batches = 0;
    const poller = new SetPoller({
      endpoint: poll.url,
      bearer: 'poll-bearer',
      keys: poll.keys,
      expect: { issuer: ORIGIN, audience: AUD },
      clock: systemClock,
      onSet: () => Promise.reject(new Error('onSets is used')),
      onSets: async (verified) => {
        batches += 1;
        const signals = verified.flatMap((v) => (v.kind === 'lifecycle' ? [v.signal] : []));
        return (await w.harness.applyVerifiedSignals(signals)).map((a) =>
          a.ok ? (a.result === 'duplicate' ? 'duplicate' : 'new') : null,
        );
      },
    });
    const round = await poller.pollOnce();
    assert.equal(batches, 1);
    assert.deepEqual(
      round.applied.map((s) => (s.kind === 'lifecycle' ? s.signal.version : 0)),
      [1, 3],
    );
    assert.deepEqual(Object.keys(round.refused), ['set_2']);
    assert.equal(round.refused['set_2']?.err, 'invalid_key');
    assert.deepEqual(poller.pending.ack, ['set_1', 'set_3']);
    const view = await w.harness.getView(ORIGIN, MISSION);
    // Version 3 applied over 1 with 2 missing: a gap, recorded (A3.3), state as the last SET says.
    assert.deepEqual([view?.state, view?.signalVersion], ['active', 3]);
    assert.ok((await types(w.harness)).includes('mission_signal_gap'));
    // The next poll tells the transmitter: acknowledgements and the refusal.
    poll.offer({});
    await poller.pollOnce();
    assert.deepEqual(poll.lastRequest?.['ack'], ['set_1', 'set_3']);
    assert.deepEqual(Object.keys(poll.lastRequest?.['setErrs'] ?? {}), ['set_2']);
  });
}

test('issue 11 §8 verifyMissionSets keeps each verdict at its SET’s index; refusals refuse only themselves', async (t) => {
  const poll = await transmitter(t);
  const good = await poll.sign(1, 'active');
  const verdicts = await verifyMissionSets(
    [good, `${good.slice(0, -8)}AAAAAAAA`, 'not.a.set', await poll.sign(2, 'suspended')],
    poll.keys,
    { issuer: ORIGIN, audience: AUD },
    Date.now(),
  );
  assert.deepEqual(
    verdicts.map((v) => (v.ok ? (v.set.kind === 'lifecycle' ? v.set.signal.version : -1) : v.error.code)),
    [1, 'mission_signal_invalid', 'mission_signal_invalid', 2],
  );
});

/** A SIMULATED RFC 8936 transmitter on loopback signing real ES256 SETs for MISSION. */
async function transmitter(t: TestContext) {
  const es = await generateKeyPair('ES256', { extractable: true });
  const keys = localMissionKeys({ keys: [{ ...(await exportJWK(es.publicKey)), kid: 'poll-key' }] });
  const signer = { privateKey: KeyObject.from(es.privateKey), kid: 'poll-key', alg: 'ES256' as const };
  let offered: Record<string, string> = {};
  const state: { lastRequest: Record<string, unknown> | undefined } = { lastRequest: undefined };
  const app = Fastify();
  app.post('/poll', (request, reply) => {
    state.lastRequest = request.body as Record<string, unknown>;
    const sets = offered;
    offered = {};
    void reply.send({ sets, moreAvailable: false });
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const now = Math.floor(Date.now() / 1000);
  return {
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/poll`,
    keys,
    get lastRequest() {
      return state.lastRequest;
    },
    offer(sets: Record<string, string>) {
      offered = sets;
    },
    sign(version: number, s: string): Promise<string> {
      const claims = {
        iss: ORIGIN,
        aud: AUD,
        iat: now,
        exp: now + 600,
        jti: `set_${version}`,
        events: {
          [LIFECYCLE_EVENT]: {
            mission_id: MISSION,
            mission_origin: ORIGIN,
            state: s,
            ...(version > 1 && { prior_state: s === 'active' ? 'suspended' : 'active' }),
            version,
            committed_at: formatRfc3339(Date.now()),
          },
        },
      };
      return signJwsWithKey(Buffer.from(JSON.stringify(claims)), signer, 'secevent+jwt');
    },
  };
}
