/**
 * A cursor is bound to the whole query it was issued for (src/core/cursor.ts `listScope`,
 * docs/api.md "Cursors"): used with another filter it is `400 input_invalid` naming `$.cursor`,
 * as a forged cursor is, never a page of rows of neither query. The review found
 * `GET /v1/occurrences?creationKey=<a key that exists>&cursor=<a cursor of the unfiltered list>`
 * answered `200` with an empty last page: an operator reading "no occurrence" creates (and pays)
 * again. With the same filter (in any spelling of it, at any page size) a cursor pages on to the
 * end. Real server on 127.0.0.1, both engines.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { createInput } from '../occurrences/helpers.js';
import { binding } from '../missions/fixtures.js';
import { servedWorld, type ServedWorld } from '../missions/http-world.js';
import { enginesUnderTest, type EngineUnderTest } from '../store/engines.js';
import { assertProblem, str, type Answer } from './helpers.js';

const engines = await enginesUnderTest();

/** Three occurrences of one lineage and one of another; three work items, one of them stopped. */
async function seeded(t: TestContext, e: EngineUnderTest): Promise<ServedWorld> {
  const w = await servedWorld(t, e);
  const agent = await w.takeover('agent-a');
  for (const key of ['k-1', 'k-2', 'k-3']) await w.occurrences.create(createInput(agent, key, 100));
  const other = await w.takeover('agent-b');
  await w.occurrences.create(createInput(other, 'k-4', 100));
  const items: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await w.call('POST', '/v1/harness/items', {
      token: agent,
      body: { kind: 'queue_item', action_class: 'consequential_write', mission_binding: binding },
    });
    assert.equal(r.status, 201, r.text);
    items.push(str(r.body));
  }
  await w.harness.stop(items[0] ?? '', 'suppress', 'operator');
  return w;
}

async function get(w: ServedWorld, path: string): Promise<Answer> {
  return w.call('GET', path, { token: w.operator });
}

/** The answer's rows (`items`) and next cursor, after checking it is a 200. */
async function page(
  w: ServedWorld,
  path: string,
  items: string,
): Promise<{ rows: unknown[]; next: string | null }> {
  const a = await get(w, path);
  assert.equal(a.status, 200, `${path}: ${a.text}`);
  return { rows: a.body[items] as unknown[], next: a.body['nextCursor'] as string | null };
}

/** The cursor refused as not issued for this query: `$.cursor`, never echoed, nothing listed. */
function assertRefused(a: Answer, cursor: string, what: string): void {
  assertProblem(a, 400, 'input_invalid');
  assert.equal((a.body['details'] as JsonObject | undefined)?.['path'], '$.cursor', what);
  assert.ok(!a.text.includes(cursor), `${what}: the cursor is not echoed`);
}

/**
 * `base` (a query string ending in `&` or `?`) paged at limit 1, then each cursor also read by
 * every spelling in `same` at limit 2: the pages are the whole list, whatever the spelling or size.
 */
async function pagesOn(w: ServedWorld, base: string, same: readonly string[], items: string) {
  const whole = (await page(w, `${base}limit=500`, items)).rows;
  assert.ok(whole.length >= 2, `${base}: more than one row`);
  const seen: unknown[] = [];
  let next: string | null = null;
  do {
    const p = await page(w, `${base}limit=1${next === null ? '' : `&cursor=${next}`}`, items);
    const at = seen.length;
    seen.push(...p.rows);
    for (const spelling of next === null ? [] : same) {
      const other = await page(w, `${spelling}limit=2&cursor=${next}`, items);
      assert.deepEqual(other.rows, whole.slice(at, at + 2), `${spelling} reads ${base}'s cursor`);
    }
    next = p.next;
  } while (next !== null);
  assert.deepEqual(seen, whole, `${base}: the pages are the whole list`);
}

async function firstCursor(w: ServedWorld, path: string, items: string): Promise<string> {
  const next = (await page(w, `${path}limit=1`, items)).next;
  assert.ok(typeof next === 'string', `${path} has a second page`);
  return next;
}

for (const e of engines) {
  test(`[${e.name}] GET /v1/occurrences: a cursor used with another filter is 400 input_invalid ($.cursor), never an empty page for a key that exists`, async (t) => {
    const w = await seeded(t, e);
    const exists = await page(w, '/v1/occurrences?creationKey=k-3&', 'occurrences');
    assert.equal(exists.rows.length, 1, 'k-3 exists');
    const first = await page(w, '/v1/occurrences?limit=1', 'occurrences');
    const newest = (first.rows[0] as JsonObject | undefined)?.['creationBinding'] as JsonObject;
    assert.equal(newest['key'], 'k-4', 'the first page is the newest occurrence, k-4');
    const unfiltered = first.next ?? '';
    const byLineage = await firstCursor(w, '/v1/occurrences?lineage=agent-a&', 'occurrences');
    const since = await firstCursor(w, '/v1/occurrences?from=2000-01-01T00:00:00Z&', 'occurrences');
    const before = await w.snapshot();
    const refusals: [string, string][] = [
      // The review's case: the unfiltered list's cursor under a creation key — read as a
      // position, after k-4's own row, it answered an empty last page for k-4.
      ['/v1/occurrences?creationKey=k-4&', unfiltered],
      ['/v1/occurrences?creationKey=k-3&', unfiltered],
      ['/v1/occurrences?lineage=agent-a&', unfiltered],
      ['/v1/occurrences?phase=reserved&', unfiltered],
      ['/v1/occurrences?from=2000-01-01T00:00:00Z&', unfiltered],
      // A filter dropped, changed or added is another query too.
      ['/v1/occurrences?', byLineage],
      ['/v1/occurrences?lineage=agent-b&', byLineage],
      ['/v1/occurrences?lineage=agent-a&creationKey=k-1&', byLineage],
      ['/v1/occurrences?from=2000-01-01T00:00:01Z&', since],
      ['/v1/occurrences?to=2000-01-01T00:00:00Z&', since],
    ];
    for (const [path, cursor] of refusals) {
      assertRefused(await get(w, `${path}limit=1&cursor=${cursor}`), cursor, path);
    }
    assert.equal(await w.snapshot(), before, 'a refused read changes nothing');
    await pagesOn(w, '/v1/occurrences?', [], 'occurrences');
    await pagesOn(w, '/v1/occurrences?lineage=agent-a&', ['/v1/occurrences?lineage=agent-a&'], 'occurrences');
    // One instant in three spellings is one filter (the server binds the parsed time).
    await pagesOn(
      w,
      '/v1/occurrences?from=2000-01-01T00:00:00Z&',
      ['/v1/occurrences?from=2000-01-01T00:00:00.000Z&', '/v1/occurrences?from=2000-01-01T01:00:00%2B01:00&'],
      'occurrences',
    );
  });

  test(`[${e.name}] GET /v1/harness/items: a cursor used with another state filter is 400 input_invalid ($.cursor); the same set of states pages on`, async (t) => {
    const w = await seeded(t, e);
    const both = await firstCursor(w, '/v1/harness/items?state=queued,suppressed&', 'items');
    const unfiltered = await firstCursor(w, '/v1/harness/items?', 'items');
    const before = await w.snapshot();
    const refusals: [string, string][] = [
      ['/v1/harness/items?state=queued&', both],
      ['/v1/harness/items?', both],
      ['/v1/harness/items?state=queued,suppressed&', unfiltered],
    ];
    for (const [path, cursor] of refusals) {
      assertRefused(await get(w, `${path}limit=1&cursor=${cursor}`), cursor, path);
    }
    assert.equal(await w.snapshot(), before, 'a refused read changes nothing');
    // A set of states in any order, repeated or not, is one filter.
    await pagesOn(
      w,
      '/v1/harness/items?state=queued,suppressed&',
      ['/v1/harness/items?state=suppressed,queued&', '/v1/harness/items?state=queued,suppressed,queued&'],
      'items',
    );
    await pagesOn(w, '/v1/harness/items?', [], 'items');
  });
}
