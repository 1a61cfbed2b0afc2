/**
 * A Status refresh the harness fails closed on is not swallowed (A3.1 step 3, A3.5): a dispatch on
 * an unknown view whose origin is not pinned (`mission_issuer_not_found`) still pauses the item,
 * and the dispatch's answer (`details.statusError`), the stop's `work_state_changed` event on the
 * item's chain (`status_error`) and the consumer's error listener (what `serve` logs) name it.
 * A real Baton app and the real reference issuer on loopback, on each engine.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isBatonError } from '../../src/core/errors.js';
import type { JsonObject } from '../../src/core/json.js';
import { workSubject } from '../../src/missions/index.js';
import { assertProblem } from '../server/helpers.js';
import { enginesUnderTest } from '../store/engines.js';
import { consumerWorld, type ConsumerWorld } from './consumer-world.js';

const engines = await enginesUnderTest();

async function executor(w: ConsumerWorld): Promise<string> {
  const taken = await w.call('POST', '/v1/lineages/invoice-agent/takeover', { token: w.operator });
  assert.equal(taken.status, 201, taken.text);
  return taken.body['credential'] as string;
}

const details = (a: { body: JsonObject }): JsonObject => (a.body['details'] ?? {}) as JsonObject;

for (const e of engines) {
  test(`[${e.name}] a failed Status refresh still pauses, and its code reaches the caller, the chain and the log`, async (t) => {
    const reported: { error: unknown; what: string }[] = [];
    const w = await consumerWorld(t, e, { onError: (error, what) => reported.push({ error, what }) });
    assert.equal((await w.pinIssuer()).status, 201);
    const cred = await executor(w);
    const unpinned = 'https://nobody.example';
    const binding = { ...w.binding('msn_unpinned0000000000000000'), mission_origin: unpinned };
    const made = await w.call('POST', '/v1/harness/items', {
      token: cred,
      body: { kind: 'queue_item', action_class: 'consequential_write', mission_binding: binding },
    });
    assert.equal(made.status, 201, made.text);
    const item = made.body['id'] as string;
    const d = await w.call('POST', '/v1/harness/dispatch', { token: cred, body: { itemId: item } });
    assertProblem(d, 503, 'mission_status_unavailable');
    assert.equal(details(d)['statusError'], 'mission_issuer_not_found');
    assert.equal((await w.harness.getItem(item)).state, 'paused', 'still fails closed');
    const changed = (await w.harness.events(workSubject(item))).filter(
      (x) => x.type === 'work_state_changed',
    );
    assert.deepEqual(
      changed.map((x) => (x.body as JsonObject)['status_error']),
      ['mission_issuer_not_found'],
    );
    assert.equal(reported.length, 1);
    assert.ok(isBatonError(reported[0]?.error, 'mission_issuer_not_found'));
    assert.equal(reported[0]?.what, `status refresh ${unpinned}#msn_unpinned0000000000000000`);
  });
}
