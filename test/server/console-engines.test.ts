/**
 * The console's server side on both engines (SQLite file and PostgreSQL): migration 011's
 * sessions (sign-in, CSRF, revocation, sign-out), GET /v1/events, the evidence-by-type reads
 * of the overview, the lineages list and the reconciler's health, through a real server on loopback.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { ManualClock } from '../../src/core/clock.js';
import { buildServer } from '../../src/server/index.js';
import { openBaton, type StoreChoice } from '../../src/server/open.js';
import { createToken } from '../../src/server/tokens.js';
import { postgresForTests } from '../support/postgres.js';
import { assertProblem, domainConfig, request, T0 } from './helpers.js';

const pg = await postgresForTests();

async function serverOn(t: TestContext, choice: (dir: string) => StoreChoice) {
  const dir = mkdtempSync(join(tmpdir(), 'baton-console-engines-'));
  const clock = new ManualClock(T0);
  const opened = await openBaton(choice(dir), { clock });
  const app = buildServer({ engine: opened.engine, service: opened.service, clock, console: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(async () => {
    await app.close();
    await opened.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const deps = { clock, actor: 'test' };
  const admin = (await createToken(opened.engine, { role: 'admin' }, deps)).token;
  const operator = await createToken(opened.engine, { role: 'operator' }, deps);
  return { url, clock, admin, operator };
}

async function cases(t: TestContext, choice: (dir: string) => StoreChoice): Promise<void> {
  const s = await serverOn(t, choice);
  assert.equal(
    (await request(s.url, 'PUT', '/v1/domain', { token: s.admin, body: domainConfig() })).status,
    200,
  );
  const signed = await request(s.url, 'POST', '/v1/session', { body: { token: s.operator.token } });
  assert.equal(signed.status, 201, signed.text);
  const cookie = /^(baton_session=[^;]+)/.exec(signed.headers.get('set-cookie') ?? '')?.[1] ?? '';
  const csrf = signed.body['csrfToken'] as string;
  const as = (extra: Record<string, string> = {}) => ({ headers: { cookie, ...extra } });
  assertProblem(await request(s.url, 'POST', '/v1/lineages/a/takeover', as()), 403, 'csrf_invalid');
  for (let i = 0; i < 3; i++) {
    s.clock.advance(60_000);
    const r = await request(s.url, 'POST', '/v1/lineages/a/takeover', as({ 'x-baton-csrf': csrf }));
    assert.equal(r.status, 201, r.text);
  }
  const recent = await request(s.url, 'GET', '/v1/evidence/recent?type=generation_advanced&limit=2', as());
  assert.equal(recent.status, 200, recent.text);
  const events = recent.body['events'] as { at: number; subject: string }[];
  assert.deepEqual(
    events.map((e) => e.at),
    [T0 + 180_000, T0 + 120_000],
    'the newest two takeovers, newest first',
  );
  const from = new Date(T0).toISOString();
  const to = new Date(T0 + 240_000).toISOString();
  const hist = await request(
    s.url,
    'GET',
    `/v1/evidence/histogram?type=generation_advanced&from=${from}&to=${to}&buckets=4`,
    as(),
  );
  assert.equal(hist.status, 200, hist.text);
  assert.deepEqual(
    (hist.body['buckets'] as { count: number }[]).map((b) => b.count),
    [0, 1, 1, 1],
  );
  const bad = await request(s.url, 'GET', `/v1/evidence/histogram?type=x&from=${to}&to=${from}`, as());
  assertProblem(bad, 400, 'input_invalid');

  // The lineages list (keyset over the primary key) and the reconciler's health, on this engine.
  const b = await request(s.url, 'POST', '/v1/lineages/b/takeover', as({ 'x-baton-csrf': csrf }));
  assert.equal(b.status, 201, b.text);
  type Lineages = { id: string; generation: number }[];
  const page1 = await request(s.url, 'GET', '/v1/lineages?limit=1', as());
  assert.deepEqual(
    (page1.body['lineages'] as Lineages).map((l) => [l.id, l.generation]),
    [['a', 3]],
  );
  const next = page1.body['nextCursor'] as string;
  const page2 = await request(s.url, 'GET', `/v1/lineages?limit=1&cursor=${next}`, as());
  assert.deepEqual(
    (page2.body['lineages'] as Lineages).map((l) => [l.id, l.generation]),
    [['b', 1]],
  );
  assert.equal(page2.body['nextCursor'], null);
  const health = await request(s.url, 'GET', '/v1/health/reconciler', as());
  assert.equal(health.status, 200, health.text);
  assert.equal(health.body['oldestUnresolvedEnteredAt'], null);

  const res = await fetch(`${s.url}/v1/events?after=0&subject=lineage:a`, { headers: { cookie } });
  assert.equal(res.status, 200);
  assert.ok(res.body !== null);
  const reader = res.body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  let text = '';
  while ((text.match(/event: evidence/g) ?? []).length < 3) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += new TextDecoder().decode(chunk.value);
  }
  await reader.cancel();
  assert.equal((text.match(/"subject":"lineage:a"/g) ?? []).length, 3, text);

  await request(s.url, 'DELETE', `/v1/tokens/${s.operator.id}`, { token: s.admin });
  assertProblem(await request(s.url, 'GET', '/v1/session', as()), 401, 'unauthenticated');
  const again = await request(s.url, 'POST', '/v1/session', { body: { token: s.admin } });
  const c1 = /^(baton_session=[^;]+)/.exec(again.headers.get('set-cookie') ?? '')?.[1] ?? '';
  // A sign-in that arrives with a live session's cookie replaces it (another tab signed in): the
  // replaced session ends, so no tab can act as it any longer; a refused sign-in ends nothing.
  const refused = await request(s.url, 'POST', '/v1/session', {
    body: { token: 'bat_nope' },
    headers: { cookie: c1 },
  });
  assertProblem(refused, 401, 'unauthenticated');
  assert.equal((await request(s.url, 'GET', '/v1/session', { headers: { cookie: c1 } })).status, 200);
  const replaced = await request(s.url, 'POST', '/v1/session', {
    body: { token: s.admin },
    headers: { cookie: c1 },
  });
  assert.equal(replaced.status, 201, replaced.text);
  assertProblem(
    await request(s.url, 'GET', '/v1/session', { headers: { cookie: c1 } }),
    401,
    'unauthenticated',
  );
  const c2 = /^(baton_session=[^;]+)/.exec(replaced.headers.get('set-cookie') ?? '')?.[1] ?? '';
  const bye = await request(s.url, 'DELETE', '/v1/session', {
    headers: { cookie: c2, 'x-baton-csrf': replaced.body['csrfToken'] as string },
  });
  assert.equal(bye.status, 200, bye.text);
  assertProblem(
    await request(s.url, 'GET', '/v1/session', { headers: { cookie: c2 } }),
    401,
    'unauthenticated',
  );
}

test('console server side on SQLite', (t) =>
  cases(t, (dir) => ({ kind: 'sqlite', path: join(dir, 'b.db') })));

if (pg !== undefined) {
  const db = pg;
  test('console server side on PostgreSQL', async (t) => {
    const url = await db.schema();
    await cases(t, (dir) => ({ kind: 'postgres', url, domainKeyFile: join(dir, 'k.domain-key.pem') }));
  });
}
