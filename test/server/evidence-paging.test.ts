/**
 * `GET /v1/evidence?subject=` pages, over HTTP against a real server and store: a chain that grows
 * without bound (a `mission:` chain with every item transition, a `token:` chain with every
 * sign-in) is answered a page at a time, oldest first, like the other list routes (`limit` 1..500,
 * default 50; `cursor` = the previous page's `nextCursor`; `nextCursor: null` on the last page), so
 * a page never passes for the whole chain. Paging through gives exactly the stored chain, in
 * chain order, even while it grows; a cursor Baton did not issue is `400 input_invalid`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { missionSubject } from '../../src/missions/index.js';
import { appendEvidence, listEvidence, pageEvidence } from '../../src/store/evidence-log.js';
import { verifyEvidence } from '../../src/store/evidence-verify.js';
import { migrate } from '../../src/store/migrations.js';
import { enginesUnderTest } from '../store/engines.js';
import { assertProblem, startApi, type Api } from './helpers.js';

const engines = await enginesUnderTest();

const SUBJECT = 'token:tok_paging';

async function grow(api: Api, n: number, from = 0): Promise<void> {
  await api.engine.transaction(async (tx) => {
    for (let i = from; i < from + n; i++) {
      await appendEvidence(tx, {
        subject: SUBJECT,
        type: 'signed_in',
        body: { i },
        at: 1000 + i,
        actor: 'test',
      });
    }
  });
}

const page = (api: Api, query: string) =>
  api.call('GET', `/v1/evidence?subject=${encodeURIComponent(SUBJECT)}${query}`, { token: api.operator });

const events = (a: { body: JsonObject }): JsonObject[] => a.body['events'] as JsonObject[];
const seqs = (xs: readonly JsonObject[]): number[] => xs.map((e) => e['seq'] as number);

/** Every page from `query` on, following nextCursor; asserts each page's size. */
async function all(api: Api, limit: number): Promise<JsonObject[]> {
  const out: JsonObject[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 1000; pages++) {
    const a = await page(api, `&limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`);
    assert.equal(a.status, 200, a.text);
    assert.ok(events(a).length <= limit, 'a page holds at most limit events');
    out.push(...events(a));
    cursor = a.body['nextCursor'] as string | null;
    if (cursor === null) return out;
    assert.equal(events(a).length, limit, 'only the last page is short');
  }
  throw new Error('paging did not end');
}

test('GET /v1/evidence?subject= answers a page (default 50) with nextCursor; paging through gives the whole chain', async (t) => {
  const api = await startApi(t);
  await grow(api, 120);
  const stored = await api.engine.read((ex) => listEvidence(ex, SUBJECT));
  assert.equal(stored.length, 120);

  // No limit: the first 50, oldest first, and a cursor saying there is more.
  const first = await page(api, '');
  assert.equal(first.status, 200, first.text);
  assert.equal(first.body['subject'], SUBJECT);
  assert.deepEqual(seqs(events(first)), seqs(stored.slice(0, 50) as unknown as JsonObject[]));
  assert.equal(typeof first.body['nextCursor'], 'string', 'a truncated chain says so');
  assert.deepEqual(Object.keys(first.body).sort(), ['events', 'nextCursor', 'subject']);
  assert.deepEqual(Object.keys(events(first)[0]!).sort(), [
    'actor',
    'at',
    'body',
    'hash',
    'prev',
    'seq',
    'subject',
    'type',
  ]);

  // Paging through, at any page size, gives exactly the stored chain: same events, same order.
  const whole = JSON.parse(JSON.stringify(stored)) as JsonObject[];
  for (const limit of [1, 7, 50, 119, 120, 500]) {
    assert.deepEqual(await all(api, limit), whole, `limit ${limit}`);
  }
  // A page that ends exactly at the chain's end is the last: no empty page after it.
  const exact = await page(api, '&limit=120');
  assert.equal(events(exact).length, 120);
  assert.equal(exact.body['nextCursor'], null);

  // The chain grows while a client pages: the cursor is a chain position, so nothing repeats or is skipped.
  const p1 = await page(api, '&limit=100');
  await grow(api, 30, 120);
  const rest = await page(api, `&limit=500&cursor=${p1.body['nextCursor'] as string}`);
  assert.deepEqual(
    [...seqs(events(p1)), ...seqs(events(rest))],
    seqs((await api.engine.read((ex) => listEvidence(ex, SUBJECT))) as unknown as JsonObject[]),
  );
  assert.equal(rest.body['nextCursor'], null);
  assert.equal((await verifyEvidence(api.engine)).ok, true);

  // A subject with no events: an empty last page.
  const none = await api.call('GET', '/v1/evidence?subject=token:tok_none', { token: api.operator });
  assert.deepEqual(none.body, { subject: 'token:tok_none', events: [], nextCursor: null });
});

test('GET /v1/evidence refuses a limit out of 1..500 and a cursor it did not issue', async (t) => {
  const api = await startApi(t);
  await grow(api, 3);
  for (const bad of ['0', '501', '1000', 'x', '-1', '1.5', '']) {
    assertProblem(await page(api, `&limit=${bad}`), 400, 'input_invalid');
  }
  const forged = (key: unknown): string => Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
  for (const cursor of [
    'AAAA',
    forged([]),
    forged(['1']),
    forged([1, 2]),
    forged([-1]),
    forged([1.5]),
    forged({}),
  ]) {
    assertProblem(await page(api, `&cursor=${cursor}`), 400, 'input_invalid');
  }
  assertProblem(await page(api, '&offset=2'), 400, 'input_invalid');
  assertProblem(await api.call('GET', `/v1/evidence?subject=${SUBJECT}&limit=1`, {}), 401, 'unauthenticated');
  // The OpenAPI document says the same.
  const doc = await api.call('GET', '/openapi.json');
  const op = ((doc.body['paths'] as JsonObject)['/v1/evidence'] as JsonObject)['get'] as JsonObject;
  const params = (op['parameters'] as JsonObject[]).map((p) => [p['name'], p['in'], p['required'] === true]);
  assert.deepEqual(params.sort(), [
    ['cursor', 'query', false],
    ['limit', 'query', false],
    ['subject', 'query', true],
  ]);
  const ok = ((op['responses'] as JsonObject)['200'] as JsonObject)['content'] as JsonObject;
  const schema = (ok['application/json'] as JsonObject)['schema'] as JsonObject;
  assert.deepEqual((schema['required'] as string[]).sort(), ['events', 'nextCursor', 'subject']);
});

for (const e of engines) {
  test(`[${e.name}] pageEvidence: a keyset page of one chain, oldest first, positions after the cursor only`, async (t) => {
    const { engine } = await e.open(t);
    await migrate(engine);
    await engine.transaction(async (tx) => {
      for (const subject of ['A', 'B', 'A', 'A', 'B', 'A', 'A']) {
        await appendEvidence(tx, { subject, type: 'x', body: {}, at: 1, actor: 'test' });
      }
    });
    const chain = await engine.read((ex) => listEvidence(ex, 'A'));
    const pages = await engine.read(async (ex) => [
      await pageEvidence(ex, 'A', 0, 2),
      await pageEvidence(ex, 'A', 2, 2),
      await pageEvidence(ex, 'A', 4, 2),
      await pageEvidence(ex, 'A', 5, 10),
      await pageEvidence(ex, 'B', 0, 10),
    ]);
    assert.deepEqual(
      pages.map((p) => p.map((x) => x.idx)),
      [[1, 2], [3, 4], [5], [], [1, 2]],
    );
    assert.deepEqual(
      pages
        .slice(0, 3)
        .flat()
        .map(({ idx: _idx, ...event }) => event),
      chain,
    );
  });
}

test('GET /v1/harness/evidence pages a Mission chain the same way', async (t) => {
  const api = await startApi(t);
  const origin = 'https://as.example.com';
  const subject = missionSubject(origin, 'msn_paged');
  await api.engine.transaction(async (tx) => {
    for (let i = 0; i < 60; i++)
      await appendEvidence(tx, {
        subject,
        type: 'harness_evidence',
        body: { i },
        at: 1000 + i,
        actor: 'test',
      });
  });
  const stored = await api.engine.read((ex) => listEvidence(ex, subject));
  const path = `/v1/harness/evidence?origin=${encodeURIComponent(origin)}&mission=msn_paged`;
  const first = await api.call('GET', path, { token: api.operator });
  assert.equal(first.status, 200, first.text);
  assert.equal(first.body['subject'], subject);
  assert.deepEqual(seqs(events(first)), seqs(stored.slice(0, 50) as unknown as JsonObject[]));
  const cursor = first.body['nextCursor'];
  assert.ok(typeof cursor === 'string', 'a truncated chain says so');
  const rest = await api.call('GET', `${path}&limit=20&cursor=${cursor}`, { token: api.operator });
  assert.deepEqual(seqs(events(rest)), seqs(stored.slice(50) as unknown as JsonObject[]));
  assert.equal(rest.body['nextCursor'], null, 'the last page');
  assertProblem(await api.call('GET', `${path}&limit=501`, { token: api.operator }), 400, 'input_invalid');
});
