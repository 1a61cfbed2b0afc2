/**
 * Lifecycle SETs from the real reference issuer to a real RFC 8935 receiver on loopback, and over
 * RFC 8936 poll: emission on every transition with version from 1 (MSG-03), each protection check
 * answered with its RFC 8935 code and nothing applied (MSG-01, A7.11), replays (C-A18), reordering
 * and drops (ordering is the harness's job: the version is parsed and carried), push retries.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../src/core/clock.js';
import {
  InMemorySetReplay,
  SetPoller,
  withReplay,
  type VerifiedMissionSignal,
  type VerifiedSet,
} from '../../src/missions/index.js';
import { startReceiver, startWorld, type Receiver, type World } from './issuer-support.js';

let world: World;
let receiver: Receiver;

before(async () => {
  world = await startWorld();
  receiver = await startReceiver(world);
});
after(async () => {
  await world.close();
  await receiver.close();
});

const signals = (sets: readonly VerifiedSet[], mission: string): VerifiedMissionSignal[] =>
  sets.flatMap((s) => (s.kind === 'lifecycle' && s.signal.missionId === mission ? [s.signal] : []));

/** A new mission whose approval SET the receiver has answered. */
async function created(): Promise<string> {
  let mission = '';
  await pushes(async () => (mission = await world.createMission()), 1);
  return mission;
}

async function pushes(
  action: () => Promise<unknown>,
  n: number,
): Promise<{ answers: Receiver['answers']; from: number }> {
  const from = receiver.answers.length;
  await action();
  await receiver.answered(from + n);
  return { answers: receiver.answers.slice(from), from };
}

test('MSG-03: approval is version 1 without prior_state; every transition adds one version, prior_state set', async () => {
  let mission = '';
  await pushes(async () => (mission = await world.createMission()), 1);
  await pushes(() => world.admin(`/admin/missions/${mission}/suspend`, { reason: 'pause for review' }), 1);
  await pushes(() => world.admin(`/admin/missions/${mission}/resume`, {}), 1);
  await pushes(() => world.admin(`/admin/missions/${mission}/revoke`, {}), 1);
  const seen = signals(receiver.applied, mission);
  assert.deepEqual(
    seen.map((s) => [s.version, s.priorState, s.state]),
    [
      [1, null, 'active'],
      [2, 'active', 'suspended'],
      [3, 'suspended', 'active'],
      [4, 'active', 'revoked'],
    ],
  );
  assert.equal(seen[1]!.reason, 'pause for review');
  assert.equal(new Set(seen.map((s) => s.jti)).size, 4);
});

const PROTECTION: ReadonlyArray<[string, string]> = [
  ['wrong_aud', 'invalid_audience'],
  ['wrong_iss', 'invalid_issuer'],
  ['bad_signature', 'invalid_key'],
  ['no_exp', 'invalid_request'],
  ['expired', 'invalid_request'],
  ['origin_mismatch', 'invalid_issuer'],
];

for (const [fault, err] of PROTECTION) {
  test(`MSG-01/A7.11: SET fault ${fault} ⇒ 400 ${err}, nothing applied`, async () => {
    const mission = await created();
    const applied = receiver.applied.length;
    await world.admin('/admin/faults', { sets: [fault] });
    const { answers } = await pushes(() => world.admin(`/admin/missions/${mission}/suspend`, {}), 1);
    assert.deepEqual(answers.at(-1), {
      status: 400,
      body: { err, description: (answers.at(-1) as { body: { description: string } }).body.description },
    });
    assert.equal(signals(receiver.applied.slice(applied), mission).length, 0);
  });
}

test('C-A18: an identical redelivery is 202 and applied once; other bytes under the same jti ⇒ 400 invalid_request', async () => {
  const mission = await created();
  await world.admin('/admin/faults', { sets: ['replay'] });
  const replay = await pushes(() => world.admin(`/admin/missions/${mission}/suspend`, {}), 2);
  assert.deepEqual(replay.answers.slice(-2), [{ status: 202 }, { status: 202 }]);
  assert.equal(signals(receiver.applied, mission).filter((s) => s.state === 'suspended').length, 1);
  await world.admin('/admin/faults', { sets: ['replay_other_bytes'] });
  const conflict = await pushes(() => world.admin(`/admin/missions/${mission}/resume`, {}), 2);
  assert.equal(conflict.answers.at(-2)!.status, 202);
  assert.equal(conflict.answers.at(-1)!.status, 400);
  assert.equal((conflict.answers.at(-1) as { body: { err: string } }).body.err, 'invalid_request');
  assert.equal(signals(receiver.applied, mission).filter((s) => s.version === 3).length, 1);
});

test('MSG-02: a reordered pair arrives newer-first with its version; a dropped SET never arrives', async () => {
  const mission = await created();
  await world.admin('/admin/faults', { sets: ['reorder'] });
  await pushes(async () => {
    await world.admin(`/admin/missions/${mission}/suspend`, {});
    await world.admin(`/admin/missions/${mission}/resume`, {});
  }, 2);
  const versions = signals(receiver.applied, mission).map((s) => s.version);
  assert.deepEqual(versions.slice(-2), [3, 2], 'the harness, not the parser, orders by version');
  await world.admin('/admin/faults', { sets: ['drop'] });
  await world.admin(`/admin/missions/${mission}/revoke`, {});
  const log = (await world.admin('/admin/deliveries')).body['deliveries'] as Array<{ status: number }>;
  assert.equal(log.at(-1)!.status, -1);
  assert.ok(!signals(receiver.applied, mission).some((s) => s.state === 'revoked'));
});

test('A3.4 step 1: a wrong stream bearer is 401 authentication_failed; a wrong media type 400', async () => {
  const set = 'eyJhbGciOiJFUzI1NiJ9.e30.AAAA';
  const wrong = await fetch(receiver.url, {
    method: 'POST',
    headers: { 'content-type': 'application/secevent+jwt', authorization: 'Bearer nope' },
    body: set,
  });
  assert.equal(wrong.status, 401);
  assert.equal(((await wrong.json()) as { err: string }).err, 'authentication_failed');
});

test('RFC 8935 push retries: a receiver failing once with 503 gets the SET on the next attempt', async () => {
  let calls = 0;
  const flaky = Fastify({ logger: false });
  flaky.addContentTypeParser('application/secevent+jwt', { parseAs: 'string' }, (_r, body, done) =>
    done(null, body),
  );
  flaky.post('/events', async (_request, reply) => reply.code(++calls === 1 ? 503 : 202).send());
  await flaky.listen({ port: 0, host: '127.0.0.1' });
  try {
    const url = `http://127.0.0.1:${(flaky.server.address() as AddressInfo).port}/events`;
    await world.admin('/admin/receivers', {
      audience: 'https://flaky.example',
      delivery: 'push',
      endpoint: url,
      bearer: 'flaky-bearer-0123456789',
    });
    await world.createMission({ audiences: ['https://flaky.example'] });
    const log = (await world.admin('/admin/deliveries')).body['deliveries'] as Array<{
      status: number;
      attempt: number;
    }>;
    assert.deepEqual(
      log.slice(-2).map((d) => [d.attempt, d.status]),
      [
        [1, 503],
        [2, 202],
      ],
    );
  } finally {
    await flaky.close();
  }
});

test('RFC 8936 poll: SETs are applied, then acknowledged; a replay is a duplicate; SSF verification events are stream events', async () => {
  const bearer = 'poll-bearer-0123456789abcdef';
  const audience = 'https://poller.example';
  assert.equal((await world.admin('/admin/receivers', { audience, delivery: 'poll', bearer })).status, 201);
  const applied: VerifiedSet[] = [];
  const poller = new SetPoller({
    endpoint: `${world.issuer.url}/ssf/poll`,
    bearer,
    keys: world.keys,
    expect: { issuer: world.pin.issuer, audience },
    clock: systemClock,
    onSet: withReplay(new InMemorySetReplay(() => Date.now()), world.pin.issuer, (set) => {
      applied.push(set);
      return Promise.resolve();
    }),
  });
  const mission = await world.createMission({ audiences: [audience] });
  await world.admin('/admin/faults', { sets: ['replay'] });
  await world.admin(`/admin/missions/${mission}/suspend`, {});
  const first = await poller.pollOnce();
  assert.deepEqual(
    signals(first.applied, mission).map((s) => s.version),
    [1, 2],
  );
  assert.equal(first.moreAvailable, true, 'the replayed copy waits for the next poll');
  assert.equal(poller.pending.ack.length, 2);
  const second = await poller.pollOnce();
  assert.equal(second.duplicates, 1);
  assert.equal(second.applied.length, 0);
  const verify = await fetch(`${world.issuer.url}/ssf/verify`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ state: 'probe-1' }),
  });
  assert.equal(verify.status, 204);
  const third = await poller.pollOnce();
  assert.equal(third.applied.length, 1);
  const probe = third.applied[0]!;
  assert.equal(probe.kind === 'stream' && probe.verificationState, 'probe-1');
  const empty = await poller.pollOnce();
  assert.deepEqual([empty.applied.length, empty.duplicates, empty.moreAvailable], [0, 0, false]);
});
