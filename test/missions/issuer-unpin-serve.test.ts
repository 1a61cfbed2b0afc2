/**
 * Unpinning a Mission issuer (docs/missions.md "Unpinning an issuer"): `DELETE
 * /v1/missions/issuers/{issuer}` (admin) answers `removed`, then `absent`; the pin moves to the
 * history table (migration 033) with the evidence event `mission_issuer_unpinned`; every view of
 * the origin that reads `active` is stale at once, so work under it dispatches no more (the
 * refresh fails closed as for an unpinned origin) although it did just before; a Status answer
 * or SET verified under the pin before the unpin is refused in its applying transaction; a push
 * from the issuer is refused as from an unknown one; a poll loop of another server sharing the
 * store polls it no more; a final (revoked) view stays as it is; the key archive stays; a re-pin
 * is `created` and work proceeds again after a fresh Status answer. Real server, real reference
 * issuer, loopback, both engines.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AdminClient } from '../../src/client/index.js';
import { isBatonError } from '../../src/core/errors.js';
import type { JsonObject } from '../../src/core/json.js';
import { PUSH_DELIVERY, SET_MEDIA_TYPE, type VerifiedMissionSignal } from '../../src/missions/index.js';
import { issuerSubject } from '../../src/store/missions-issuers.js';
import { baton } from '../config/support.js';
import { assertProblem } from '../server/helpers.js';
import { enginesUnderTest } from '../store/engines.js';
import {
  consumerWorld,
  eventually,
  issuerEvents,
  issuerSet,
  STREAM_BEARER,
  type ConsumerWorld,
} from './consumer-world.js';

const engines = await enginesUnderTest();

const issuerPath = (w: ConsumerWorld): string => `/v1/missions/issuers/${encodeURIComponent(w.pin.issuer)}`;

async function executor(w: ConsumerWorld): Promise<string> {
  const taken = await w.call('POST', '/v1/lineages/invoice-agent/takeover', { token: w.operator });
  assert.equal(taken.status, 201, taken.text);
  return taken.body['credential'] as string;
}

async function item(w: ConsumerWorld, cred: string, mission: string): Promise<string> {
  const made = await w.call('POST', '/v1/harness/items', {
    token: cred,
    body: { kind: 'queue_item', action_class: 'consequential_write', mission_binding: w.binding(mission) },
  });
  assert.equal(made.status, 201, made.text);
  return made.body['id'] as string;
}

/** The pin stored (push stream), a Mission approved and its approval SET applied (view active). */
async function activeMission(w: ConsumerWorld): Promise<string> {
  assert.equal((await w.pinIssuer()).status, 201);
  const mission = await w.issuer.createMission();
  await eventually(
    async () => (await w.harness.getView(w.pin.issuer, mission))?.state === 'active',
    'the approval SET',
  );
  return mission;
}

const details = (a: { body: JsonObject }): JsonObject => (a.body['details'] ?? {}) as JsonObject;

const repinBody = (w: ConsumerWorld): JsonObject => ({
  pin: { ...w.pin, stream: { delivery: PUSH_DELIVERY } } as unknown as JsonObject,
  pushBearer: STREAM_BEARER,
});

for (const e of engines) {
  test(`[${e.name}] unpin: removed with evidence and history, then absent; operator 403; unknown absent; the key archive stays`, async (t) => {
    const w = await consumerWorld(t, e);
    await activeMission(w);
    const pinned = await w.call('GET', issuerPath(w), { token: w.operator });
    assert.equal(pinned.status, 200);
    const keysBefore = await w.engine.read((ex) =>
      ex.all<{ kid: string }>('SELECT kid FROM msn_keys WHERE origin = ?', [w.pin.issuer]),
    );
    assert.ok(keysBefore.length > 0, 'the approval SET archived its key');

    assertProblem(await w.call('DELETE', issuerPath(w), { token: w.operator }), 403, 'forbidden');
    assert.equal((await w.call('GET', issuerPath(w), { token: w.operator })).status, 200, 'still pinned');

    const removed = await w.call('DELETE', issuerPath(w), { token: w.admin });
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual(removed.body, { issuer: w.pin.issuer, status: 'removed' });
    assertProblem(await w.call('GET', issuerPath(w), { token: w.operator }), 404, 'mission_issuer_not_found');
    const again = await w.call('DELETE', issuerPath(w), { token: w.admin });
    assert.deepEqual([again.status, again.body], [200, { issuer: w.pin.issuer, status: 'absent' }]);
    const unknown = await w.call('DELETE', '/v1/missions/issuers/https%3A%2F%2Fnobody.example', {
      token: w.admin,
    });
    assert.deepEqual(unknown.body, { issuer: 'https://nobody.example', status: 'absent' });

    const log = await issuerEvents(w);
    assert.deepEqual(log.types, ['mission_issuer_pinned', 'mission_issuer_unpinned']);
    assert.deepEqual(JSON.parse(log.bodies[1] ?? ''), {
      pin_digest: pinned.body['pinDigest'],
      views_made_stale: 1,
    });
    assert.equal(log.ok, true, 'the issuer chain verifies');
    const actor = await w.engine.read((ex) =>
      ex.get<{ actor: string }>(
        "SELECT actor FROM evidence_events WHERE subject = ? AND type = 'mission_issuer_unpinned'",
        [issuerSubject(w.pin.issuer)],
      ),
    );
    assert.match(actor?.actor ?? '', /^admin/);
    const history = await w.missions.registry.unpinned(w.pin.issuer);
    assert.equal(history.length, 1);
    assert.equal(history[0]?.pinDigest, pinned.body['pinDigest']);
    assert.equal(history[0]?.registeredAt, pinned.body['registeredAt']);
    assert.equal(history[0]?.unpinnedBy, actor?.actor);
    const keysAfter = await w.engine.read((ex) =>
      ex.all<{ kid: string }>('SELECT kid FROM msn_keys WHERE origin = ?', [w.pin.issuer]),
    );
    assert.deepEqual(keysAfter, keysBefore, 'MST-06: the key archive stays');
  });

  test(`[${e.name}] after an unpin work under the issuer's active Mission is not dispatched, its push is refused; a re-pin and a fresh check let it proceed`, async (t) => {
    const reported: { error: unknown; what: string }[] = [];
    const w = await consumerWorld(t, e, { onError: (error, what) => reported.push({ error, what }) });
    const mission = await activeMission(w);
    const cred = await executor(w);
    const first = await item(w, cred, mission);
    const second = await item(w, cred, mission);
    const before = await w.call('POST', '/v1/harness/dispatch', { token: cred, body: { itemId: first } });
    assert.equal(before.status, 200, before.text);

    const removed = await w.call('DELETE', issuerPath(w), { token: w.admin });
    assert.equal(removed.body['status'], 'removed');
    const view = await w.harness.getView(w.pin.issuer, mission);
    assert.equal(view?.state, 'active', 'the state is kept: only its freshness ends');
    assert.equal(w.harness.assessView(view).verdict, 'stale');

    const after = await w.call('POST', '/v1/harness/dispatch', { token: cred, body: { itemId: second } });
    assertProblem(after, 503, 'mission_status_unavailable');
    assert.equal(details(after)['statusError'], 'mission_issuer_not_found');
    assert.equal((await w.harness.getItem(second)).state, 'paused', 'fails closed');
    assert.ok(reported.some((r) => isBatonError(r.error, 'mission_issuer_not_found')));

    // A push from the unpinned issuer, with its own valid SET and its old bearer: an unknown issuer's 401.
    const push = await w.call('POST', `/v1/missions/signals/${encodeURIComponent(w.pin.issuer)}`, {
      raw: await issuerSet(w, mission, 1),
      contentType: SET_MEDIA_TYPE,
      headers: { authorization: `Bearer ${STREAM_BEARER}` },
    });
    assert.deepEqual([push.status, push.body['err']], [401, 'authentication_failed']);
    // An operator's Status check answers as for an unpinned origin.
    const check = await w.call(
      'POST',
      `/v1/missions/${encodeURIComponent(w.pin.issuer)}/${encodeURIComponent(mission)}/check`,
      { token: w.operator, body: {} },
    );
    assertProblem(check, 404, 'mission_issuer_not_found');

    // Re-pin: created again, and a fresh Status answer lets the paused item proceed.
    const repinned = await w.call('POST', '/v1/missions/issuers', { token: w.admin, body: repinBody(w) });
    assert.equal(repinned.status, 201, repinned.text);
    assert.deepEqual((await issuerEvents(w)).types, [
      'mission_issuer_pinned',
      'mission_issuer_unpinned',
      'mission_issuer_pinned',
    ]);
    const resumed = await w.call('POST', '/v1/harness/dispatch', { token: cred, body: { itemId: second } });
    assert.equal(resumed.status, 200, resumed.text);
    assert.equal((await w.harness.getItem(second)).state, 'running');
  });

  test(`[${e.name}] a Status answer or SET verified under the pin before the unpin is refused when applied after it, and after a re-pin with another pin`, async (t) => {
    const w = await consumerWorld(t, e);
    const mission = await activeMission(w);
    const status = await w.missions.fetchStatus(w.pin.issuer, mission);
    assert.equal(typeof status.pinDigest, 'string', 'the consumer names the pin it verified under');
    const viewBefore = await w.harness.getView(w.pin.issuer, mission);
    const signal: VerifiedMissionSignal = {
      source: 'signal',
      origin: w.pin.issuer,
      missionId: mission,
      state: 'suspended',
      priorState: 'active',
      version: 2,
      committedAt: new Date().toISOString(),
      jti: 'jti-verified-before-the-unpin',
      issuedAt: Math.floor(Date.now() / 1000),
      expiresAt: Math.floor(Date.now() / 1000) + 300,
      digest: 'sha-256:not-checked-here',
      reason: null,
      ...(status.pinDigest !== undefined && { pinDigest: status.pinDigest }),
    };
    // Unpinned by another server of the store: this process's per-issuer entries are not told.
    const other = await w.restarted();
    assert.equal(await other.missions.unpin(w.pin.issuer, 'admin:test'), 'removed');
    const viewAfterUnpin = await w.harness.getView(w.pin.issuer, mission);
    await assert.rejects(w.harness.applyVerifiedStatus(status), (err) =>
      isBatonError(err, 'mission_issuer_not_found'),
    );
    await assert.rejects(w.harness.applyVerifiedSignal(signal), (err) =>
      isBatonError(err, 'mission_issuer_not_found'),
    );
    const [batched] = await w.harness.applyVerifiedSignals([signal]);
    assert.equal(batched?.ok, false);
    assert.deepEqual(await w.harness.getView(w.pin.issuer, mission), viewAfterUnpin, 'nothing applied');
    assert.notDeepEqual(viewAfterUnpin, viewBefore, 'the unpin made the view stale');
    const seen = await w.engine.read((ex) =>
      ex.all('SELECT jti FROM msn_sets_seen WHERE jti = ?', ['jti-verified-before-the-unpin']),
    );
    assert.deepEqual(seen, [], 'the refused SET is not recorded as seen');
    // Pinned again with ANOTHER pin (a shorter reliance bound): the answer verified under the old
    // pin stays refused; a fresh one is fetched under the new pin, not by the old pin's client.
    const body = repinBody(w);
    const otherPin = { ...(body['pin'] as JsonObject), bounds: { max_stale_seconds: 45 } };
    const repinned = await w.call('POST', '/v1/missions/issuers', {
      token: w.admin,
      body: { ...body, pin: otherPin },
    });
    assert.equal(repinned.status, 201, repinned.text);
    assert.notEqual(repinned.body['pinDigest'], status.pinDigest);
    await assert.rejects(w.harness.applyVerifiedStatus(status), (err) =>
      isBatonError(err, 'mission_issuer_not_found'),
    );
    const fresh = await w.missions.fetchStatus(w.pin.issuer, mission);
    assert.equal(fresh.pinDigest, repinned.body['pinDigest']);
    assert.equal(
      Date.parse(fresh.freshUntil) - Date.parse(fresh.checkedAt),
      45_000,
      "verified by a client of the new pin (its max_stale_seconds), not the old pin's",
    );
    assert.equal((await w.harness.applyVerifiedStatus(fresh)).applied, true);
    assert.equal(w.harness.assessView(await w.harness.getView(w.pin.issuer, mission)).verdict, 'active');
  });

  test(`[${e.name}] a revoked view stays revoked through an unpin (final views are sticky)`, async (t) => {
    const w = await consumerWorld(t, e);
    const mission = await activeMission(w);
    const revoked = await w.issuer.admin(`/admin/missions/${mission}/revoke`, {});
    assert.equal(revoked.status, 200);
    await eventually(
      async () => (await w.harness.getView(w.pin.issuer, mission))?.state === 'revoked',
      'the revocation SET',
    );
    const before = await w.harness.getView(w.pin.issuer, mission);
    assert.equal((await w.call('DELETE', issuerPath(w), { token: w.admin })).body['status'], 'removed');
    assert.deepEqual(await w.harness.getView(w.pin.issuer, mission), before, 'untouched');
    const log = await issuerEvents(w);
    assert.equal((JSON.parse(log.bodies[1] ?? '') as JsonObject)['views_made_stale'], 0);
  });

  test(`[${e.name}] RFC 8936 a poll loop stops polling an issuer another server of the store unpinned`, async (t) => {
    const w = await consumerWorld(t, e);
    assert.equal((await w.pinIssuer({ poll: true })).status, 201);
    const [first] = await w.missions.pollAll();
    assert.equal(first?.issuer, w.pin.issuer);
    assert.equal(first?.error, null);
    const other = await w.restarted();
    assert.equal(await other.missions.unpin(w.pin.issuer, 'admin:other'), 'removed');
    assert.deepEqual(await w.missions.pollAll(), [], 'not polled any more');
    const repinned = await w.call('POST', '/v1/missions/issuers', {
      token: w.admin,
      body: pollBody(w),
    });
    assert.equal(repinned.status, 201, repinned.text);
    const [again] = await w.missions.pollAll();
    assert.deepEqual([again?.issuer, again?.error], [w.pin.issuer, null], 'polled again once pinned');
  });
}

test('baton missions unpin and AdminClient.unpinMissionIssuer: removed, then absent (admin); an operator is refused', async (t) => {
  const [e] = engines;
  assert.ok(e !== undefined);
  const w = await consumerWorld(t, e);
  assert.equal((await w.pinIssuer()).status, 201);
  const unpinCli = (token: string, ...more: string[]) =>
    baton(['missions', 'unpin', w.pin.issuer, '--url', w.url, '--token', token, ...more]);
  const operator = await unpinCli(w.operator);
  assert.notEqual(operator.code, 0);
  assert.match(operator.err, /forbidden/);
  assert.equal((await w.call('GET', issuerPath(w), { token: w.operator })).status, 200, 'still pinned');
  const usage = await baton(['missions', 'unpin', '--url', w.url, '--token', w.admin]);
  assert.equal(usage.code, 2, usage.err);
  const done = await unpinCli(w.admin);
  assert.equal(done.code, 0, done.err);
  assert.equal(done.out, `${w.pin.issuer}: removed\n`);
  const again = await unpinCli(w.admin, '--json');
  assert.equal(again.code, 0, again.err);
  assert.deepEqual(JSON.parse(again.out), { issuer: w.pin.issuer, status: 'absent' });
  const client = new AdminClient({ baseUrl: w.url, token: w.admin });
  assert.equal(
    (await w.call('POST', '/v1/missions/issuers', { token: w.admin, body: repinBody(w) })).status,
    201,
  );
  assert.deepEqual(await client.unpinMissionIssuer(w.pin.issuer), {
    issuer: w.pin.issuer,
    status: 'removed',
  });
  assert.deepEqual(await client.unpinMissionIssuer(w.pin.issuer), { issuer: w.pin.issuer, status: 'absent' });
});

function pollBody(w: ConsumerWorld): JsonObject {
  return {
    pin: {
      ...w.pin,
      stream: { delivery: 'urn:ietf:rfc:8936', endpoint: `${w.issuer.issuer.url}/ssf/poll` },
    } as unknown as JsonObject,
    pollBearerRef: `file:${w.dir}/poll-bearer`,
  };
}
