/**
 * `executor.harness` (issue 11 §5): an executor's governed sessions and work through both SDK
 * clients, over real HTTP (127.0.0.1) and in process on the same SQLite store, with the same
 * answers: work is created in the executor's lineage, a dispatch passes the A3.1 check, a pushed
 * revocation stops queued work (committed, evidenced) and refuses new work, retries keep the
 * idempotency key, sub-agents are spawned under their parent, another lineage's items are not
 * found, and a retired generation is refused. Mission views are driven with pre-verified SETs.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { HttpBatonClient } from '../../src/client/http.js';
import { InProcessBatonClient } from '../../src/client/in-process.js';
import type { BatonClient } from '../../src/client/types.js';
import { isBatonError } from '../../src/core/errors.js';
import { binding, verifiedSignal } from '../missions/fixtures.js';
import { setupOverHttp, startApi } from '../server/helpers.js';

type Api = Awaited<ReturnType<typeof startApi>>;

const clients: [string, (api: Api) => BatonClient][] = [
  ['http', (api) => new HttpBatonClient({ baseUrl: api.url, token: api.operator })],
  ['in-process', (api) => new InProcessBatonClient({ service: api.service, harness: api.harness })],
];

async function ready(t: TestContext): Promise<Api> {
  const api = await startApi(t);
  await setupOverHttp(api);
  await api.harness.applyVerifiedSignal(verifiedSignal('active', 1, api.clock.wallMs()));
  return api;
}

const refusedWith = (code: string) => (e: unknown) => isBatonError(e) && e.code === code;

for (const [name, make] of clients) {
  test(`[${name}] executor.harness: enqueue, dispatch, retry, spawn; a revocation stops queued work, committed`, async (t) => {
    const api = await ready(t);
    const client = make(api);
    const executor = await client.takeover('invoice-agent');
    const h = executor.harness;
    const session = await h.session(binding);
    assert.equal(session.lineage, 'invoice-agent');
    const item = await h.enqueue({
      action_class: 'consequential_write',
      mission_binding: binding,
      session_id: session.id,
      idempotency_key: 'pay-7',
    });
    assert.deepEqual([item.lineage, item.state, item.kind], ['invoice-agent', 'queued', 'queue_item']);
    const dispatched = await h.dispatch(item.id);
    assert.equal(dispatched.item.state, 'running');
    const child = await h.spawn(
      item.id,
      {
        actor: { client_id: 'agent-7' },
        parent_mission: { id: binding.mission_id, origin: binding.mission_origin },
        governed_by: { kind: 'parent_mission' },
      },
      { action_class: 'consequential_read', mission_binding: binding },
    );
    assert.deepEqual(
      [child.kind, child.parentId, child.lineage],
      ['subagent_handle', item.id, 'invoice-agent'],
    );
    // A3.8: a retry follows a completion or a stop, and keeps the idempotency key.
    assert.equal((await h.complete(item.id)).state, 'done');
    const retried = await h.retry(item.id);
    assert.deepEqual([retried.retryOf, retried.idempotencyKey, retried.state], [item.id, 'pay-7', 'queued']);
    // A pushed revocation stops the queued retry at once (A3.7), committed with its evidence; its
    // resume is then refused, and new work under the Mission is created suppressed, with its
    // evidence, never queued (HAR-13, A7#14), so it is never dispatched.
    await api.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, api.clock.wallMs()));
    const after = await h.get(retried.id);
    assert.equal(after.item.state, 'suppressed');
    assert.ok(after.evidence.some((e) => e['type'] === 'harness_evidence'));
    await assert.rejects(h.resume(retried.id), refusedWith('work_item_not_dispatchable'));
    const late = await h.enqueue({ action_class: 'consequential_write', mission_binding: binding });
    assert.equal(late.state, 'suppressed');
    assert.ok((await h.get(late.id)).evidence.some((e) => e['type'] === 'harness_evidence'));
    await assert.rejects(h.dispatch(late.id), refusedWith('work_item_not_dispatchable'));
    assert.equal((await h.get(late.id)).item.state, 'suppressed', 'never dispatched');
    const read = await h.getSession(session.id);
    assert.equal(read.session.id, session.id);
  });

  test(`[${name}] executor.harness: another lineage's work is not found, and a retired generation is refused`, async (t) => {
    const api = await ready(t);
    const client = make(api);
    const first = await client.takeover('invoice-agent');
    const item = await first.harness.enqueue({
      action_class: 'consequential_write',
      mission_binding: binding,
    });
    const other = await client.takeover('other-agent');
    await assert.rejects(other.harness.dispatch(item.id), refusedWith('work_item_not_found'));
    await assert.rejects(other.harness.get(item.id), refusedWith('work_item_not_found'));
    const successor = await client.takeover('invoice-agent');
    await assert.rejects(first.harness.dispatch(item.id), refusedWith('generation_retired'));
    await assert.rejects(
      first.harness.enqueue({ action_class: 'consequential_write', mission_binding: binding }),
      refusedWith('generation_retired'),
    );
    assert.equal((await successor.harness.get(item.id)).item.state, 'queued', 'the refusal changed nothing');
    assert.equal((await successor.harness.dispatch(item.id)).item.state, 'running');
  });
}

test('[in-process] executor.harness without a harness is refused unavailable, not silently skipped', async (t) => {
  const api = await ready(t);
  const executor = await new InProcessBatonClient({ service: api.service }).takeover('invoice-agent');
  await assert.rejects(
    executor.harness.enqueue({ action_class: 'consequential_write', mission_binding: binding }),
    refusedWith('unavailable'),
  );
});
