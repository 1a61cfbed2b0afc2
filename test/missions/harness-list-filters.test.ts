/**
 * `GET /v1/harness/items` filters over real HTTP on both engines: a filter is applied or refused,
 * never dropped. `origin` and `mission` go together (one without the other is `400 input_invalid`,
 * not "every item"); `state` is a comma-separated list of item states, each a known one (an
 * unknown or empty state is `400 input_invalid`, not an empty page).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { enginesUnderTest } from '../store/engines.js';
import { assertProblem, str } from '../server/helpers.js';
import { binding, MISSION, ORIGIN, T0, verifiedSignal } from './fixtures.js';
import { servedWorld } from './http-world.js';

const engines = await enginesUnderTest();

for (const e of engines) {
  test(`[${e.name}] GET /v1/harness/items: origin and mission together, known states only; a half or bad filter is 400 input_invalid`, async (t) => {
    const w = await servedWorld(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const a = await w.takeover('agent-a');
    const other = { ...binding, mission_id: 'msn_other_Q3x9vT2pL7mN4kR8sB1yZ' };
    const ids: Record<string, string> = {};
    for (const [name, b] of [
      ['mine', binding],
      ['theirs', other],
    ] as const) {
      const r = await w.call('POST', '/v1/harness/items', {
        token: a,
        body: { kind: 'queue_item', action_class: 'consequential_write', mission_binding: b },
      });
      assert.equal(r.status, 201, r.text);
      ids[name] = str(r.body);
    }
    await w.harness.stop(ids['theirs'] ?? '', 'suppress', 'operator');
    const list = (q: string) => w.call('GET', `/v1/harness/items?${q}`, { token: w.operator });
    const idsOf = (body: JsonObject) => (body['items'] as JsonObject[]).map((i) => i['id']);
    const origin = `origin=${encodeURIComponent(ORIGIN)}`;

    const both = await list(`${origin}&mission=${MISSION}`);
    assert.equal(both.status, 200, both.text);
    assert.deepEqual(idsOf(both.body), [ids['mine']]);
    const states = await list('state=queued,suppressed');
    assert.equal(states.status, 200, states.text);
    assert.deepEqual(new Set(idsOf(states.body)), new Set([ids['mine'], ids['theirs']]));
    assert.deepEqual(idsOf((await list('state=suppressed')).body), [ids['theirs']]);

    for (const q of [
      `mission=${MISSION}`,
      origin,
      `${origin}&mission=`,
      `origin=&mission=${MISSION}`,
      'state=',
      'state=bogus',
      'state=queued,bogus',
      'state=queued,',
      'state=,queued',
      'state=QUEUED',
      `state=queued&mission=${MISSION}`,
    ]) {
      const r = await list(q);
      assertProblem(r, 400, 'input_invalid');
      assert.equal(typeof (r.body['details'] as JsonObject | undefined)?.['path'], 'string', q);
    }
    // The OpenAPI document lists the rule the route enforces.
    const doc = (await w.call('GET', '/openapi.json')).body as {
      paths: Record<string, { get: { parameters: { name: string; schema: JsonObject }[] } }>;
    };
    const params = doc.paths['/v1/harness/items']?.get.parameters ?? [];
    const pattern = params.find((p) => p.name === 'state')?.schema['pattern'];
    assert.equal(typeof pattern, 'string');
    const re = new RegExp(pattern as string);
    assert.ok(re.test('queued,handed_off') && !re.test('queued,') && !re.test('bogus'));
  });
}
