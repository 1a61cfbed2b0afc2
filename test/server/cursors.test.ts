/**
 * Every paged route's cursor is authenticated (src/core/cursor.ts, docs/api.md "Cursors"): a
 * real cursor pages to the end, and a cursor Baton did not issue — a well-formed position past the
 * end, one edited or re-encoded, or one another list or chain issued — is `400 input_invalid`
 * naming `$.cursor` (never echoing it), never an empty last page (`nextCursor: null`). A lineage's
 * `retiredGenerations` are the lineage's on every page, so no cursor shows them as none. Servers
 * that share a store and its domain key read each other's cursors. Real server on 127.0.0.1, both
 * engines.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { systemClock } from '../../src/core/clock.js';
import type { JsonObject } from '../../src/core/json.js';
import { buildServer } from '../../src/server/index.js';
import { openBaton, type OpenedBaton } from '../../src/server/open.js';
import { createToken } from '../../src/server/tokens.js';
import { createInput, domainConfig } from '../occurrences/helpers.js';
import { binding, MISSION, ORIGIN, T0, verifiedSignal } from '../missions/fixtures.js';
import { servedWorld, type ServedWorld } from '../missions/http-world.js';
import { enginesUnderTest, type EngineUnderTest } from '../store/engines.js';
import { tempDir } from '../store/support.js';
import { assertProblem, request, str, type Answer } from './helpers.js';

const engines = await enginesUnderTest();

const LINEAGE = 'payroll-agent';
const b64 = (key: unknown): string => Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');

interface Route {
  readonly path: string;
  readonly items: string;
  readonly next: string;
  /** Routes over one list share its cursors (a lineage's history is its chain: docs/api.md). */
  readonly list: string;
}

/** A world with two of everything each paged route lists. */
async function seeded(t: TestContext, e: EngineUnderTest): Promise<{ w: ServedWorld; routes: Route[] }> {
  const w = await servedWorld(t, e);
  // Two Mission transitions: two events of its chain.
  await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
  await w.harness.applyVerifiedSignal(verifiedSignal('active', 2, T0 + 1));
  for (let i = 0; i < 3; i++) await w.occurrences.takeover({ lineage: LINEAGE });
  const agent = await w.takeover('agent-a');
  for (const key of ['k-1', 'k-2', 'k-3']) await w.occurrences.create(createInput(agent, key, 100));
  const items: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await w.call('POST', '/v1/harness/items', {
      token: agent,
      body: { kind: 'queue_item', action_class: 'consequential_write', mission_binding: binding },
    });
    assert.equal(r.status, 201, r.text);
    items.push(str(r.body));
  }
  // A second event of the first item's chain.
  await w.harness.stop(items[0] ?? '', 'suppress', 'operator');
  const mission = `origin=${encodeURIComponent(ORIGIN)}&mission=${MISSION}`;
  const routes: Route[] = [
    { path: '/v1/occurrences?', items: 'occurrences', next: 'nextCursor', list: 'occurrences' },
    { path: '/v1/lineages?', items: 'lineages', next: 'nextCursor', list: 'lineages' },
    { path: `/v1/lineages/${LINEAGE}?`, items: 'evidence', next: 'evidenceNextCursor', list: 'history' },
    {
      path: `/v1/evidence?subject=${encodeURIComponent(`lineage:${LINEAGE}`)}&`,
      items: 'events',
      next: 'nextCursor',
      list: 'history',
    },
    { path: '/v1/harness/items?', items: 'items', next: 'nextCursor', list: 'items' },
    { path: `/v1/harness/evidence?${mission}&`, items: 'events', next: 'nextCursor', list: 'mission' },
    {
      path: `/v1/harness/items/${items[0] ?? ''}?`,
      items: 'evidence',
      next: 'evidenceNextCursor',
      list: 'item',
    },
  ];
  return { w, routes };
}

const get = (w: ServedWorld, path: string): Promise<Answer> => w.call('GET', path, { token: w.operator });

/** Every page at limit 1, following the route's cursor to the end: its entries, in order. */
async function pageThrough(w: ServedWorld, r: Route): Promise<{ entries: unknown[]; cursors: string[] }> {
  const entries: unknown[] = [];
  const cursors: string[] = [];
  for (let n = 0; n < 100; n++) {
    const cursor = cursors.at(-1);
    const a = await get(w, `${r.path}limit=1${cursor === undefined ? '' : `&cursor=${cursor}`}`);
    assert.equal(a.status, 200, `${r.path}: ${a.text}`);
    entries.push(...(a.body[r.items] as unknown[]));
    const next = a.body[r.next];
    if (next === null) return { entries, cursors };
    assert.equal(typeof next, 'string');
    cursors.push(next as string);
  }
  throw new Error('paging did not end');
}

/** The cursor refused as not issued, naming the parameter and never echoing it. */
function assertRefused(a: Answer, cursor: string, what: string): void {
  assertProblem(a, 400, 'input_invalid');
  assert.equal((a.body['details'] as JsonObject | undefined)?.['path'], '$.cursor', what);
  assert.ok(!a.text.includes(cursor), `${what}: the cursor is not echoed`);
}

/** A real cursor altered so it is no longer the one issued (its position or its tag). */
function edits(real: string): string[] {
  const bytes = Buffer.from(real, 'base64url');
  const payload = bytes.subarray(0, bytes.length - 32);
  const tag = bytes.subarray(bytes.length - 32);
  const spaced = Buffer.from(JSON.stringify(JSON.parse(payload.toString('utf8')), null, 1), 'utf8');
  const flipped = Buffer.from(bytes);
  flipped[flipped.length - 1] = (flipped.at(-1) ?? 0) ^ 1;
  return [
    Buffer.concat([spaced, tag]).toString('base64url'), // whitespace inside the JSON
    flipped.toString('base64url'), // one bit of the tag
    payload.toString('base64url'), // no tag at all
    bytes.subarray(0, bytes.length - 1).toString('base64url'), // cut short
  ];
}

for (const e of engines) {
  test(`[${e.name}] every paged route: a real cursor pages to the end; a forged, edited or foreign cursor is 400 input_invalid, never the last page`, async (t) => {
    const { w, routes } = await seeded(t, e);
    const real = new Map<Route, string>();
    for (const r of routes) {
      const whole = await get(w, `${r.path}limit=500`);
      assert.equal(whole.status, 200, whole.text);
      const { entries, cursors } = await pageThrough(w, r);
      assert.ok(cursors.length >= 1, `${r.path} has more than one page`);
      assert.deepEqual(entries, whole.body[r.items], `${r.path}: the pages are the whole list`);
      real.set(r, cursors[0] ?? '');
    }
    const before = await w.snapshot();
    for (const r of routes) {
      const own = real.get(r) ?? '';
      const foreign = [...real].filter(([other]) => other.list !== r.list).map(([, c]) => c);
      const forged = [b64([-5, 'x']), b64(['zzz']), b64([999]), b64([1]), b64([T0 + 1e6, 'zzz'])];
      const refused = async (cursor: string) =>
        assertRefused(await get(w, `${r.path}limit=1&cursor=${cursor}`), cursor, `${r.path} ${cursor}`);
      for (const cursor of forged) await refused(cursor);
      for (const cursor of [...edits(own), ...foreign]) await refused(cursor);
    }
    assert.equal(await w.snapshot(), before, 'a refused read changes nothing');
  });

  test(`[${e.name}] a lineage's retiredGenerations are the lineage's on every page of its history`, async (t) => {
    const { w } = await seeded(t, e);
    let cursor: string | null = null;
    let pages = 0;
    do {
      const a = await get(w, `/v1/lineages/${LINEAGE}?limit=1${cursor === null ? '' : `&cursor=${cursor}`}`);
      assert.equal(a.status, 200, a.text);
      assert.equal(a.body['generation'], 3);
      assert.deepEqual(a.body['retiredGenerations'], [1, 2], `page ${pages + 1}`);
      cursor = a.body['evidenceNextCursor'] as string | null;
      pages++;
    } while (cursor !== null);
    assert.equal(pages, 3);
    // The forged position past the end the review found answered "retiredGenerations": [].
    assertRefused(await get(w, `/v1/lineages/${LINEAGE}?cursor=${b64([999])}`), b64([999]), 'past the end');
  });
}

/** A server over the store at `location` with the domain key `keyFile` (postgres) or beside it. */
async function served(t: TestContext, e: EngineUnderTest, location: string, keyFile: string) {
  const opened: OpenedBaton = await openBaton(
    e.kind === 'sqlite'
      ? { kind: 'sqlite', path: location }
      : { kind: 'postgres', url: location, domainKeyFile: keyFile },
  );
  const app = buildServer({ engine: opened.engine, service: opened.service, console: false });
  t.after(async () => {
    await app.close();
    await opened.close();
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const token = (
    await createToken(opened.engine, { role: 'operator' }, { clock: systemClock, actor: 'test' })
  ).token;
  return { opened, list: (q: string) => request(url, 'GET', `/v1/lineages?limit=1${q}`, { token }) };
}

for (const e of engines) {
  test(`[${e.name}] servers that share a store and its domain key read each other's cursors; another key's server refuses them`, async (t) => {
    const dir = tempDir(t);
    const store = await e.open(t);
    const location = e.kind === 'sqlite' ? join(dir, 'shared.db') : store.location;
    const a = await served(t, e, location, join(dir, 'shared.domain-key.pem'));
    const b = await served(t, e, location, join(dir, 'shared.domain-key.pem'));
    // Another domain key over the same database (opened before the domain names its key).
    const c =
      e.kind === 'postgres' ? await served(t, e, location, join(dir, 'other.domain-key.pem')) : undefined;
    await a.opened.service.configureDomain(domainConfig() as never);
    for (const lineage of ['l-1', 'l-2', 'l-3']) await a.opened.service.takeover({ lineage });
    const cursor = (await a.list('')).body['nextCursor'];
    assert.ok(typeof cursor === 'string');
    const onB = await b.list(`&cursor=${cursor}`);
    assert.equal(onB.status, 200, onB.text);
    assert.deepEqual(
      (onB.body['lineages'] as JsonObject[]).map((l) => l['id']),
      ['l-2'],
    );
    if (c !== undefined) {
      assertRefused(await c.list(`&cursor=${cursor}`), cursor, 'another key');
    }
  });
}
