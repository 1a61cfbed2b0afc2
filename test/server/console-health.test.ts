/**
 * The console's overview and lineages list routes over real HTTP (issue 14 §3): the reconciler's
 * and the webhook receiver's health, refusals over time (kept in memory since the server started),
 * and GET /v1/lineages (keyset pages, a cursor it did not issue refused, operators only).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServeReconciler } from '../../src/cli/reconcile-wiring.js';
import { StatusSources } from '../../src/providers/index.js';
import { BackgroundReconciler } from '../../src/server/background-reconciler.js';
import { ReconcileHealth } from '../../src/server/health.js';
import { BUCKETS, BUCKET_MS, MAX_CODES, RefusalHistory } from '../../src/server/refusal-history.js';
import { assertProblem, createOccurrence, setupOverHttp, startApi, str, takeover } from './helpers.js';
import { openReconcileWorld, pay } from './reconcile-world.js';

test('reconciler health: no background reconciler here, the oldest unresolved occurrence from the store', async (t) => {
  const api = await startApi(t);
  const before = await api.call('GET', '/v1/health/reconciler', { token: api.operator });
  assert.equal(before.status, 200, before.text);
  assert.equal(before.body['background'], null);
  assert.equal(before.body['ticks'], 0);
  assert.equal(before.body['oldestUnresolvedEnteredAt'], null);
  assert.equal(before.body['now'], api.clock.wallMs());
  await setupOverHttp(api);
  const credential = await takeover(api, 'agent-h');
  const o = await createOccurrence(api, credential, 'inv-h-1');
  const entered = await api.call('POST', `/v1/occurrences/${str(o)}/enter`, { token: credential });
  assert.equal(entered.status, 200, entered.text);
  const after = await api.call('GET', '/v1/health/reconciler', { token: api.operator });
  const view = await api.service.getOccurrenceView(str(o));
  assert.equal(after.body['oldestUnresolvedEnteredAt'], view.enteredAt);
  assertProblem(await api.call('GET', '/v1/health/reconciler', { token: credential }), 403, 'forbidden');
  assertProblem(await api.call('GET', '/v1/health/reconciler'), 401, 'unauthenticated');
});

test('webhook health counts a refused delivery by result and names the last one', async (t) => {
  const api = await startApi(t);
  const before = await api.call('GET', '/v1/health/webhooks', { token: api.operator });
  assert.deepEqual(before.body['deliveriesByResult'], {});
  assert.equal(before.body['lastDelivery'], null);
  const hook = await api.call('POST', '/v1/webhooks/no-such-profile', { body: { id: 'evt_1' } });
  assertProblem(hook, 404, 'webhook_source_missing');
  const after = await api.call('GET', '/v1/health/webhooks', { token: api.operator });
  assert.equal(after.body['deliveries'], 1);
  assert.deepEqual(after.body['deliveriesByResult'], { no_source: 1 });
  assert.deepEqual(after.body['lastDelivery'], { at: api.clock.wallMs(), result: 'no_source' });
  assert.equal(after.body['lastRecordedAt'], null);
});

test('refusals over time: a refused request appears in the current bucket under its code', async (t) => {
  const api = await startApi(t);
  const bad = await api.call('GET', '/v1/occurrences?phase=bogus', { token: api.operator });
  assert.equal(bad.status, 400, bad.text);
  const code = bad.body['code'] as string;
  const h = await api.call('GET', '/v1/refusals/histogram', { token: api.operator });
  assert.equal(h.status, 200, h.text);
  assert.equal(h.body['bucketMs'], BUCKET_MS);
  const buckets = h.body['buckets'] as { from: number; total: number; byCode: Record<string, number> }[];
  const last = buckets.at(-1);
  assert.ok(last !== undefined && (last.byCode[code] ?? 0) >= 1, JSON.stringify(h.body));
  assert.ok(
    last.from <= (h.body['now'] as number) && (h.body['since'] as number) <= (h.body['now'] as number),
  );
});

test('RefusalHistory stays bounded: old buckets drop out of the window, extra codes fold into other', () => {
  const t0 = 1_800_000_000_000 - (1_800_000_000_000 % BUCKET_MS);
  const h = new RefusalHistory(t0);
  h.record('a', t0);
  h.record('a', t0 + 1);
  for (let i = 0; i < MAX_CODES + 5; i++) h.record(`code_${i}`, t0 + BUCKET_MS);
  let v = h.view(t0 + BUCKET_MS);
  assert.deepEqual(v.buckets[0], { from: t0, total: 2, byCode: { a: 2 } });
  assert.equal(v.buckets[1]?.total, MAX_CODES + 5);
  assert.equal(Object.keys(v.buckets[1]?.byCode ?? {}).length, MAX_CODES + 1);
  assert.equal(v.buckets[1]?.byCode['other'], 5);
  // A full ring later the first bucket's slot is reused, and the window no longer shows either.
  h.record('b', t0 + BUCKETS * BUCKET_MS);
  v = h.view(t0 + BUCKETS * BUCKET_MS);
  assert.deepEqual(
    v.buckets.map((b) => [b.from, b.total]),
    [
      [t0 + BUCKET_MS, MAX_CODES + 5],
      [t0 + BUCKETS * BUCKET_MS, 1],
    ],
  );
  // A clock step back into a reused slot is not counted in a bucket it does not belong to.
  h.record('late', t0);
  assert.equal(h.view(t0 + BUCKETS * BUCKET_MS).buckets.at(-1)?.total, 1);
});

test('ReconcileHealth records ticks, lookups by source and verdict, and deliveries', () => {
  let now = 1_000;
  const h = new ReconcileHealth(() => now);
  h.backgroundStarted(500, 4);
  now = 2_000;
  h.lookup('lookup_by_key', 'effective');
  h.lookup('lookup_by_key', 'not_found_within_retention');
  h.tick(2);
  now = 3_000;
  h.delivery('recorded');
  h.delivery('stale');
  assert.deepEqual(h.reconciler(), {
    since: 1_000,
    background: { everyMs: 500, concurrency: 4 },
    ticks: 1,
    lastTickAt: 2_000,
    lastTickAsked: 2,
    lookups: 2,
    lastLookupAt: 2_000,
    lookupsBySourceKind: { lookup_by_key: 2 },
    answersByVerdict: { effective: 1, not_found_within_retention: 1 },
  });
  assert.deepEqual(h.webhooks(), {
    since: 1_000,
    deliveries: 2,
    deliveriesByResult: { recorded: 1, stale: 1 },
    lastDelivery: { at: 3_000, result: 'stale' },
    lastRecordedAt: 3_000,
  });
});

test('GET /v1/lineages pages every lineage in id order by cursor; a foreign cursor is refused', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  const credential = await takeover(api, 'agent-c');
  await takeover(api, 'agent-a');
  await takeover(api, 'agent-b');
  await takeover(api, 'agent-a'); // a second generation
  const first = await api.call('GET', '/v1/lineages?limit=2', { token: api.operator });
  assert.equal(first.status, 200, first.text);
  const ids = (first.body['lineages'] as { id: string; generation: number }[]).map((l) => [
    l.id,
    l.generation,
  ]);
  assert.deepEqual(ids, [
    ['agent-a', 2],
    ['agent-b', 1],
  ]);
  const cursor = first.body['nextCursor'] as string;
  const second = await api.call('GET', `/v1/lineages?limit=2&cursor=${cursor}`, { token: api.operator });
  assert.deepEqual(
    (second.body['lineages'] as { id: string }[]).map((l) => l.id),
    ['agent-c'],
  );
  assert.equal(second.body['nextCursor'], null);
  const forged = Buffer.from('{"offset":0}').toString('base64url');
  assertProblem(
    await api.call('GET', `/v1/lineages?cursor=${forged}`, { token: api.operator }),
    400,
    'input_invalid',
  );
  assertProblem(
    await api.call('GET', '/v1/lineages?limit=501', { token: api.operator }),
    400,
    'input_invalid',
  );
  assertProblem(await api.call('GET', '/v1/lineages', { token: credential }), 403, 'forbidden');
});

test('the background reconciler feeds the health its passes and answers (the real sandbox, unsigned answers)', async (t) => {
  const w = await openReconcileWorld(t, { engine: 'sqlite', webhooks: false });
  await pay(w, 'inv-health', ['drop_response_after_apply']);
  w.sandbox.addFault('all', 'unsigned'); // the answers prove nothing: the occurrence stays unresolved
  const bg = new BackgroundReconciler({
    engine: w.opened.engine,
    service: w.svc,
    sources: new StatusSources({ keys: w.keys, clock: w.clock }),
    clock: w.clock,
    everyMs: 1000,
    metrics: w.reconcileMetrics,
  });
  assert.equal(await bg.tick(), 1);
  const h = w.reconcileMetrics.health.reconciler();
  assert.equal(h.ticks, 1);
  assert.equal(h.lastTickAt, w.clock.wallMs());
  assert.equal(h.lastTickAsked, 1);
  assert.equal(
    h.lookups,
    Object.values(h.lookupsBySourceKind).reduce((a, b) => a + b, 0),
  );
  assert.ok(h.lookups >= 1);
  assert.deepEqual(Object.keys(h.answersByVerdict), ['unauthenticated']);
  assert.equal(h.background, null, 'no serve reconciler was started');
  const errors: unknown[] = [];
  const serve = startServeReconciler({
    engine: w.opened.engine,
    service: w.svc,
    keys: w.keys,
    clock: w.clock,
    everyMs: 3_600_000,
    concurrency: 2,
    metrics: w.reconcileMetrics,
    onError: (e) => errors.push(e),
  });
  await serve.stop();
  assert.deepEqual(errors, []);
  assert.deepEqual(w.reconcileMetrics.health.reconciler().background, { everyMs: 3_600_000, concurrency: 2 });
});
