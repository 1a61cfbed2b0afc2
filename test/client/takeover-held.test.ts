/**
 * The SDK's `Executor.held` (Mission build spec A6): both clients hand the successor the lineage's
 * held harness items the takeover listed, over real HTTP (127.0.0.1) and in-process on the same
 * real SQLite file; a resumed executor holds none (it was not a takeover). And the harness routes
 * that make those items record their durations in /metrics as every other command does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setupOverHttp, startApi, str, takeover, type Api } from '../server/helpers.js';
import { binding, verifiedSignal } from '../missions/fixtures.js';
import { HttpBatonClient } from '../../src/client/http.js';
import { InProcessBatonClient } from '../../src/client/in-process.js';

/** A queued, Mission-bound payment of the lineage `invoice-agent`. */
const queuedPayment = (key: string) => ({
  kind: 'queue_item',
  action_class: 'consequential_write',
  mission_binding: binding,
  idempotency_key: key,
  lineage: 'invoice-agent',
});

async function heldItem(api: Api, key: string, decision: 'pause' | 'suppress'): Promise<string> {
  const cred = await takeover(api, 'invoice-agent');
  const made = await api.call('POST', '/v1/harness/items', { token: cred, body: queuedPayment(key) });
  assert.equal(made.status, 201, made.text);
  const id = str(made.body);
  const stop = await api.call('POST', `/v1/harness/items/${id}/stop`, {
    token: api.operator,
    body: { decision },
  });
  assert.equal(stop.status, 200, stop.text);
  return id;
}

test('A6 Executor.held: the HTTP and in-process clients list the held items the takeover returned', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  await api.harness.applyVerifiedSignal(verifiedSignal('active', 1, api.clock.wallMs()));
  const paused = await heldItem(api, 'pay-1', 'pause');
  const suppressed = await heldItem(api, 'pay-2', 'suppress');
  const expected = [
    [paused, 'paused'],
    [suppressed, 'suppressed'],
  ].sort();

  const http = new HttpBatonClient({ baseUrl: api.url, token: api.operator });
  const overHttp = await http.takeover('invoice-agent');
  assert.deepEqual(overHttp.held.map((h) => [h.id, h.state]).sort(), expected);
  assert.ok(overHttp.held.every((h) => h.actionClass === 'consequential_write' && h.version > 0));
  assert.deepEqual(http.resume(overHttp.binding()).held, []);

  const local = new InProcessBatonClient({ service: api.service });
  const inProcess = await local.takeover('invoice-agent');
  assert.equal(inProcess.generation, overHttp.generation + 1);
  assert.deepEqual(inProcess.held.map((h) => [h.id, h.state]).sort(), expected);
  assert.deepEqual(local.resume(inProcess.binding()).held, []);
});

test('the harness routes record their duration like every other command (/metrics operation labels)', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  await api.harness.applyVerifiedSignal(verifiedSignal('active', 1, api.clock.wallMs()));
  const id = await heldItem(api, 'pay-1', 'suppress');
  assert.equal((await api.call('GET', `/v1/harness/items/${id}`, { token: api.operator })).status, 200);
  assert.equal((await api.call('GET', '/v1/harness/items', { token: api.operator })).status, 200);
  const text = await api.metrics.render(undefined);
  for (const op of ['harness_create', 'harness_stop', 'harness_get_item', 'harness_list_items'])
    assert.match(
      text,
      new RegExp(`baton_transaction_duration_seconds_count\\{operation="${op}"\\} 1\\b`),
      op,
    );
});

test('A6 a takeover lists at most 1,000 held items and says when there are more (heldMore), never silently fewer', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  await api.harness.applyVerifiedSignal(verifiedSignal('active', 1, api.clock.wallMs()));
  const local = new InProcessBatonClient({ service: api.service });
  const hold = async (n: number): Promise<void> => {
    const item = await api.harness.createItem(queuedPayment(`pay-${n}`), 'operator');
    await api.harness.stop(item.id, 'suppress', 'operator');
  };
  for (let n = 0; n < 1000; n += 1) await hold(n);
  const full = await local.takeover('invoice-agent');
  assert.equal(full.held.length, 1000);
  assert.equal(full.heldMore, false, 'exactly a page: nothing more');
  await hold(1000);
  const over = await new HttpBatonClient({ baseUrl: api.url, token: api.operator }).takeover('invoice-agent');
  assert.equal(over.held.length, 1000);
  assert.equal(over.heldMore, true, 'the 1,001st item is announced, not dropped silently');
  assert.equal(new Set(over.held.map((h) => h.id)).size, 1000);
});
