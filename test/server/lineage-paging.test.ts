/**
 * `GET /v1/lineages/{lineage}` answers one page of the lineage's history: each takeover adds a
 * generation (its credential) and a `generation_advanced` event to `lineage:<id>`, so one answer
 * holding both whole grew without bound. `limit` 1..500 (default 50), `cursor` = the previous
 * page's `evidenceNextCursor` (null only on the last page), the chain-position cursor of
 * `GET /v1/evidence?subject=`. The SDK's `OccurrencesQuery.lineage` reads every page and refuses
 * pages that do not move on. Real server on 127.0.0.1, both engines, real takeovers.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { OccurrencesQuery } from '../../src/client/occurrences-query.js';
import { isBatonError } from '../../src/core/errors.js';
import { fakeBaton } from '../support/fake-baton.js';
import type { JsonObject } from '../../src/core/json.js';
import { listEvidence } from '../../src/store/evidence-log.js';
import { enginesUnderTest } from '../store/engines.js';
import { servedWorld, type ServedWorld } from '../missions/http-world.js';
import { assertProblem } from './helpers.js';

const engines = await enginesUnderTest();

const LINEAGE = 'payroll-agent';
/** More takeovers than two default pages (50) and than the SDK's page (200). */
const TAKEOVERS = 230;

async function takenOver(t: TestContext, e: (typeof engines)[number], n = TAKEOVERS) {
  const api = await servedWorld(t, e);
  let credential = '';
  for (let i = 0; i < n; i++) credential = (await api.occurrences.takeover({ lineage: LINEAGE })).credential;
  const stored = await api.store.engine.read((ex) => listEvidence(ex, `lineage:${LINEAGE}`));
  assert.equal(stored.length, n);
  return { api, credential, stored };
}

const list = (a: { body: JsonObject }, member: string): JsonObject[] => a.body[member] as JsonObject[];
const hashes = (xs: readonly object[]): string[] => xs.map((e) => (e as { hash: string }).hash);
const generations = (xs: readonly JsonObject[]): number[] => xs.map((c) => c['generation'] as number);
const upTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

interface Paged {
  readonly evidence: JsonObject[];
  readonly credentials: JsonObject[];
  /** Each page's retiredGenerations: the lineage's, the same on every page. */
  readonly retired: number[][];
}

/** Every page at `limit`, following evidenceNextCursor; asserts each page's size and generation. */
async function pages(api: ServedWorld, token: string, limit: number, current: number): Promise<Paged> {
  const out: Paged = { evidence: [], credentials: [], retired: [] };
  let cursor: string | null = null;
  for (let n = 0; n < 1000; n++) {
    const query = `?limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`;
    const a = await api.call('GET', `/v1/lineages/${LINEAGE}${query}`, { token });
    assert.equal(a.status, 200, a.text);
    assert.equal(a.body['generation'], current, 'every page names the current generation');
    out.evidence.push(...list(a, 'evidence'));
    out.credentials.push(...list(a, 'credentials'));
    out.retired.push(a.body['retiredGenerations'] as number[]);
    cursor = a.body['evidenceNextCursor'] as string | null;
    if (cursor === null) return out;
    assert.equal(list(a, 'evidence').length, limit, 'only the last page is short');
    assert.equal(list(a, 'credentials').length, limit, 'only the last page is short');
  }
  throw new Error('paging did not end');
}

for (const e of engines) {
  test(`[${e.name}] GET /v1/lineages/{lineage} answers one page of its history; paging through gives every generation and the stored chain`, async (t) => {
    const { api, credential, stored } = await takenOver(t, e);

    const first = await api.call('GET', `/v1/lineages/${LINEAGE}`, { token: api.operator });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(Object.keys(first.body).sort(), [
      'credentials',
      'evidence',
      'evidenceNextCursor',
      'generation',
      'id',
      'retiredGenerations',
    ]);
    assert.equal(first.body['generation'], TAKEOVERS);
    assert.deepEqual(
      hashes(list(first, 'evidence')),
      hashes(stored.slice(0, 50)),
      'the default page: the oldest 50',
    );
    assert.deepEqual(generations(list(first, 'credentials')), upTo(50), "the same positions' generations");
    assert.deepEqual(first.body['retiredGenerations'], upTo(TAKEOVERS - 1), "the lineage's, not the page's");
    assert.equal(typeof first.body['evidenceNextCursor'], 'string', 'a truncated history says so');

    for (const limit of [7, 500]) {
      const all = await pages(api, credential, limit, TAKEOVERS);
      assert.deepEqual(hashes(all.evidence), hashes(stored));
      assert.deepEqual(generations(all.credentials), upTo(TAKEOVERS));
      for (const retired of all.retired)
        assert.deepEqual(retired, upTo(TAKEOVERS - 1), 'every generation but the current, on every page');
      assert.equal(all.credentials.at(-1)?.['retiredAt'], null);
    }

    // The last page: exactly the rest, and a null cursor.
    const cursor = (await api.call('GET', `/v1/lineages/${LINEAGE}?limit=200`, { token: api.operator })).body[
      'evidenceNextCursor'
    ];
    assert.ok(typeof cursor === 'string');
    const last = await api.call('GET', `/v1/lineages/${LINEAGE}?limit=200&cursor=${cursor}`, {
      token: api.operator,
    });
    assert.equal(last.status, 200, last.text);
    assert.deepEqual(hashes(list(last, 'evidence')), hashes(stored.slice(200)));
    assert.equal(last.body['evidenceNextCursor'], null);
  });

  test(`[${e.name}] a lineage page's cursor is the chain cursor of GET /v1/evidence; bad limits and forged cursors are 400 input_invalid`, async (t) => {
    const { api, credential, stored } = await takenOver(t, e, 60);
    const first = await api.call('GET', `/v1/lineages/${LINEAGE}?limit=10`, { token: api.operator });
    const cursor = first.body['evidenceNextCursor'];
    assert.ok(typeof cursor === 'string');
    const subject = encodeURIComponent(`lineage:${LINEAGE}`);
    const evidence = await api.call('GET', `/v1/evidence?subject=${subject}&limit=10&cursor=${cursor}`, {
      token: api.operator,
    });
    assert.equal(evidence.status, 200, evidence.text);
    assert.deepEqual(hashes(list(evidence, 'events')), hashes(stored.slice(10, 20)));

    const before = await api.snapshot();
    const forged = (key: unknown[]) => Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
    for (const q of [
      'limit=0',
      'limit=501',
      'limit=x',
      `cursor=${forged(['1'])}`,
      `cursor=${forged([0])}`,
      `cursor=${forged([1, 2])}`,
      'cursor=not*a*cursor',
    ]) {
      const a = await api.call('GET', `/v1/lineages/${LINEAGE}?${q}`, { token: credential });
      assertProblem(a, 400, 'input_invalid');
    }
    assert.equal(await api.snapshot(), before, 'a refused read changes nothing');
    // Another lineage's executor may not read it, cursor or not; an unknown lineage is not found.
    const other = await api.takeover('other-agent');
    assertProblem(
      await api.call('GET', `/v1/lineages/${LINEAGE}?cursor=${cursor}`, { token: other }),
      403,
      'forbidden',
    );
    assertProblem(
      await api.call('GET', '/v1/lineages/nobody', { token: api.operator }),
      404,
      'lineage_not_found',
    );
  });

  test(`[${e.name}] a lineage of one takeover is one page, its cursor null`, async (t) => {
    const { api, credential } = await takenOver(t, e, 1);
    const a = await api.call('GET', `/v1/lineages/${LINEAGE}?limit=1`, { token: credential });
    assert.equal(a.status, 200, a.text);
    assert.equal(list(a, 'evidence').length, 1);
    assert.deepEqual(a.body['retiredGenerations'], []);
    assert.equal(a.body['evidenceNextCursor'], null, 'exactly a full page, and nothing after it');
    // In process the service bounds its pages too: a page it cannot give is refused, not widened.
    for (const page of [{ limit: 0 }, { limit: 501 }, { after: -1 }, { after: 1.5 }]) {
      await assert.rejects(
        api.occurrences.getLineage(LINEAGE, page),
        (err: unknown) => isBatonError(err, 'input_invalid'),
        JSON.stringify(page),
      );
    }
    const past = await api.occurrences.getLineage(LINEAGE, { after: 1 });
    assert.deepEqual([past.evidence.length, past.credentials.length, past.nextAfter], [0, 0, null]);
  });
}

for (const e of engines) {
  test(`[${e.name}] the SDK's OccurrencesQuery.lineage reads every page: every generation and the whole stored chain`, async (t) => {
    const { api, credential, stored } = await takenOver(t, e);
    for (const token of [api.operator, credential]) {
      const read = await new OccurrencesQuery({ baseUrl: api.url, token }).lineage(LINEAGE);
      assert.equal(read.id, LINEAGE);
      assert.equal(read.generation, TAKEOVERS);
      assert.deepEqual(hashes(read.evidence), hashes(stored), 'more than one SDK page (200), all of it');
      assert.deepEqual(
        read.credentials.map((c) => c.generation),
        upTo(TAKEOVERS),
      );
      assert.deepEqual(read.retiredGenerations, upTo(TAKEOVERS - 1));
    }
  });
}

test('the SDK refuses lineage pages that do not move on or are of the wrong shape (baton_response_invalid), never a partial history', async (t) => {
  const head = { id: LINEAGE, generation: 2, retiredGenerations: [1] };
  const credential = { generation: 1, issuedAt: 1, retiredAt: 2 };
  const event = { seq: 1, hash: 'h' };
  const page = { ...head, credentials: [credential], evidence: [event] };
  const answers: Record<string, (n: number) => JsonObject> = {
    'no cursor member': () => page,
    'a cursor of the wrong type': () => ({ ...page, evidenceNextCursor: 7 }),
    'evidence not an array': () => ({ ...page, evidence: {}, evidenceNextCursor: null }),
    'credentials missing': () => ({ ...head, evidence: [event], evidenceNextCursor: null }),
    'no generation': () => ({ ...page, generation: 'two', evidenceNextCursor: null }),
    'an empty page that is not the last': () => ({
      ...head,
      credentials: [],
      evidence: [],
      evidenceNextCursor: 'WzFd',
    }),
    'the same cursor again': () => ({ ...page, evidenceNextCursor: 'WzFd' }),
  };
  for (const [why, answer] of Object.entries(answers)) {
    const query = new OccurrencesQuery({ baseUrl: await fakeBaton(t, answer), token: 'bt_x' });
    await assert.rejects(
      query.lineage(LINEAGE),
      (err: unknown) => isBatonError(err, 'baton_response_invalid'),
      why,
    );
  }
  // Two well-formed pages: both are read, in order.
  const two = (n: number): JsonObject =>
    n === 0
      ? { ...page, evidenceNextCursor: 'WzFd' }
      : {
          ...head,
          credentials: [{ ...credential, generation: 2 }],
          evidence: [{ seq: 2, hash: 'i' }],
          evidenceNextCursor: null,
        };
  const read = await new OccurrencesQuery({ baseUrl: await fakeBaton(t, two), token: 'bt_x' }).lineage(
    LINEAGE,
  );
  assert.deepEqual(hashes(read.evidence), ['h', 'i']);
  assert.deepEqual(
    read.credentials.map((c) => c.generation),
    [1, 2],
  );
});
