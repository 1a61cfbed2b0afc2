/**
 * A7#13 "429 ⇒ Retry-After honoured" (and a 503's Retry-After, RFC 9110 §10.2.3) in a real Baton app against the real reference issuer on
 * loopback, one injected clock for both: after a 429 with `Retry-After: 7`, neither the operator's
 * check nor the harness's fetch before a dispatch sends anything to that issuer (for any of its
 * Missions: the issuer's limit is per consumer) until 7 s passed on the clock; meanwhile each
 * answers `rate_limited` at once and nothing becomes active. Then the next check fetches again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import type { JsonObject } from '../../src/core/json.js';
import { assertProblem } from '../server/helpers.js';
import { enginesUnderTest } from '../store/engines.js';
import { consumerWorld, type ConsumerWorld } from './consumer-world.js';

const engines = await enginesUnderTest();

const checkPath = (w: ConsumerWorld, mission: string): string =>
  `/v1/missions/${encodeURIComponent(w.pin.issuer)}/${mission}/check`;

async function executor(w: ConsumerWorld): Promise<string> {
  const taken = await w.call('POST', '/v1/lineages/invoice-agent/takeover', { token: w.operator });
  assert.equal(taken.status, 201, taken.text);
  return taken.body['credential'] as string;
}

async function enqueue(w: ConsumerWorld, cred: string, binding: JsonObject, key: string): Promise<string> {
  const made = await w.call('POST', '/v1/harness/items', {
    token: cred,
    body: {
      kind: 'queue_item',
      action_class: 'consequential_write',
      mission_binding: binding,
      idempotency_key: key,
    },
  });
  assert.equal(made.status, 201, made.text);
  return made.body['id'] as string;
}

const details = (a: { body: JsonObject }): JsonObject => (a.body['details'] ?? {}) as JsonObject;

for (const e of engines) {
  test(`[${e.name}] A7#13: a 429's Retry-After holds every Status fetch to that issuer until it passed`, async (t) => {
    const clock = new ManualClock(Date.now());
    const w = await consumerWorld(t, e, { clock });
    const mission = await w.issuer.createMission();
    const other = await w.issuer.createMission();
    assert.equal((await w.pinIssuer()).status, 201);
    const cred = await executor(w);
    const item = await enqueue(w, cred, w.binding(mission), 'pay-1');
    const sent = (): number => w.issuer.issuer.state.statusRequests;

    await w.issuer.admin('/admin/faults', { status: ['http_429'] });
    const limited = await w.call('POST', checkPath(w, mission), { token: w.operator });
    assertProblem(limited, 503, 'mission_status_unavailable');
    assert.deepEqual(
      [details(limited)['reason'], details(limited)['httpStatus'], details(limited)['retryAfterSec']],
      ['rate_limited', 429, 7],
    );
    const afterLimit = sent();

    clock.advance(6_000);
    // The operator's check, for another Mission of the same issuer: nothing sent.
    const held = await w.call('POST', checkPath(w, other), { token: w.operator });
    assertProblem(held, 503, 'mission_status_unavailable');
    assert.deepEqual(
      [
        details(held)['reason'],
        details(held)['backedOff'],
        details(held)['httpStatus'],
        details(held)['retryAfterSec'],
      ],
      ['rate_limited', true, null, 1],
    );
    // The harness's fetch before a dispatch on an unknown view: nothing sent, the item pauses.
    const d = await w.call('POST', '/v1/harness/dispatch', { token: cred, body: { itemId: item } });
    assertProblem(d, 503, 'mission_status_unavailable');
    assert.equal(details(d)['statusError'], 'mission_status_unavailable', 'the refresh failed: held');
    assert.equal(sent(), afterLimit, 'inside Retry-After Baton sends no Status request to the issuer');
    assert.equal((await w.harness.getItem(item)).state, 'paused');
    assert.equal(await w.harness.getView(w.pin.issuer, mission), undefined, 'no view from a held check');
    assert.equal(await w.harness.getView(w.pin.issuer, other), undefined);

    clock.advance(1_000);
    const again = await w.call('POST', checkPath(w, mission), { token: w.operator });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual([again.body['state'], again.body['active']], ['active', true]);
    assert.equal(sent(), afterLimit + 1, 'once Retry-After passed, Status is asked again');

    const metrics = (await w.call('GET', '/metrics')).text;
    for (const [result, n] of [
      ['rate_limited', 1],
      ['backed_off', 2],
      ['active', 1],
    ] as const)
      assert.match(metrics, new RegExp(`baton_mission_checks_total\\{result="${result}"\\} ${n}\\n`));
  });
}

for (const e of engines) {
  test(`[${e.name}] a 503's Retry-After holds every Status fetch to that issuer; the Mission stays unusable`, async (t) => {
    const clock = new ManualClock(Date.now());
    const w = await consumerWorld(t, e, { clock });
    const mission = await w.issuer.createMission();
    const other = await w.issuer.createMission();
    assert.equal((await w.pinIssuer()).status, 201);
    const cred = await executor(w);
    const item = await enqueue(w, cred, w.binding(other), 'pay-503');
    const sent = (): number => w.issuer.issuer.state.statusRequests;

    await w.issuer.admin('/admin/faults', { status: ['http_503_retry_after'] });
    const down = await w.call('POST', checkPath(w, mission), { token: w.operator });
    assertProblem(down, 503, 'mission_status_unavailable');
    assert.deepEqual(
      [details(down)['reason'], details(down)['httpStatus'], details(down)['retryAfterSec']],
      ['unavailable', 503, 9],
    );
    const afterDown = sent();

    clock.advance(8_000);
    const held = await w.call('POST', checkPath(w, other), { token: w.operator });
    assertProblem(held, 503, 'mission_status_unavailable');
    assert.deepEqual(
      [details(held)['reason'], details(held)['backedOff'], details(held)['retryAfterSec']],
      ['unavailable', true, 1],
    );
    const d = await w.call('POST', '/v1/harness/dispatch', { token: cred, body: { itemId: item } });
    assertProblem(d, 503, 'mission_status_unavailable');
    assert.equal(sent(), afterDown, "inside the 503's Retry-After Baton sends no Status request");
    assert.equal((await w.harness.getItem(item)).state, 'paused');
    assert.equal(await w.harness.getView(w.pin.issuer, other), undefined, 'no view from a held check');

    clock.advance(1_000);
    const again = await w.call('POST', checkPath(w, other), { token: w.operator });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual([again.body['state'], again.body['active']], ['active', true]);
    assert.equal(sent(), afterDown + 1, 'once Retry-After passed, Status is asked again');

    const metrics = (await w.call('GET', '/metrics')).text;
    for (const [result, n] of [
      ['unavailable', 1],
      ['backed_off', 2],
      ['active', 1],
    ] as const)
      assert.match(metrics, new RegExp(`baton_mission_checks_total\\{result="${result}"\\} ${n}\\n`));
  });
}
