/**
 * /metrics through prom-client (docs/api.md): per-route request histograms labelled by the route
 * pattern and status (never the raw URL), the process and Node.js defaults, the store gauges agreeing
 * with the exact counts, and no full-table count or scan of occurrences or evidence per scrape.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SqlExecutor, SqlValue, StoreEngine } from '../../src/store/engine.js';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildServer } from '../../src/server/index.js';
import { openBaton } from '../../src/server/open.js';
import { createToken } from '../../src/server/tokens.js';
import { readOpenGauges } from '../../src/store/occurrences-gauges.js';
import { postgresForTests } from '../support/postgres.js';
import { parseExposition, value, type Sample } from './exposition.js';
import {
  createBody,
  createOccurrence,
  domainConfig,
  paymentsProfile,
  request,
  setupOverHttp,
  startApi,
  str,
  takeover,
  type Api,
} from './helpers.js';

const pg = await postgresForTests();

async function scrape(api: Api): Promise<Sample[]> {
  const m = await api.call('GET', '/metrics');
  assert.equal(m.status, 200);
  return parseExposition(m.text).samples;
}

/** The engine, with every statement of its reads and transactions written down. */
function recording(engine: StoreEngine, log: string[]): StoreEngine {
  const wrap = <E extends SqlExecutor>(ex: E): E => ({
    ...ex,
    forUpdate: (ex as { forUpdate?: string }).forUpdate,
    all: (sql: string, p?: readonly SqlValue[]) => (log.push(sql), ex.all(sql, p)),
    get: (sql: string, p?: readonly SqlValue[]) => (log.push(sql), ex.get(sql, p)),
    run: (sql: string, p?: readonly SqlValue[]) => (log.push(sql), ex.run(sql, p)),
  });
  return {
    kind: engine.kind,
    read: (fn) => engine.read((ex) => fn(wrap(ex))),
    transaction: (fn) => engine.transaction((tx) => fn(wrap(tx))),
    ...(engine.commitStats ? { commitStats: () => engine.commitStats?.() ?? ({} as never) } : {}),
    close: () => engine.close(),
  };
}

test('metrics: a request histogram per route pattern and status, and the process defaults', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  const cred = await takeover(api, 'histogrammed');
  const occ = str(await createOccurrence(api, cred, 'h-1'));
  for (let i = 0; i < 3; i++) {
    assert.equal((await api.call('GET', `/v1/occurrences/${occ}`, { token: api.operator })).status, 200);
  }
  const absent = `occ_${'0'.repeat(26)}`;
  const missing = await api.call('GET', `/v1/occurrences/${absent}`, { token: api.operator });
  const samples = await scrape(api);
  const labels = { method: 'GET', route: '/v1/occurrences/:id', status: '200' };
  const name = 'baton_http_request_duration_seconds';
  assert.equal(value(samples, `${name}_count`, labels), 3, 'three answered GETs of one occurrence');
  const buckets = samples.filter(
    (s) => s.name === `${name}_bucket` && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  assert.ok(buckets.length > 5, 'the histogram has its buckets');
  for (let i = 1; i < buckets.length; i++)
    assert.ok((buckets[i]?.value ?? 0) >= (buckets[i - 1]?.value ?? 0));
  assert.equal(buckets.at(-1)?.labels['le'], '+Inf');
  assert.equal(buckets.at(-1)?.value, 3);
  assert.ok(value(samples, `${name}_sum`, labels) > 0);
  const missed = { ...labels, status: String(missing.status) };
  assert.equal(value(samples, `${name}_count`, missed), 1, 'the 404 has its own series');
  assert.equal(value(samples, 'baton_http_requests_total', labels), 3, 'the documented counter stays');
  for (const s of samples) {
    assert.ok(!Object.values(s.labels).some((v) => v.includes(occ) || v.includes(absent)), 'no raw URL');
  }
  const names = new Set(samples.map((s) => s.name));
  for (const expected of [
    'process_cpu_user_seconds_total',
    'process_start_time_seconds',
    'nodejs_heap_size_used_bytes',
  ]) {
    assert.ok(names.has(expected), `${expected} is exposed`);
  }
  assert.ok(
    [...names].some((n) => n.startsWith('nodejs_eventloop_lag')),
    'event loop lag is exposed',
  );
});

test('metrics: the store gauges agree with the exact counts, by reading no table whole', async (t) => {
  const statements: string[] = [];
  const api = await startApi(t, { wrapEngine: (e) => recording(e, statements) });
  await setupOverHttp(api);
  const cred = await takeover(api, 'gauged');
  const entered = str(await createOccurrence(api, cred, 'g-1'));
  assert.equal((await api.call('POST', `/v1/occurrences/${entered}/enter`, { token: cred })).status, 200);
  await createOccurrence(api, cred, 'g-2');
  const third = await createOccurrence(api, cred, 'g-3');
  const requestDigest = (third['provider'] as Record<string, unknown>)['requestDigest'];
  const r = await api.call('POST', `/v1/occurrences/${str(third)}/release`, {
    token: cred,
    body: { requestDigest },
  });
  assert.equal(r.status, 200, r.text);
  statements.length = 0;
  const samples = await scrape(api);
  const exact = await api.service.counts();
  assert.deepEqual(
    {
      unresolved: value(samples, 'baton_unresolved_occurrences'),
      conflicts: value(samples, 'baton_conflicting_occurrences'),
      reserved: value(samples, 'baton_occurrences', { phase: 'reserved' }),
      entered: value(samples, 'baton_occurrences', { phase: 'entered' }),
    },
    {
      unresolved: exact.unresolved,
      conflicts: exact.conflicts,
      reserved: exact.byPhase.reserved,
      entered: exact.byPhase.entered,
    },
  );
  assert.deepEqual([exact.byPhase.reserved, exact.byPhase.entered, exact.byPhase.released], [1, 1, 1]);

  // Every statement of the scrape, through SQLite's own planner: none may scan occurrences or evidence.
  assert.ok(statements.length > 0, 'the scrape read the store through the recorded engine');
  const fullScan = async (sql: string): Promise<string[]> => {
    const plan = await api.engine.read((ex) => ex.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`));
    return plan.map((p) => p.detail).filter((d) => /^SCAN (aoc_occurrences|evidence_\w+)\b/.test(d));
  };
  for (const sql of statements) {
    assert.deepEqual(await fullScan(sql), [], `a scrape statement reads a table whole: ${sql}`);
  }
  // The check can fail: the count the scrape used to run (GET /v1/counts still does) scans them all.
  const old =
    'SELECT phase, outcome, conflict, COUNT(*) AS n FROM aoc_occurrences GROUP BY phase, outcome, conflict';
  assert.notDeepEqual(await fullScan(old), []);
});

if (pg !== undefined) {
  test('metrics on PostgreSQL: the same gauge reads agree with the exact counts', async (t) => {
    const url = await pg.schema();
    const dir = mkdtempSync(join(tmpdir(), 'baton-pg-metrics-'));
    const opened = await openBaton({ kind: 'postgres', url, domainKeyFile: join(dir, 'm.domain-key.pem') });
    const app = buildServer({ engine: opened.engine, service: opened.service });
    t.after(async () => {
      await app.close();
      await opened.close();
      rmSync(dir, { recursive: true, force: true });
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const clock = { wallMs: () => Date.now(), monotonicMs: () => performance.now() };
    const token = (await createToken(opened.engine, { role: 'admin' }, { clock, actor: 'test' })).token;
    const budget = { id: 'payouts', unit: 'EUR-cents', total: 100_000 };
    for (const [method, path, body] of [
      ['PUT', '/v1/domain', domainConfig()],
      ['POST', '/v1/profiles', paymentsProfile()],
      ['POST', '/v1/authorities', budget],
    ] as const) {
      assert.equal((await request(base, method, path, { token, body })).status, 200);
    }
    const cred = (await request(base, 'POST', '/v1/lineages/pg-gauged/takeover', { token })).body[
      'credential'
    ] as string;
    const ids: string[] = [];
    for (const key of ['p-1', 'p-2', 'p-3']) {
      const r = await request(base, 'POST', '/v1/occurrences', { token: cred, body: createBody(key) });
      assert.equal(r.status, 201, r.text);
      ids.push(str(r.body['occurrence'] as Record<string, never>));
    }
    const e = await request(base, 'POST', `/v1/occurrences/${ids[0] ?? ''}/enter`, { token: cred });
    assert.equal(e.status, 200, e.text);
    const m = await request(base, 'GET', '/metrics');
    const samples = parseExposition(m.text).samples;
    const exact = await opened.service.counts();
    assert.deepEqual(await readOpenGauges(opened.engine), {
      reserved: exact.byPhase.reserved,
      entered: exact.byPhase.entered,
      conflicts: exact.conflicts,
    });
    assert.deepEqual([exact.byPhase.reserved, exact.byPhase.entered], [2, 1]);
    assert.equal(value(samples, 'baton_occurrences', { phase: 'reserved' }), 2);
    assert.equal(value(samples, 'baton_unresolved_occurrences'), 1);
    assert.equal(value(samples, 'baton_store_up'), 1);
  });
}
