/**
 * `GET /v1/occurrences` underneath: the service's page query on both engines (DESIGN.md §2, one
 * contract suite): each filter, the newest-first (createdAt, id) order, a cursor that neither
 * skips nor repeats rows even when rows share a millisecond or are created while paging, refused
 * cursors, and — because the console pages a million rows — a query plan that uses an index for
 * every filter instead of scanning and sorting the table (migration 005).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock.js';
import { listScope } from '../../src/core/cursor.js';
import { generateEd25519KeyPair, publicKeyRaw } from '../../src/core/ed25519.js';
import { OccurrencesService, type OccurrenceView } from '../../src/occurrences/index.js';
import type { StoreEngine } from '../../src/store/engine.js';
import { migrate, occurrencesUnitOfWork } from '../../src/store/index.js';
import { enginesUnderTest, type EngineUnderTest } from '../store/engines.js';
import { createInput, domainConfig, paymentsProfile, T0 } from './helpers.js';

const engines = await enginesUnderTest();
const pair = generateEd25519KeyPair();
const domainKey = { kid: pair.kid, publicKey: publicKeyRaw(pair.publicKey).toString('base64url') };

async function prepared(t: TestContext, e: EngineUnderTest) {
  const store = await e.open(t);
  await migrate(store.engine);
  const clock = new ManualClock(T0);
  const svc = new OccurrencesService({ uow: occurrencesUnitOfWork(store.engine), domainKey, clock });
  await svc.configureDomain(domainConfig() as never);
  await svc.registerProfile(paymentsProfile());
  await svc.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 1_000_000 });
  return { store, svc, clock };
}

/** 12 occurrences over two lineages, two per millisecond; 3 of a entered, 1 of b released. */
async function population(svc: OccurrencesService, clock: ManualClock): Promise<OccurrenceView[]> {
  const a = await svc.takeover({ lineage: 'agent-a' });
  const b = await svc.takeover({ lineage: 'agent-b' });
  const made: OccurrenceView[] = [];
  for (let i = 0; i < 12; i++) {
    const cred = i % 2 === 0 ? a.credential : b.credential;
    const r = await svc.create(createInput(cred, `key-${i}`, 100));
    made.push(r.occurrence);
    if (i % 2 === 1) clock.advance(1);
  }
  for (const o of made.filter((x) => x.lineage === 'agent-a').slice(0, 3)) {
    await svc.enter({ credential: a.credential, occurrenceId: o.id });
  }
  const released = made.find((x) => x.lineage === 'agent-b');
  assert.ok(released !== undefined);
  await svc.release({
    credential: b.credential,
    occurrenceId: released.id,
    requestDigest: released.provider.requestDigest,
  });
  return made;
}

const newestFirst = (list: readonly OccurrenceView[]): string[] =>
  [...list]
    .sort((x, y) => y.createdAt - x.createdAt || (y.id < x.id ? -1 : y.id > x.id ? 1 : 0))
    .map((o) => o.id);

async function allPages(svc: OccurrencesService, input: Record<string, unknown>): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let n = 0; n < 100; n++) {
    const page = await svc.listOccurrences({ ...input, ...(cursor === null ? {} : { cursor }) });
    seen.push(...page.occurrences.map((o) => o.id));
    cursor = page.nextCursor;
    if (cursor === null) return seen;
  }
  assert.fail('paging did not end');
}

for (const e of engines) {
  test(`[${e.name}] list: every filter, newest first by (createdAt, id), cursor pages without gaps or repeats`, async (t) => {
    const { svc, clock } = await prepared(t, e);
    const made = await population(svc, clock);
    const all = newestFirst(made);
    assert.deepEqual(await allPages(svc, { limit: 5 }), all, 'three pages of 5, 5 and 2');
    assert.deepEqual(await allPages(svc, { limit: 1 }), all, 'pages of one across shared milliseconds');
    const first = await svc.listOccurrences({ limit: 12 });
    assert.equal(first.nextCursor, null, 'an exactly full last page says there is no more');
    const where = (f: (o: OccurrenceView) => boolean): string[] =>
      newestFirst(made).filter((id) => f(made.find((o) => o.id === id) as OccurrenceView));
    assert.deepEqual(
      await allPages(svc, { lineage: 'agent-a', limit: 2 }),
      where((o) => o.lineage === 'agent-a'),
    );
    const entered = await allPages(svc, { phase: 'entered', limit: 2 });
    assert.equal(entered.length, 3);
    assert.deepEqual(await allPages(svc, { phase: 'released' }), [made[1]?.id]);
    assert.equal((await allPages(svc, { outcome: 'unknown' })).length, 12);
    assert.deepEqual(await allPages(svc, { outcome: 'success' }), []);
    assert.deepEqual(await allPages(svc, { creationKey: 'key-7' }), [made[7]?.id]);
    assert.equal((await allPages(svc, { profileId: 'sandbox-payments' })).length, 12);
    assert.deepEqual(await allPages(svc, { profileId: 'other-profile' }), []);
    const window = await allPages(svc, { createdFrom: T0 + 2, createdBefore: T0 + 4 });
    assert.deepEqual(
      window,
      where((o) => o.createdAt >= T0 + 2 && o.createdAt < T0 + 4),
    );
    assert.equal(window.length, 4);
    assert.deepEqual(
      await allPages(svc, { lineage: 'agent-a', phase: 'entered', limit: 1 }),
      where((o) => o.lineage === 'agent-a').filter((id) => entered.includes(id)),
    );
  });

  test(`[${e.name}] list: rows created while a client pages do not shift the pages it has not read`, async (t) => {
    const { svc, clock } = await prepared(t, e);
    const made = await population(svc, clock);
    const page1 = await svc.listOccurrences({ limit: 4 });
    clock.advance(10);
    const a = await svc.takeover({ lineage: 'agent-a' });
    await svc.create(createInput(a.credential, 'late', 100));
    assert.ok(page1.nextCursor !== null);
    const rest = await allPages(svc, { limit: 4, cursor: page1.nextCursor });
    assert.deepEqual([...page1.occurrences.map((o) => o.id), ...rest], newestFirst(made));
  });

  test(`[${e.name}] list: refused inputs (input_invalid), never read as "start over"`, async (t) => {
    const { svc, clock } = await prepared(t, e);
    await population(svc, clock);
    const bad: Record<string, unknown>[] = [
      { cursor: 'not a cursor' },
      { cursor: Buffer.from('{"a":1}').toString('base64url') },
      { cursor: Buffer.from('[1,"bad id with spaces"]').toString('base64url') },
      { cursor: Buffer.from('[1.5,"x"]').toString('base64url') },
      // Well formed, but not issued: a position past the end would read as the last page.
      { cursor: Buffer.from('[-5,"x"]').toString('base64url') },
      { cursor: svc.cursors.issue(listScope('lineages'), [T0 + 1_000, 'zzz']) },
      // The unfiltered list's cursor under a filter: a position in another query's list.
      { creationKey: 'key-1', cursor: svc.cursors.issue(listScope('occurrences'), [T0 + 1_000, 'zzz']) },
      { cursor: 7 },
      { limit: 0 },
      { limit: 501 },
      { phase: 'done' },
      { outcome: 'ok' },
      { lineage: '' },
      { lineage: 'a\u0000b' },
      { createdFrom: -1 },
      { sort: 'asc' },
    ];
    for (const input of bad) {
      await assert.rejects(svc.listOccurrences(input), { code: 'input_invalid' }, JSON.stringify(input));
    }
    const page = await svc.listOccurrences({
      cursor: svc.cursors.issue(listScope('occurrences'), [T0 + 1_000, 'zzz']),
    });
    assert.equal(page.occurrences.length, 12, 'a cursor past everything starts from the newest');
  });

  test(`[${e.name}] list: every filter's first page is served by an index, not a scan and sort`, async (t) => {
    const { store } = await prepared(t, e);
    const filters: [string, unknown[]][] = [
      ['', []],
      ['phase = ?', ['entered']],
      ['outcome = ?', ['unknown']],
      ['lineage = ?', ['agent-a']],
      ['profile_id = ?', ['sandbox-payments']],
      ['creation_key = ?', ['key-1']],
      ['created_at >= ? AND created_at < ?', [T0, T0 + 10]],
      ['created_at <= ? AND (created_at < ? OR id < ?)', [T0, T0, 'x']],
    ];
    for (const [where, params] of filters) {
      const sql = `SELECT id FROM aoc_occurrences${where ? ` WHERE ${where}` : ''} ORDER BY created_at DESC, id DESC LIMIT 51`;
      const plan = await explain(store.engine, e.kind, sql, params);
      assert.match(
        plan,
        /aoc_occurrences_(created|phase_created|outcome_created|lineage_created|profile_created|creation_key)/,
        `${where}: ${plan}`,
      );
      assert.doesNotMatch(plan, /TEMP B-TREE FOR ORDER BY|Seq Scan|Sort Key/i, `${where}: ${plan}`);
    }
  });
}

/** The engine's query plan as one string (PostgreSQL told not to prefer a scan of a small table). */
async function explain(engine: StoreEngine, kind: string, sql: string, params: unknown[]): Promise<string> {
  if (kind === 'sqlite') {
    const rows = await engine.read((ex) =>
      ex.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params as never),
    );
    return rows.map((r) => r.detail).join('; ');
  }
  return engine.transaction(async (tx) => {
    await tx.run('SET LOCAL enable_seqscan = off');
    await tx.run('SET LOCAL enable_sort = off');
    const rows = await tx.all<Record<string, string>>(`EXPLAIN ${sql}`, params as never);
    return rows.map((r) => Object.values(r).join(' ')).join('; ');
  });
}
