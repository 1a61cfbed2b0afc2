/**
 * Health, readiness, Prometheus metrics and the OpenAPI document, over real HTTP.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { OccurrencesService } from '../../src/occurrences/index.js';
import { buildServer } from '../../src/server/index.js';
import { migrate } from '../../src/store/migrations.js';
import { migrations } from '../../src/store/migrations/index.js';
import { occurrencesUnitOfWork } from '../../src/store/occurrences.js';
import { openSqliteEngine } from '../../src/store/sqlite.js';
import { parseExposition, value, type Sample } from './exposition.js';
import { createOccurrence, setupOverHttp, startApi, str, takeover } from './helpers.js';

test('healthz and readyz', async (t) => {
  const api = await startApi(t);
  assert.deepEqual((await api.call('GET', '/healthz')).body, { status: 'ok' });
  const ready = await api.call('GET', '/readyz');
  assert.equal(ready.status, 200);
  assert.deepEqual(ready.body, { status: 'ready', schemaVersion: Math.max(...migrations.map((m) => m.id)) });
});

test('readyz is 503 on a store that lacks a migration', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-ready-'));
  const engine = openSqliteEngine(join(dir, 'old.db'));
  await migrate(engine, { list: migrations.slice(0, -1) });
  const service = new OccurrencesService({
    uow: occurrencesUnitOfWork(engine),
    domainKey: { kid: 'sha256:00', publicKey: 'AA' },
  });
  const app = buildServer({ engine, service });
  t.after(async () => {
    await app.close();
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const answer = await app.inject({ method: 'GET', url: '/readyz' });
  assert.equal(answer.statusCode, 503);
  const body = JSON.parse(answer.body) as JsonObject;
  assert.equal(body['code'], 'unavailable');
  assert.deepEqual((body['details'] as JsonObject)['missing'], [migrations.at(-1)?.id]);
});

test('metrics are valid Prometheus text and count entries, refusals and unresolved work', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  const cred = await takeover(api, 'metered');
  const scrape = async () => {
    const m = await api.call('GET', '/metrics');
    assert.equal(m.status, 200);
    assert.match(m.type, /^text\/plain; version=0\.0\.4/);
    return parseExposition(m.text).samples;
  };
  const before = await scrape();
  const occ = await createOccurrence(api, cred, 'm-1');
  await api.call('POST', `/v1/occurrences/${str(occ)}/enter`, { token: cred });
  await api.call('POST', `/v1/occurrences/${str(occ)}/enter`, { token: cred });
  await api.call('GET', '/v1/counts');
  const after = await scrape();
  assert.equal(
    value(after, 'baton_provider_entries_total') - value(before, 'baton_provider_entries_total'),
    1,
  );
  const refusals = (code: string, s: Sample[]) => value(s, 'baton_refusals_total', { code });
  assert.equal(refusals('already_entered', after) - refusals('already_entered', before), 1);
  assert.equal(refusals('unauthenticated', after) - refusals('unauthenticated', before), 1);
  assert.equal(value(after, 'baton_unresolved_occurrences'), (await api.service.counts()).unresolved);
  assert.equal(value(after, 'baton_unresolved_occurrences'), 1);
  assert.equal(value(after, 'baton_store_up'), 1);
  // SQLite's group commit: every committed transaction went out in some COMMIT, several per one at most.
  const commits = value(after, 'baton_store_commits_total');
  const committed = value(after, 'baton_store_committed_transactions_total');
  assert.ok(commits > value(before, 'baton_store_commits_total'), 'the enter was committed');
  assert.ok(committed >= commits, `${committed} transactions in ${commits} COMMITs`);
  assert.ok(value(after, 'baton_store_largest_commit_batch') >= 1);
  // The histogram: cumulative buckets, +Inf equal to the count, for the enter transaction.
  const buckets = after.filter(
    (s) => s.name === 'baton_transaction_duration_seconds_bucket' && s.labels['operation'] === 'enter',
  );
  assert.ok(buckets.length > 2);
  for (let i = 1; i < buckets.length; i++)
    assert.ok((buckets[i]?.value ?? 0) >= (buckets[i - 1]?.value ?? 0));
  assert.equal(buckets.at(-1)?.labels['le'], '+Inf');
  assert.equal(
    buckets.at(-1)?.value,
    value(after, 'baton_transaction_duration_seconds_count', { operation: 'enter' }),
  );
  assert.equal(buckets.at(-1)?.value, 2, 'both enter transactions were timed');
  t.diagnostic(`checked ${after.length} samples`);
});

test('the OpenAPI document is OpenAPI 3.1 and lists every route with its schemas', async (t) => {
  const api = await startApi(t);
  const doc = (await api.call('GET', '/openapi.json')).body;
  assert.equal(doc['openapi'], '3.1.0');
  assert.equal(typeof (doc['info'] as JsonObject)['version'], 'string');
  const schemes = (doc['components'] as JsonObject)['securitySchemes'] as JsonObject;
  assert.deepEqual(schemes['bearer'], {
    ...(schemes['bearer'] as JsonObject),
    type: 'http',
    scheme: 'bearer',
  });
  const ids = new Set<string>();
  let n = 0;
  for (const [path, ops] of Object.entries(doc['paths'] as Record<string, Record<string, JsonObject>>)) {
    for (const [method, op] of Object.entries(ops)) {
      n += 1;
      const id = op['operationId'] as string;
      assert.ok(!ids.has(id), `operationId ${id} is unique`);
      ids.add(id);
      const url = path.replace(/\{([A-Za-z]+)\}/g, ':$1');
      assert.ok(api.app.hasRoute({ method: method.toUpperCase(), url }), `${method} ${path} is served`);
      const declared = (op['parameters'] as JsonObject[])
        .filter((p) => p['in'] === 'path')
        .map((p) => p['name']);
      assert.deepEqual(
        declared,
        [...path.matchAll(/\{([A-Za-z]+)\}/g)].map((m) => m[1]),
      );
      const responses = op['responses'] as Record<string, JsonObject>;
      assert.ok(
        Object.keys(responses).some((s) => /^2\d\d$/.test(s)),
        `${id} documents a success`,
      );
      assert.ok('4XX' in responses && JSON.stringify(responses['4XX']).includes('application/problem+json'));
      const isPublic = (op['security'] as unknown[]).length === 0;
      // Console sign-in (POST /v1/session) takes its token in the body; the webhook receiver is
      // authenticated by the provider's signature instead (routes/webhooks.ts).
      const signed = path.startsWith('/v1/webhooks/');
      assert.equal(
        isPublic,
        !path.startsWith('/v1/') || id === 'signIn' || signed,
        `${id}: every /v1 route needs a bearer token`,
      );
      if (method === 'post' || method === 'put') {
        const needsBody = !/\/(enter|takeover|reconcile|resume|retry|complete|requeue|check)$/.test(path);
        assert.equal((op['requestBody'] as JsonObject | undefined)?.['required'], needsBody, `${id} body`);
      }
    }
  }
  assert.equal(
    n,
    76,
    'four operational routes, 49 under /v1 (nine of them /v1/continuity: six, and three of producer pins, three /v1/session, /v1/events, two evidence-by-type, the webhook receiver, create-and-enter, acknowledge-and-settle, two /v1/health, /v1/refusals/histogram, the lineages list), 16 harness/mission routes (with session get/taint and rebind) and 7 of the Mission consumer (with the stream bearer replacement and the unpin)',
  );
  t.diagnostic(`checked ${n} operations`);
});
