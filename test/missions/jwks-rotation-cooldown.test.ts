/**
 * Key rotation inside jose's refetch cooldown (A3.2 step 4, A3.4 step 2, MSG-01): jose refetches a
 * JWKS for an unknown kid at most once per cooldown, so a SET signed right after the issuer
 * rotated can name a kid the set Baton holds predates. That miss is no verdict on the kid: it is
 * `unavailable` (503, the RFC 8935 transmitter redelivers), never 400 `invalid_key`, which a
 * transmitter does not retry — the revocation or suspension it carries would be lost. A kid still
 * unknown after jose did refetch stays refused. Real reference issuer, real keys, loopback HTTP.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isBatonError } from '../../src/core/errors.js';
import { missionSubject, remoteMissionKeys } from '../../src/missions/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { consumerWorld, eventually } from './consumer-world.js';
import { startWorld } from './issuer-support.js';

const engines = await enginesUnderTest();

test('A3.2 step 4: a kid missed inside the refetch cooldown is unavailable; after a refetch it is refused', async (t) => {
  const world = await startWorld();
  t.after(() => world.close());
  const alg = 'ES256';
  const keys = remoteMissionKeys({
    origin: world.pin.issuer,
    jwksUri: world.pin.jwks_uri,
    cooldownMs: 60_000,
  });
  const first = world.issuer.state.keys.current.kid;
  assert.equal((await keys.resolve({ alg, kid: first })).kid, first);
  const rotated = await world.admin('/admin/keys/rotate', {});
  const kid = rotated.body['kid'] as string;
  await assert.rejects(keys.resolve({ alg, kid }), (e: unknown) => isBatonError(e, 'unavailable'));
  // Once jose refetches (here: a set never fetched before), the rotated kid resolves ...
  const cold = remoteMissionKeys({
    origin: world.pin.issuer,
    jwksUri: world.pin.jwks_uri,
    cooldownMs: 60_000,
  });
  assert.equal((await cold.resolve({ alg, kid })).kid, kid);
  // ... and a kid the issuer never published is refused, not retried.
  const unknown = remoteMissionKeys({
    origin: world.pin.issuer,
    jwksUri: world.pin.jwks_uri,
    cooldownMs: 60_000,
  });
  await assert.rejects(unknown.resolve({ alg, kid: 'never-published' }), (e: unknown) =>
    isBatonError(e, 'kid_mismatch'),
  );
});

interface Delivery {
  readonly jti: string;
  readonly status: number;
}

for (const e of engines) {
  test(`[${e.name}] MSG-01 RFC 8935: a SET signed with a just-rotated key is answered 503 (redelivered), never 400`, async (t) => {
    const w = await consumerWorld(t, e);
    assert.equal((await w.pinIssuer()).status, 201);
    const mission = await w.issuer.createMission();
    await eventually(
      async () => (await w.harness.getView(w.pin.issuer, mission))?.state === 'active',
      'the approval SET (Baton has fetched the issuer JWKS)',
    );
    assert.equal((await w.issuer.admin('/admin/keys/rotate', {})).status, 200);
    assert.equal((await w.issuer.admin(`/admin/missions/${mission}/suspend`, {})).status, 200);
    const log = (await w.issuer.admin('/admin/deliveries')).body['deliveries'] as Delivery[];
    const suspendJti = log.at(-1)?.jti;
    const attempts = log.filter((d) => d.jti === suspendJti).map((d) => d.status);
    assert.ok(attempts.length > 1, `the transmitter retried (${attempts.join(', ')})`);
    assert.ok(
      attempts.every((s) => s === 503),
      `every attempt answered 503, none 400 (${attempts.join(', ')})`,
    );
    const types = (await w.harness.events(missionSubject(w.pin.issuer, mission))).map((x) => x.type);
    assert.deepEqual(types, ['mission_signal_applied'], 'nothing of the suspension applied yet');
  });
}
