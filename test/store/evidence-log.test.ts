import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { isBatonError } from '../../src/core/errors.js';
import { canonicalize } from '../../src/core/jcs.js';
import { migrate } from '../../src/store/migrations.js';
import {
  appendEvidence,
  appendEvidenceRun,
  evidenceHash,
  listEvidence,
  MAX_SUBJECT,
  type AppendedEvent,
  type EvidenceEvent,
  type EvidenceInput,
} from '../../src/store/evidence-log.js';
import { verifyEvidence } from '../../src/store/evidence-verify.js';
import type { SqlValue } from '../../src/store/engine.js';
import { runLog } from '../../src/cli/commands/log.js';
import { enginesUnderTest, sqliteUnderTest, type EngineUnderTest, type StoreUnderTest } from './engines.js';
import { captureIo, tempDir } from './support.js';

const engines = await enginesUnderTest();

// seq:     1  2  3  4  5  6  7  8  9
// subject: A  B  A  C  A  B  C  A  B      chains: A 1,3,5,8  B 2,6,9  C 4,7
const PLAN = ['A', 'B', 'A', 'C', 'A', 'B', 'C', 'A', 'B'] as const;

async function seeded(
  e: EngineUnderTest,
  t: TestContext,
): Promise<StoreUnderTest & { events: AppendedEvent[] }> {
  const store = await e.open(t);
  const { engine } = store;
  await migrate(engine);
  const events: AppendedEvent[] = [];
  for (const [i, subject] of PLAN.entries()) {
    const ev = await engine.transaction((tx) =>
      appendEvidence(tx, {
        subject,
        type: `step.${i}`,
        body: { i, note: 'ü', list: [i, null] },
        at: 1_700_000_000_000 + i,
        actor: 'tester',
      }),
    );
    events.push(ev);
  }
  return { ...store, events };
}

/** Change the database behind Baton's back, as an attacker with database access would. */
async function tamper(store: StoreUnderTest, sql: string, params: readonly SqlValue[] = []): Promise<void> {
  const changes = await store.tamper(sql, params);
  assert.ok(changes > 0, `tamper statement changed nothing: ${sql}`);
}

interface TamperCase {
  name: string;
  sql: string;
  params?: (events: EvidenceEvent[]) => SqlValue[];
  seq: number;
  subject: string;
  reason: RegExp;
}

const hashOf = (events: EvidenceEvent[], seq: number): string => events[seq - 1]?.hash ?? '';

/** Re-hash an edited event the way an attacker who knows the format would. */
function rehashed(events: EvidenceEvent[], seq: number, body: unknown): SqlValue[] {
  const e = events[seq - 1];
  assert.ok(e);
  const hash = evidenceHash({ ...e, body: body as EvidenceEvent['body'] });
  return [canonicalize(body), hash, seq];
}

const CASES: TamperCase[] = [
  {
    name: 'edit a body',
    sql: `UPDATE evidence_events SET body = '{"i":2}' WHERE seq = 3`,
    seq: 3,
    subject: 'A',
    reason: /hash/,
  },
  {
    name: 'edit a body into a non-canonical spelling of the same value',
    sql: `UPDATE evidence_events SET body = replace(body, ',', ', ') WHERE seq = 3`,
    seq: 3,
    subject: 'A',
    reason: /canonical/,
  },
  {
    name: 'edit a type',
    sql: `UPDATE evidence_events SET type = 'other' WHERE seq = 3`,
    seq: 3,
    subject: 'A',
    reason: /hash/,
  },
  {
    name: 'edit an actor',
    sql: `UPDATE evidence_events SET actor = 'mallory' WHERE seq = 6`,
    seq: 6,
    subject: 'B',
    reason: /hash/,
  },
  {
    name: 'edit an at',
    sql: 'UPDATE evidence_events SET at = at + 1 WHERE seq = 4',
    seq: 4,
    subject: 'C',
    reason: /hash/,
  },
  {
    // Moved to the end of another chain (the unique (subject, idx) index refuses a position it has).
    name: 'edit a subject',
    sql: `UPDATE evidence_events SET subject = 'B', idx = 4 WHERE seq = 5`,
    seq: 5,
    subject: 'B',
    reason: /hash/,
  },
  {
    name: 'edit a prev',
    sql: 'UPDATE evidence_events SET prev = ? WHERE seq = 5',
    params: (ev) => [hashOf(ev, 1)],
    seq: 5,
    subject: 'A',
    reason: /hash/,
  },
  {
    name: 'edit a hash',
    sql: 'UPDATE evidence_events SET hash = ? WHERE seq = 5',
    params: () => ['sha-256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    seq: 5,
    subject: 'A',
    reason: /hash/,
  },
  {
    name: 'edit a body and recompute its hash (the next link breaks)',
    sql: 'UPDATE evidence_events SET body = ?, hash = ? WHERE seq = ?',
    params: (ev) => rehashed(ev, 3, { i: 99 }),
    seq: 5,
    subject: 'A',
    reason: /prev does not link/,
  },
  {
    name: 'edit the last event of a chain and recompute its hash (the head breaks)',
    sql: 'UPDATE evidence_events SET body = ?, hash = ? WHERE seq = ?',
    params: (ev) => rehashed(ev, 7, { i: 99 }),
    seq: 7,
    subject: 'C',
    reason: /recorded/,
  },
  {
    name: 'delete a middle event',
    sql: 'DELETE FROM evidence_events WHERE seq = 3',
    seq: 3,
    subject: 'A',
    reason: /missing/,
  },
  {
    name: 'delete the first event of a chain',
    sql: 'DELETE FROM evidence_events WHERE seq = 1',
    seq: 1,
    subject: 'A',
    reason: /missing/,
  },
  {
    name: 'delete the last event of a chain',
    sql: 'DELETE FROM evidence_events WHERE seq = 7',
    seq: 7,
    subject: 'C',
    reason: /missing/,
  },
  {
    name: 'delete the last event of the log',
    sql: 'DELETE FROM evidence_events WHERE seq = 9',
    seq: 9,
    subject: 'B',
    reason: /missing/,
  },
  {
    name: 'delete a whole chain',
    sql: `DELETE FROM evidence_events WHERE subject = 'C'`,
    seq: 4,
    subject: 'C',
    reason: /missing/,
  },
  {
    name: 'delete a head',
    sql: `DELETE FROM evidence_heads WHERE subject = 'B'`,
    seq: 2,
    subject: 'B',
    reason: /no recorded head/,
  },
  {
    name: 'append a well-formed event behind Baton (its head not updated)',
    sql: `INSERT INTO evidence_events (seq, subject, idx, type, body, at, actor, prev, hash) VALUES (10, 'A', 5, 'forged', '{}', 1, 'm', ?, ?)`,
    params: (ev) => {
      const prev = hashOf(ev, 8);
      return [prev, evidenceHash({ subject: 'A', type: 'forged', body: {}, at: 1, actor: 'm', prev })];
    },
    seq: 10,
    subject: 'A',
    reason: /./,
  },
];

for (const e of engines) {
  test(`[${e.name}] appends chain each subject, number each chain without gaps and keep the heads`, async (t) => {
    const { engine, events } = await seeded(e, t);
    // On one connection appending alone, seq is 1, 2, 3… on both engines (in general it is only
    // unique and increasing along each chain).
    assert.deepEqual(
      events.map((e) => e.seq),
      PLAN.map((_, i) => i + 1),
    );
    const position = new Map<string, number>();
    for (const ev of events) {
      position.set(ev.subject, (position.get(ev.subject) ?? 0) + 1);
      assert.equal(ev.idx, position.get(ev.subject), `idx of seq ${ev.seq}`);
    }
    const lastHash = new Map<string, string>();
    for (const e of events) {
      assert.equal(e.prev, lastHash.get(e.subject) ?? null, `prev of seq ${e.seq}`);
      const { seq: _seq, idx: _idx, hash, ...input } = e;
      assert.equal(hash, evidenceHash(input), `hash of seq ${e.seq}`);
      lastHash.set(e.subject, hash);
    }
    assert.equal(new Set(events.map((e) => e.hash)).size, events.length);
    const listed = await engine.read((tx) => listEvidence(tx, 'A'));
    assert.deepEqual(
      listed,
      events.filter((e) => e.subject === 'A').map(({ idx: _idx, ...e }) => e),
    );
    const heads = await engine.read((tx) =>
      tx.all<{ subject: string; head: string; count: number }>(
        'SELECT subject, head, count FROM evidence_heads ORDER BY subject',
      ),
    );
    assert.deepEqual(
      heads.map((h) => [h.subject, h.head, h.count]),
      ['A', 'B', 'C'].map((s) => [s, lastHash.get(s), PLAN.filter((p) => p === s).length]),
    );
    const stored = await engine.read((tx) =>
      tx.get<{ body: string }>('SELECT body FROM evidence_events WHERE seq = 1'),
    );
    assert.equal(stored?.body, canonicalize(events[0]?.body), 'the body is stored as its JCS text');
    const report = await verifyEvidence(engine);
    assert.deepEqual(report, { ok: true, subjects: 3, events: PLAN.length, problems: 0 });
  });

  test(`[${e.name}] a run of one subject's events is the same chain as appending them one by one, in three statements a run`, async (t) => {
    const input = (subject: string, i: number): EvidenceInput => ({
      subject,
      type: `step.${i}`,
      body: { i, note: 'ü', list: [i, null] },
      at: 1_700_000_000_000 + i,
      actor: 'tester',
    });
    const runStore = await e.open(t);
    const oneStore = await e.open(t);
    await migrate(runStore.engine);
    await migrate(oneStore.engine);
    // A new chain (no head yet), then a run that continues it (head looked up, then moved).
    const statements: string[] = [];
    const runs = [
      [0, 1, 2],
      [3, 4],
    ];
    const viaRuns: AppendedEvent[] = [];
    for (const run of runs) {
      const appended = await runStore.engine.transaction((tx) => {
        const counted = new Proxy(tx, {
          get(target, key, receiver) {
            const value: unknown = Reflect.get(target, key, receiver);
            if (typeof value !== 'function') return value;
            return (sql: string, params?: readonly SqlValue[]) => {
              statements.push(sql);
              return (value as (s: string, p?: readonly SqlValue[]) => unknown).call(target, sql, params);
            };
          },
        });
        return appendEvidenceRun(
          counted,
          run.map((i) => input('R', i)),
        );
      });
      viaRuns.push(...appended);
    }
    const oneByOne: AppendedEvent[] = [];
    for (const i of runs.flat()) {
      oneByOne.push(await oneStore.engine.transaction((tx) => appendEvidence(tx, input('R', i))));
    }
    const chain = (list: AppendedEvent[]) =>
      list.map(({ idx, prev, hash, type }) => ({ idx, prev, hash, type }));
    assert.deepEqual(chain(viaRuns), chain(oneByOne));
    assert.deepEqual(
      viaRuns.map((x) => x.seq),
      [1, 2, 3, 4, 5],
    );
    if (e.kind === 'postgres') {
      // Each run: ONE call of migration 012's baton_append_evidence (docs/store.md).
      assert.equal(statements.length, 2, statements.join('\n'));
      assert.ok(statements.every((x) => x.includes('baton_append_evidence(')));
    } else {
      // Each run: head SELECT, one INSERT of all its rows, head INSERT (new chain) or UPDATE.
      assert.equal(statements.length, 6, statements.join('\n'));
      assert.equal(statements.filter((x) => x.startsWith('INSERT OR IGNORE INTO evidence_events')).length, 2);
    }
    assert.deepEqual(await verifyEvidence(runStore.engine), {
      ok: true,
      subjects: 1,
      events: 5,
      problems: 0,
    });
    const heads = await runStore.engine.read((tx) =>
      tx.all<{ head: string; count: number }>('SELECT head, count FROM evidence_heads'),
    );
    assert.deepEqual(
      heads.map((h) => [h.head, Number(h.count)]),
      [[viaRuns[4]?.hash, 5]],
    );
    await assert.rejects(
      runStore.engine.transaction((tx) => appendEvidenceRun(tx, [input('R', 5), input('S', 6)])),
      (x: unknown) => isBatonError(x, 'internal'),
    );
  });

  test(`[${e.name}] an append rolled back with its transaction leaves no trace and no gap in its chain`, async (t) => {
    const { engine, events } = await seeded(e, t);
    await assert.rejects(
      engine.transaction(async (tx) => {
        await appendEvidence(tx, { subject: 'A', type: 'doomed', body: {}, at: 1, actor: 'x' });
        throw new Error('state change failed');
      }),
    );
    const next = await engine.transaction((tx) =>
      appendEvidence(tx, { subject: 'A', type: 'kept', body: {}, at: 2, actor: 'x' }),
    );
    // The chain continues where it was (a PostgreSQL sequence may skip the doomed number in seq).
    assert.ok(next.seq > events.length);
    assert.equal(next.idx, 5);
    assert.equal(next.prev, events[7]?.hash);
    const doomed = await engine.read((tx) =>
      tx.get<{ n: number }>("SELECT COUNT(*) AS n FROM evidence_events WHERE type = 'doomed'"),
    );
    assert.equal(doomed?.n, 0);
    assert.equal((await verifyEvidence(engine)).ok, true);
  });

  test(`[${e.name}] bad input is refused before anything is written`, async (t) => {
    const { engine } = await seeded(e, t);
    const good = { subject: 'S', type: 't', body: { a: 1 }, at: 5, actor: 'x' };
    const bad: EvidenceInput[] = [
      { ...good, subject: '' },
      { ...good, subject: 'x'.repeat(MAX_SUBJECT + 1) },
      { ...good, type: 'x'.repeat(513) },
      { ...good, actor: 42 as unknown as string },
      { ...good, at: 1.5 },
      { ...good, at: -1 },
      { ...good, body: { n: Number.NaN } },
      { ...good, body: { s: '\ud800' } },
    ];
    for (const input of bad) {
      await assert.rejects(
        engine.transaction((tx) => appendEvidence(tx, input)),
        (e) => isBatonError(e, 'input_invalid') || isBatonError(e, 'jcs_unsupported_value'),
      );
    }
    const report = await verifyEvidence(engine);
    assert.equal(report.events, PLAN.length);
    t.diagnostic(`checked ${bad.length} refused inputs`);
  });

  test(`[${e.name}] verify catches every edit and deletion made behind Baton, naming the first broken link`, async (t) => {
    for (const c of CASES) {
      await t.test(c.name, async (t) => {
        const store = await seeded(e, t);
        await tamper(store, c.sql, c.params?.(store.events) ?? []);
        const report = await verifyEvidence(store.engine);
        assert.equal(report.ok, false);
        assert.equal(report.firstBroken?.seq, c.seq, report.firstBroken?.reason);
        assert.equal(report.firstBroken?.subject, c.subject, report.firstBroken?.reason);
        assert.match(report.firstBroken?.reason ?? '', c.reason);
        if (e.kind !== 'sqlite') return; // the CLI opens SQLite files only
        const path = store.location;
        const io = captureIo();
        assert.equal(await runLog(['verify', '--db', path], io), 1);
        const out = io.out.join('');
        assert.match(out, /evidence log BROKEN/);
        assert.ok(out.includes(`first broken link: seq ${c.seq}, subject ${c.subject}: `), out);
      });
    }
    t.diagnostic(`checked ${CASES.length} tampering cases`);
  });

  test(`[${e.name}] concurrent appends from several servers keep every chain whole, new chains included`, async (t) => {
    const store = await seeded(e, t);
    const servers = [store.engine, store.another(), store.another()];
    const perServer = 15;
    const appended = await Promise.all(
      servers.flatMap((engine, s) =>
        Array.from({ length: perServer }, (_, i) =>
          engine.transaction((tx) =>
            appendEvidence(tx, {
              subject: `S${i % 4}`,
              type: 'concurrent',
              body: { s, i },
              at: i,
              actor: `server${s}`,
            }),
          ),
        ),
      ),
    );
    const total = servers.length * perServer;
    assert.equal(new Set(appended.map((ev) => ev.seq)).size, total, 'seq is unique');
    assert.ok(appended.every((ev) => ev.seq > PLAN.length));
    // Each new chain got positions 1..n exactly once, however the appends interleaved.
    for (let s = 0; s < 4; s++) {
      const idx = appended.filter((ev) => ev.subject === `S${s}`).map((ev) => ev.idx);
      assert.deepEqual(
        idx.sort((a, b) => a - b),
        Array.from({ length: idx.length }, (_, i) => i + 1),
      );
    }
    const report = await verifyEvidence(store.engine);
    assert.deepEqual(report, { ok: true, subjects: 3 + 4, events: PLAN.length + total, problems: 0 });
    t.diagnostic(`checked ${total} concurrent appends from ${servers.length} engines`);
  });

  test(`[${e.name}] progress is reported while walking a long log`, async (t) => {
    const { engine } = await seeded(e, t);
    await engine.transaction(async (tx) => {
      for (let i = 0; i < 2500; i++)
        await appendEvidence(tx, { subject: `s${i % 7}`, type: 't', body: i, at: i, actor: 'x' });
    });
    const seen: number[] = [];
    const report = await verifyEvidence(engine, (p) => seen.push(p.events));
    assert.equal(report.ok, true);
    assert.equal(report.events, PLAN.length + 2500);
    assert.equal(report.subjects, 10);
    assert.ok(seen.length >= 3, 'one progress call per page');
    assert.equal(seen.at(-1), report.events);
    t.diagnostic(`checked ${report.events} events`);
  });
}

test('[sqlite] baton log verify: OK summary, exit 0; missing database or schema exit 2', async (t) => {
  const { location: path } = await seeded(sqliteUnderTest, t);
  const io = captureIo();
  assert.equal(await runLog(['verify', '--db', path], io), 0);
  assert.equal(io.out.join(''), `evidence log OK: ${PLAN.length} events in 3 subjects\n`);
  const missing = captureIo();
  assert.equal(await runLog(['verify', '--db', join(tempDir(t), 'none.db')], missing), 2);
  assert.match(missing.err.join(''), /no database/);
  const blank = join(tempDir(t), 'blank.db');
  new Database(blank).close();
  const unmigrated = captureIo();
  assert.equal(await runLog(['verify', '--db', blank], unmigrated), 2);
  assert.match(unmigrated.err.join(''), /baton migrate/);
  assert.equal(await runLog(['frobnicate', '--db', path], captureIo()), 2);
  assert.equal(await runLog(['verify', '--db', path, '--key', 'k.pem'], captureIo()), 2);
});

for (const e of engines) {
  test(`[${e.name}] hard strings hash the same in the database's function as in Baton, and verify`, async (t) => {
    const store = await e.open(t);
    await migrate(store.engine);
    // Everything JSON escapes (quotes, backslashes, control characters), U+2028, astral, DEL.
    const hard = 'q"b\\ \b\f\n\r\t \u0001\u001f\u007f \u2028\u2029 é 😀 </x>';
    const events: EvidenceInput[] = [0, 1, 2].map((i) => ({
      subject: `hard:${hard}`,
      type: `t${i}${hard}`,
      body: { [hard]: [hard, i, -0.5, 1e21, null, true] },
      at: 1_700_000_000_000 + i,
      actor: `a${hard}`,
    }));
    const appended = await store.engine.transaction(async (tx) => [
      ...(await appendEvidenceRun(tx, events.slice(0, 2))),
      await appendEvidence(tx, events[2] as EvidenceInput),
    ]);
    assert.deepEqual(
      appended.map((x) => x.hash),
      appended.map((x) => evidenceHash(x)),
    );
    assert.deepEqual(await verifyEvidence(store.engine), { ok: true, subjects: 1, events: 3, problems: 0 });
  });
}
