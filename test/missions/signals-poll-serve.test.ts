/**
 * RFC 8936 poll from a pinned issuer (A2.5, A3.4, A3.5) on both engines: the consumer polls the
 * real reference issuer with the bearer its `pollBearerRef` names, applies the lifecycle SETs
 * through the harness, acknowledges only what it applied, and records stream liveness. The jti
 * replay table is in the store, so a restarted Baton (a second harness and consumer over the same
 * database) that is handed the unacknowledged SETs again answers them as duplicates: nothing is
 * applied twice (HAR-10, C-A18).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { missionSubject } from '../../src/missions/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { consumerWorld } from './consumer-world.js';

const engines = await enginesUnderTest();

for (const e of engines) {
  test(`[${e.name}] HAR-10 HAR-13 RFC 8936: polled SETs apply, a revocation suppresses queued work, a restart reapplies nothing`, async (t) => {
    const w = await consumerWorld(t, e);
    const pinned = await w.pinIssuer({ poll: true });
    assert.equal(pinned.status, 201, pinned.text);
    assert.equal(pinned.body['streamLive'], false, 'nothing heard yet');
    const mission = await w.issuer.createMission();
    const [round] = await w.missions.pollAll();
    assert.deepEqual(round, { issuer: w.pin.issuer, applied: 1, duplicates: 0, refused: 0, error: null });
    assert.equal((await w.harness.getView(w.pin.issuer, mission))?.state, 'active');
    const made = await w.call('POST', '/v1/harness/items', {
      token: w.operator,
      body: {
        kind: 'queue_item',
        action_class: 'consequential_write',
        mission_binding: w.binding(mission),
        idempotency_key: 'pay-1',
      },
    });
    assert.equal(made.status, 201, made.text);
    await w.issuer.admin(`/admin/missions/${mission}/revoke`, {});
    // Polled by this Baton, applied, not yet acknowledged (the ack rides on the next poll).
    const [second] = await w.missions.pollAll();
    assert.equal(second?.applied, 1);
    const item = await w.call('GET', `/v1/harness/items/${made.body['id'] as string}`, { token: w.operator });
    assert.equal((item.body['item'] as JsonObject)['state'], 'suppressed');
    const listed = await w.call('GET', '/v1/missions/issuers', { token: w.operator });
    const row = (listed.body['issuers'] as JsonObject[])[0]!;
    assert.equal(row['streamLive'], true);
    assert.equal(row['lastPollError'], null);

    const restarted = await w.restarted();
    const [again] = await restarted.missions.pollAll();
    assert.deepEqual(
      [again?.applied, again?.duplicates],
      [0, 1],
      'the unacknowledged revocation is handed out again and recognised as a duplicate',
    );
    const events = await restarted.harness.events(missionSubject(w.pin.issuer, mission));
    assert.equal(events.filter((x) => x.type === 'mission_signal_applied').length, 2);
    assert.equal(events.filter((x) => x.type === 'mission_signal_duplicate').length, 1);
  });

  test(`[${e.name}] A7.13: a poll stream that fails is recorded (lastPollError), never fatal, nothing applied`, async (t) => {
    const w = await consumerWorld(t, e);
    assert.equal((await w.pinIssuer({ poll: true })).status, 201);
    await w.issuer.close();
    const [round] = await w.missions.pollAll();
    assert.equal(round?.error, 'unavailable');
    const listed = await w.call('GET', '/v1/missions/issuers', { token: w.operator });
    const row = (listed.body['issuers'] as JsonObject[])[0]!;
    assert.equal(row['lastPollError'], 'unavailable');
    assert.equal(row['streamLive'], false);
  });
}
