/**
 * The PostgreSQL engine's own behaviour (the contract both engines share is in engine.test.ts):
 * placeholders, types, settings, retries, failed statements, lost connections, the migration lock.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import pg from 'pg';
import { isBatonError } from '../../src/core/errors.js';
import { openPostgresEngine } from '../../src/store/postgres.js';
import {
  parseInteger,
  parseNumeric,
  StatementTexts,
  toPostgresPlaceholders,
} from '../../src/store/postgres-sql.js';
import type { StoreEngine, Transaction } from '../../src/store/engine.js';
import { postgresForTests, withClient } from '../support/postgres.js';
import { postgresUnderTest, type EngineUnderTest, type StoreUnderTest } from './engines.js';
import { gate } from './support.js';

const SCHEMA = 'CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, v TEXT NOT NULL)';

function migrationTx<T>(engine: StoreEngine, fn: (tx: Transaction) => Promise<T>): Promise<T> {
  if (engine.migrationTransaction === undefined) throw new Error('the engine has no migration transactions');
  return engine.migrationTransaction(fn);
}

test('? becomes $n outside string literals, quoted identifiers and comments', (t) => {
  const cases: [string, string, number][] = [
    ['SELECT ?, ? FROM t WHERE a = ?', 'SELECT $1, $2 FROM t WHERE a = $3', 3],
    ["SELECT 'it''s ?' , ?", "SELECT 'it''s ?' , $1", 1],
    ['SELECT "we?""ird" FROM t WHERE x=?', 'SELECT "we?""ird" FROM t WHERE x=$1', 1],
    ['SELECT 1 -- why? because\nWHERE a = ?', 'SELECT 1 -- why? because\nWHERE a = $1', 1],
    ['SELECT /* ? */ ? /* ?', 'SELECT /* ? */ $1 /* ?', 1],
    ["INSERT INTO t VALUES ('a\\', ?)", "INSERT INTO t VALUES ('a\\', $1)", 1],
    ["SELECT 'unterminated ?", "SELECT 'unterminated ?", 0],
    ['SELECT 1', 'SELECT 1', 0],
  ];
  for (const [sql, text, params] of cases)
    assert.deepEqual(toPostgresPlaceholders(sql), { text, params }, sql);
  t.diagnostic(`checked ${cases.length} cases`);
});

// Tokens, each with its SQLite spelling and the PostgreSQL spelling expected once numbered.
const token = fc.oneof(
  fc.constant({ sqlite: '?', placeholder: true }),
  fc
    .stringMatching(/^[a-z0-9_ ,=()<>+*.-]{1,8}$/)
    .map((s) => ({ sqlite: s.replace(/--|\/\*/g, ' '), placeholder: false })),
  fc.string({ maxLength: 8 }).map((s) => ({ sqlite: `'${s.replace(/'/g, "''")}'`, placeholder: false })),
  fc.string({ maxLength: 8 }).map((s) => ({ sqlite: `"${s.replace(/"/g, '""')}"`, placeholder: false })),
  fc.string({ maxLength: 8 }).map((s) => ({ sqlite: `-- ${s.replace(/\n/g, ' ')}\n`, placeholder: false })),
  fc
    .string({ maxLength: 8 })
    .map((s) => ({ sqlite: `/* ${s.replace(/\*\//g, ' ')} */`, placeholder: false })),
);

test('property: every placeholder token, and only those, is numbered in order', (t) => {
  let checked = 0;
  fc.assert(
    fc.property(fc.array(token, { maxLength: 20 }), (tokens) => {
      let n = 0;
      const expected = tokens.map((tk) => (tk.placeholder ? `$${++n}` : tk.sqlite)).join(' ');
      const got = toPostgresPlaceholders(tokens.map((tk) => tk.sqlite).join(' '));
      assert.deepEqual(got, { text: expected, params: n });
      checked += 1;
    }),
    { numRuns: 500 },
  );
  t.diagnostic(`checked ${checked} generated statements`);
});

test('a placeholder count that differs from the parameters is refused before PostgreSQL sees it', () => {
  const texts = new StatementTexts(2);
  assert.equal(texts.get('SELECT ?', 1).text, 'SELECT $1');
  for (const [sql, given] of [
    ['SELECT ?', 0],
    ['SELECT ?, ?', 3],
    ['SELECT 1', 1],
  ] as const) {
    assert.throws(
      () => texts.get(sql, given),
      (e) => isBatonError(e, 'internal') && /placeholder/.test(e.message),
    );
  }
});

test('integers parse to numbers within the safe range and to bigints beyond', () => {
  const max = Number.MAX_SAFE_INTEGER;
  assert.equal(parseInteger(String(max)), max);
  assert.equal(parseInteger(String(-max)), -max);
  assert.equal(parseInteger('0'), 0);
  assert.equal(parseInteger(String(max + 1)), BigInt(max) + 1n);
  assert.equal(parseInteger('-9007199254740992'), -9007199254740992n);
  assert.equal(parseInteger('9223372036854775807'), 9223372036854775807n);
  assert.equal(parseNumeric('42'), 42);
  assert.equal(parseNumeric('99999999999999999999'), 99999999999999999999n);
  assert.equal(parseNumeric('2.5'), 2.5);
});

const db = await postgresForTests();

if (db !== undefined) {
  const plain = postgresUnderTest(db, 'postgres');
  const serializable = postgresUnderTest(db, 'postgres serializable', { isolation: 'serializable' });

  const fresh = async (e: EngineUnderTest, t: TestContext): Promise<StoreUnderTest> => {
    const store = await e.open(t);
    await store.engine.transaction((tx) => tx.run(SCHEMA));
    await store.engine.transaction((tx) => tx.run("INSERT INTO t (id, v) VALUES (1, 'a')"));
    return store;
  };

  const settings = (engine: StoreEngine, read: boolean): Promise<Record<string, string>> => {
    const show = async (tx: { get<R extends object>(sql: string): Promise<R | undefined> }) => {
      const out: Record<string, string> = {};
      for (const name of [
        'transaction_isolation',
        'transaction_read_only',
        'synchronous_commit',
        'lock_timeout',
      ]) {
        out[name] = (await tx.get<Record<string, string>>(`SHOW ${name}`))?.[name] ?? '';
      }
      return out;
    };
    return read ? engine.read(show) : engine.transaction(show);
  };

  test('[postgres] transactions are durable whatever the session default; reads are one read-only snapshot', async (t) => {
    const store = await plain.open(t);
    const url = new URL(store.location);
    url.searchParams.set('options', `${url.searchParams.get('options') ?? ''} -c synchronous_commit=off`);
    const lax = openPostgresEngine(url.toString(), { busyTimeoutMs: 1234 });
    t.after(() => lax.close());
    assert.deepEqual(await settings(lax, false), {
      transaction_isolation: 'read committed',
      transaction_read_only: 'off',
      synchronous_commit: 'on',
      lock_timeout: '1234ms',
    });
    assert.deepEqual(await settings(lax, true), {
      transaction_isolation: 'repeatable read',
      transaction_read_only: 'on',
      synchronous_commit: 'off',
      lock_timeout: '1234ms',
    });
    const strict = await serializable.open(t);
    assert.equal((await settings(strict.engine, false)).transaction_isolation, 'serializable');
    await assert.rejects(
      lax.read((tx) => tx.run(SCHEMA)),
      /read-only/,
    );
  });

  test("[postgres] BIGINT beyond the safe range is an exact bigint; the type parsers are the engine's own", async (t) => {
    const store = await fresh(plain, t);
    const big = 9223372036854775807n;
    await store.engine.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [big, 'big']));
    const row = await store.engine.read((tx) =>
      tx.get<{ id: unknown; yes: unknown; no: unknown }>(
        'SELECT id, id > 0 AS yes, EXISTS (SELECT 1 FROM t WHERE id = 2) AS no FROM t WHERE v = ?',
        ['big'],
      ),
    );
    assert.deepEqual(row, { id: big, yes: 1, no: 0 }, 'booleans are 1/0 as SQLite returns them');
    // The process-wide `pg` defaults are untouched: another user of `pg` still gets strings.
    const global = pg.types.getTypeParser(pg.types.builtins.INT8) as (text: string) => unknown;
    assert.equal(global('5'), '5');
    const raw = await withClient(store.location, (c) =>
      c.query<{ id: unknown }>('SELECT id FROM t WHERE id = 1'),
    );
    assert.equal(raw.rows[0]?.id, '1');
  });

  test('[postgres serializable] a serialization failure re-runs the transaction function, which then sees the other commit', async (t) => {
    const store = await fresh(serializable, t);
    const other = store.another();
    let runs = 0;
    await store.engine.transaction(async (tx) => {
      runs += 1;
      const row = await tx.get<{ v: string }>('SELECT v FROM t WHERE id = 1');
      if (runs === 1) await other.transaction((w) => w.run("UPDATE t SET v = 'other' WHERE id = 1"));
      await tx.run('UPDATE t SET v = ? WHERE id = 1', [`${row?.v}+mine`]);
    });
    assert.equal(runs, 2);
    const v = await store.engine.read((tx) => tx.get<{ v: string }>('SELECT v FROM t WHERE id = 1'));
    assert.equal(v?.v, 'other+mine', 'no update was lost');
  });

  test('[postgres serializable] retries are bounded: then store_busy, retryable', async (t) => {
    const store = await serializable.open(t);
    await store.engine.transaction((tx) => tx.run(SCHEMA));
    await store.engine.transaction((tx) => tx.run("INSERT INTO t (id, v) VALUES (1, 'a')"));
    const engine = store.another({});
    const bounded = openPostgresEngine(store.location, { isolation: 'serializable', maxAttempts: 3 });
    t.after(() => bounded.close());
    let runs = 0;
    await assert.rejects(
      bounded.transaction(async (tx) => {
        runs += 1;
        await tx.get('SELECT v FROM t WHERE id = 1');
        await engine.transaction((w) => w.run('UPDATE t SET v = ? WHERE id = 1', [`other ${runs}`]));
        await tx.run("UPDATE t SET v = 'mine' WHERE id = 1");
      }),
      (e) => isBatonError(e, 'store_busy') && e.retryable && e.details['attempts'] === 3,
    );
    assert.equal(runs, 3);
    const v = await engine.read((tx) => tx.get<{ v: string }>('SELECT v FROM t WHERE id = 1'));
    assert.equal(v?.v, 'other 3');
  });

  for (const e of [plain, serializable]) {
    test(`[${e.name}] a deadlock re-runs the transaction that lost it, and both commit`, async (t) => {
      const store = await fresh(e, t);
      await store.engine.transaction((tx) => tx.run("INSERT INTO t (id, v) VALUES (2, 'b')"));
      const other = store.another();
      const locked = [gate(), gate()];
      let runs = 0;
      const cross = (engine: StoreEngine, first: number, second: number, mine: number) =>
        engine.transaction(async (tx) => {
          runs += 1;
          await tx.run('UPDATE t SET v = v || ? WHERE id = ?', [`+${mine}`, first]);
          locked[mine]?.open();
          await Promise.all(locked.map((g) => g.wait));
          await tx.run('UPDATE t SET v = v || ? WHERE id = ?', [`+${mine}`, second]);
        });
      await Promise.all([cross(store.engine, 1, 2, 0), cross(other, 2, 1, 1)]);
      // The loser runs again at least once. Usually once: its rerun waits for the winner's locks.
      // But the winner, woken by the loser's rollback, must still take the row it waited for, and
      // the rerun may take that row first (then each waits for the other: a second deadlock, a
      // third run), and under SERIALIZABLE a rerun that starts before the winner commits meets its
      // update and runs again. Either way both commit, each exactly once (the rows below).
      assert.ok(runs >= 3, `runs: ${runs}`);
      const rows = await store.engine.read((tx) => tx.all<{ v: string }>('SELECT v FROM t ORDER BY id'));
      assert.deepEqual(
        rows.map((r) => r.v.split('+').sort()),
        [
          ['0', '1', 'a'],
          ['0', '1', 'b'],
        ],
      );
    });
  }

  test('[postgres] a failed statement ends the transaction: going on is refused, nothing commits', async (t) => {
    const { engine } = await fresh(plain, t);
    const insertTwice = async (tx: { run(sql: string): Promise<unknown> }): Promise<unknown> => {
      await tx.run("INSERT INTO t (id, v) VALUES (5, 'kept?')");
      return tx.run("INSERT INTO t (id, v) VALUES (1, 'dup')").catch((e: unknown) => e);
    };
    await assert.rejects(
      engine.transaction(async (tx) => {
        assert.ok(isBatonError(await insertTwice(tx), 'conflict'));
        await tx.run("INSERT INTO t (id, v) VALUES (6, 'more')");
      }),
      (e) => isBatonError(e, 'internal') && /after a failed one/.test(e.message),
    );
    await assert.rejects(
      engine.transaction(insertTwice),
      (e) => isBatonError(e, 'internal') && isBatonError(e.cause, 'conflict'),
    );
    const ids = await engine.read((tx) => tx.all<{ id: number }>('SELECT id FROM t ORDER BY id'));
    assert.deepEqual(ids, [{ id: 1 }]);
  });

  test('[postgres] an unreachable server is unavailable, and the password never shows', async () => {
    const engine = openPostgresEngine('postgres://baton:sekrit-pw@127.0.0.1:1/nowhere', {
      connectionTimeoutMs: 1000,
    });
    const error = await engine.read(() => Promise.resolve(1)).catch((e: unknown) => e);
    assert.ok(isBatonError(error, 'unavailable') && error.retryable);
    assert.ok(!JSON.stringify({ m: error.message, d: error.details }).includes('sekrit'));
    await engine.close();
  });

  test('[postgres] a connection lost mid-transaction or while idle: unavailable once, then the pool recovers', async (t) => {
    const idleErrors: Error[] = [];
    const reported = gate();
    const store = await plain.open(t);
    const engine = openPostgresEngine(store.location, {
      onIdleError: (e) => {
        idleErrors.push(e);
        reported.open();
      },
    });
    t.after(() => engine.close());
    await engine.transaction((tx) => tx.run(SCHEMA));
    const kill = (pid: number): Promise<unknown> =>
      withClient(store.location, (c) => c.query('SELECT pg_terminate_backend($1)', [pid]));
    const pidOf = async (tx: { get<R extends object>(sql: string): Promise<R | undefined> }) =>
      Number((await tx.get<{ pid: number }>('SELECT pg_backend_pid() AS pid'))?.pid);
    await assert.rejects(
      engine.transaction(async (tx) => {
        await tx.run("INSERT INTO t (id, v) VALUES (1, 'lost')");
        await kill(await pidOf(tx));
        await tx.run("INSERT INTO t (id, v) VALUES (2, 'lost')");
      }),
      (e) => isBatonError(e, 'unavailable'),
    );
    const idle = await engine.read(pidOf);
    await kill(idle);
    await reported.wait;
    assert.equal(idleErrors.length, 1, 'the idle connection error reached onIdleError instead of crashing');
    await engine.transaction((tx) => tx.run("INSERT INTO t (id, v) VALUES (3, 'after')"));
    const rows = await engine.read((tx) => tx.all<{ id: number }>('SELECT id FROM t'));
    assert.deepEqual(rows, [{ id: 3 }]);
  });

  test("[postgres] an idle pooled connection stays open for idleTimeoutMs (default a minute, past pg's 10 s), then closes", async (t) => {
    const store = await plain.open(t);
    const kept = openPostgresEngine(store.location);
    // 1.5 s, not less: the check that it is open after its read opens a connection of its own,
    // which under a loaded machine took longer than a 100 ms idle timeout (the test failed).
    const brief = openPostgresEngine(store.location, { idleTimeoutMs: 1_500 });
    t.after(() => Promise.all([kept.close(), brief.close()]));
    const pidOf = async (tx: { get<R extends object>(sql: string): Promise<R | undefined> }) =>
      Number((await tx.get<{ pid: number }>('SELECT pg_backend_pid() AS pid'))?.pid);
    const open = (pid: number): Promise<boolean> =>
      withClient(store.location, async (c) => {
        const r = await c.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1',
          [pid],
        );
        return r.rows[0]?.n === 1;
      });
    const started = Date.now();
    const keptPid = await kept.read(pidOf);
    const briefPid = await brief.read(pidOf);
    assert.ok((await open(keptPid)) && (await open(briefPid)), 'both connections are open after their read');
    // The brief one closes on its own (polled: the pool's timer, then the server's exit).
    while ((await open(briefPid)) && Date.now() - started < 10_000)
      await new Promise((r) => setTimeout(r, 50));
    assert.equal(await open(briefPid), false, 'closed after idleTimeoutMs');
    // Past pg's own default of 10 s, which closed it before: no new backend, no first-use work.
    while (Date.now() - started < 11_000) await new Promise((r) => setTimeout(r, 100));
    assert.equal(await open(keptPid), true, "the default keeps it past pg's 10 s");
    assert.equal(await kept.read(pidOf), keptPid, 'the next read reuses it');
  });

  test('[postgres] close() lets a running transaction commit, then refuses work', async (t) => {
    const { engine, location } = await fresh(plain, t);
    const hold = gate();
    const inside = gate();
    const running = engine.transaction(async (tx) => {
      inside.open();
      await hold.wait;
      await tx.run("INSERT INTO t (id, v) VALUES (2, 'late')");
    });
    await inside.wait;
    const closing = engine.close();
    await assert.rejects(
      engine.read(() => Promise.resolve()),
      (e) => isBatonError(e, 'unavailable'),
    );
    hold.open();
    await running;
    await closing;
    const rows = await withClient(location, (c) => c.query('SELECT v FROM t WHERE id = 2'));
    assert.deepEqual(rows.rows, [{ v: 'late' }]);
  });

  test('[postgres] migration transactions of two servers run one after the other, the second seeing the first', async (t) => {
    const store = await plain.open(t);
    const a = store.engine;
    const b = store.another();
    const trace: string[] = [];
    const hold = gate();
    const inside = gate();
    const first = migrationTx(a, async (tx) => {
      trace.push('a begins');
      await tx.run(SCHEMA);
      inside.open();
      await hold.wait;
      trace.push('a ends');
    });
    await inside.wait;
    // The engine sends BEGIN with the first statement, so b's function may start at once; its
    // first statement is what waits for a's lock and commit.
    const second = migrationTx(b, async (tx) => {
      const inserted = await tx.run("INSERT INTO t (id, v) VALUES (1, 'b')");
      trace.push('b ran');
      return inserted;
    });
    await new Promise((r) => setTimeout(r, 50));
    trace.push('a released');
    hold.open();
    await first;
    assert.equal((await second).changes, 1, "b's statements see the table a committed");
    assert.deepEqual(trace, ['a begins', 'a released', 'a ends', 'b ran']);
  });
}
