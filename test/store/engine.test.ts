import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import { isBatonError } from '../../src/core/errors.js';
import { openSqliteEngine } from '../../src/store/sqlite.js';
import { isUniqueViolation } from '../../src/store/errors.js';
import type { StoreEngine, Transaction } from '../../src/store/engine.js';
import {
  enginesUnderTest,
  sqliteThreadUnderTest,
  type EngineOptions,
  type EngineUnderTest,
  type StoreUnderTest,
} from './engines.js';
import { gate, tempDir } from './support.js';

const SCHEMA = 'CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, v TEXT NOT NULL)';

// The contract holds with the SQLite writer on its own thread too (docs/store.md "The writer thread").
const engines = [...(await enginesUnderTest()), sqliteThreadUnderTest];

async function fresh(e: EngineUnderTest, t: TestContext, options?: EngineOptions): Promise<StoreUnderTest> {
  const store = await e.open(t, options);
  await store.engine.transaction((tx) => tx.run(SCHEMA));
  return store;
}

const count = (engine: StoreEngine): Promise<number> =>
  engine.read(async (tx) => Number((await tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM t'))?.n));

// The contract: every engine behaves the same way for these.
for (const e of engines) {
  test(`[${e.name}] a transaction commits when fn resolves and returns its value`, async (t) => {
    const { engine } = await fresh(e, t);
    const value = await engine.transaction(async (tx) => {
      await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [1, 'a']);
      return (await tx.get<{ v: string }>('SELECT v FROM t WHERE id = ?', [1]))?.v;
    });
    assert.equal(value, 'a');
    assert.equal(await count(engine), 1);
  });

  test(`[${e.name}] a throw rolls everything back and the same error reaches the caller`, async (t) => {
    const { engine } = await fresh(e, t);
    const boom = new Error('boom');
    await assert.rejects(
      engine.transaction(async (tx) => {
        await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [1, 'a']);
        throw boom;
      }),
      (error) => error === boom,
    );
    // A failing statement (NOT NULL) after a good one also rolls the good one back.
    await assert.rejects(
      engine.transaction(async (tx) => {
        await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [2, 'b']);
        await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [3, null]);
      }),
      (error) => isBatonError(error, 'conflict') && error.details['constraint'] === 'not_null',
    );
    assert.equal(await count(engine), 0);
    // The connection is usable afterwards (no transaction left open).
    await engine.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [4, 'd']));
    assert.equal(await count(engine), 1);
  });

  test(`[${e.name}] concurrent read-lock-write transactions lose no update`, async (t) => {
    const { engine } = await fresh(e, t);
    await engine.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (1, ?)', ['0']));
    const n = 25;
    await Promise.all(
      Array.from({ length: n }, () =>
        engine.transaction(async (tx) => {
          // The port's rule: a SELECT that decides a write locks what it reads.
          const row = await tx.get<{ v: string }>(`SELECT v FROM t WHERE id = 1${tx.forUpdate}`);
          await tick(); // give every other transaction a chance to run in between
          await tx.run('UPDATE t SET v = ? WHERE id = 1', [String(Number(row?.v) + 1)]);
        }),
      ),
    );
    const final = await engine.read((tx) => tx.get<{ v: string }>('SELECT v FROM t WHERE id = 1'));
    assert.equal(final?.v, String(n));
    t.diagnostic(`checked ${n} concurrent transactions`);
  });

  test(`[${e.name}] with the nesting check, a nested transaction or read is refused instead of deadlocking`, async (t) => {
    const { engine } = await fresh(e, t, { nestingCheck: true });
    await assert.rejects(
      engine.transaction(() => engine.transaction(() => Promise.resolve(1))),
      (err) => isBatonError(err, 'internal'),
    );
    await assert.rejects(
      engine.transaction(() => engine.read(() => Promise.resolve(1))),
      (err) => isBatonError(err, 'internal'),
    );
    // After the outer transaction ended, the same async context may open a new one.
    await engine.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (1, ?)', ['x']));
    assert.equal(await count(engine), 1);
  });

  test(`[${e.name}] a transaction handle is dead after its transaction ends`, async (t) => {
    const { engine } = await fresh(e, t);
    let leaked: Transaction | undefined;
    await engine.transaction((tx) => {
      leaked = tx;
      return Promise.resolve();
    });
    assert.ok(leaked);
    await assert.rejects(leaked.run('INSERT INTO t (id, v) VALUES (1, ?)', ['x']), (err) =>
      isBatonError(err, 'internal'),
    );
    assert.equal(await count(engine), 0);
  });

  test(`[${e.name}] foreign keys are enforced and reported as a foreign_key conflict`, async (t) => {
    const { engine } = await fresh(e, t);
    await engine.transaction((tx) =>
      tx.run('CREATE TABLE c (id BIGINT NOT NULL PRIMARY KEY, t_id BIGINT NOT NULL REFERENCES t (id))'),
    );
    await assert.rejects(
      engine.transaction((tx) => tx.run('INSERT INTO c (id, t_id) VALUES (1, 99)')),
      (err) =>
        isBatonError(err, 'conflict') &&
        err.details['constraint'] === 'foreign_key' &&
        !isUniqueViolation(err),
    );
  });

  test(`[${e.name}] a unique violation is a conflict that isUniqueViolation recognises`, async (t) => {
    const { engine } = await fresh(e, t);
    await engine.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (1, ?)', ['a']));
    const error = await engine
      .transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (1, ?)', ['b']))
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    assert.ok(isBatonError(error, 'conflict'));
    assert.equal(isUniqueViolation(error), true);
    assert.equal(isUniqueViolation(error.cause), true, 'the raw driver error is recognised too');
    assert.equal(isUniqueViolation({ code: '23505' }), true, 'PostgreSQL unique_violation');
    assert.equal(isUniqueViolation({ code: '23503' }), false);
    assert.equal(isUniqueViolation(new Error('x')), false);
    // ON CONFLICT DO NOTHING is the portable way to expect a conflict without failing.
    const { changes } = await engine.transaction((tx) =>
      tx.run('INSERT INTO t (id, v) VALUES (1, ?) ON CONFLICT DO NOTHING', ['c']),
    );
    assert.equal(changes, 0);
  });

  test(`[${e.name}] statements issued together run in the order they were issued, the first read included`, async (t) => {
    const { engine } = await fresh(e, t);
    const [, inserted, seen] = await engine.transaction((tx) =>
      Promise.all([
        tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM t'),
        tx.run('INSERT INTO t (id, v) VALUES (1, ?)', ['a']),
        tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM t'),
      ]),
    );
    assert.equal(inserted.changes, 1);
    assert.equal(Number(seen?.n), 1, 'the read issued after the write sees it');
  });

  test(`[${e.name}] a text value with U+0000 is refused typed, before anything is written, and the transaction goes on`, async (t) => {
    const { engine } = await fresh(e, t);
    const outcome = await engine.transaction(async (tx) => {
      const error = await tx
        .run('INSERT INTO t (id, v) VALUES (1, ?)', ['a\u0000b'])
        .catch((x: unknown) => x);
      await tx.run('INSERT INTO t (id, v) VALUES (2, ?)', ['after']);
      return error;
    });
    assert.ok(isBatonError(outcome, 'input_invalid'), String(outcome));
    assert.equal(outcome.details['parameter'], 1);
    const rows = await engine.read((tx) => tx.all<{ id: number }>('SELECT id FROM t ORDER BY id'));
    assert.deepEqual(rows, [{ id: 2 }]);
  });

  test(`[${e.name}] read() sees committed data only, and does not wait for an open write transaction`, async (t) => {
    const { engine } = await fresh(e, t);
    await engine.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (1, ?)', ['a']));
    const hold = gate();
    const inserted = gate();
    const writer = engine.transaction(async (tx) => {
      await tx.run('INSERT INTO t (id, v) VALUES (2, ?)', ['b']);
      inserted.open();
      await hold.wait;
    });
    await inserted.wait;
    assert.equal(await count(engine), 1, 'the uncommitted row is invisible to readers');
    hold.open();
    await writer;
    assert.equal(await count(engine), 2);
  });

  test(`[${e.name}] read() sees one snapshot for all its statements`, async (t) => {
    const store = await fresh(e, t);
    const other = store.another();
    await store.engine.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (1, ?)', ['a']));
    const counts = await store.engine.read(async (tx) => {
      const first = await tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM t');
      await other.transaction((w) => w.run('INSERT INTO t (id, v) VALUES (2, ?)', ['b']));
      const second = await tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM t');
      return [first?.n, second?.n];
    });
    assert.deepEqual(counts, [1, 1], 'a commit made during the read is not seen by it');
    assert.equal(await count(store.engine), 2);
  });

  test(`[${e.name}] two engines on one store (a second process or server): each sees the other, a writer waiting for a lock waits or fails typed`, async (t) => {
    const store = await fresh(e, t);
    const a = store.engine;
    const b = store.another({ busyTimeoutMs: 5000 });
    const impatient = store.another({ busyTimeoutMs: 30 });
    await a.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (1, ?)', ['from a']));
    assert.equal(await count(b), 1);

    const hold = gate();
    const begun = gate();
    const holder = a.transaction(async (tx) => {
      await tx.run('UPDATE t SET v = ? WHERE id = 1', ['held']);
      begun.open();
      await hold.wait;
    });
    await begun.wait;
    // The impatient engine gives up with a typed, retryable error.
    await assert.rejects(
      impatient.transaction((tx) => tx.run('UPDATE t SET v = ? WHERE id = 1', ['impatient'])),
      (err) => isBatonError(err, 'store_busy') && err.retryable,
    );
    // The patient one waits (asynchronously, so this process can still release the lock) and then commits.
    const waiter = b.transaction((tx) => tx.run('UPDATE t SET v = ? WHERE id = 1', ['from b']));
    await tick();
    hold.open();
    await holder;
    assert.equal((await waiter).changes, 1);
    const rows = await a.read((tx) => tx.all<{ id: number; v: string }>('SELECT id, v FROM t ORDER BY id'));
    assert.deepEqual(rows, [{ id: 1, v: 'from b' }]);
  });

  test(`[${e.name}] integers come back as numbers, as SQLite returns them`, async (t) => {
    const { engine } = await fresh(e, t);
    const ids = [1, 2, 2 ** 40, Number.MAX_SAFE_INTEGER - 3];
    await engine.transaction(async (tx) => {
      for (const id of ids) await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [id, String(id)]);
    });
    // SUM is NUMERIC on PostgreSQL, COUNT and MAX are BIGINT: all numbers, as on SQLite.
    const row = await engine.read((tx) =>
      tx.get<Record<string, unknown>>(
        'SELECT COUNT(*) AS n, MAX(id) AS top, MIN(id) AS low, (SELECT SUM(id) FROM t WHERE id < ?) AS sum FROM t',
        [2 ** 41],
      ),
    );
    assert.deepEqual(row, { n: ids.length, top: Number.MAX_SAFE_INTEGER - 3, low: 1, sum: 3 + 2 ** 40 });
    const listed = await engine.read((tx) => tx.all<{ id: unknown }>('SELECT id FROM t ORDER BY id'));
    assert.deepEqual(
      listed.map((r) => r.id),
      ids,
    );
  });

  test(`[${e.name}] a closed engine refuses work`, async (t) => {
    const { engine } = await fresh(e, t);
    await engine.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (1, ?)', ['a']));
    await engine.close();
    await assert.rejects(count(engine), (err) => isBatonError(err, 'unavailable'));
    await assert.rejects(
      engine.transaction(() => Promise.resolve()),
      (err) => isBatonError(err, 'unavailable'),
    );
    await engine.close(); // closing twice is harmless
  });
}

// SQLite only: how its one connection and its file behave.

async function freshSqlite(t: TestContext, options = {}): Promise<StoreEngine> {
  const engine = openSqliteEngine(join(tempDir(t), 'baton.db'), options);
  t.after(() => engine.close());
  await engine.transaction((tx) => tx.run(SCHEMA));
  return engine;
}

test('[sqlite] concurrent transactions of one engine never interleave', async (t) => {
  const engine = await freshSqlite(t);
  await engine.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (1, ?)', ['0']));
  const trace: string[] = [];
  const n = 25;
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      engine.transaction(async (tx) => {
        trace.push(`begin ${i}`);
        const row = await tx.get<{ v: string }>('SELECT v FROM t WHERE id = 1');
        await tick();
        await tx.run('UPDATE t SET v = ? WHERE id = 1', [String(Number(row?.v) + 1)]);
        trace.push(`end ${i}`);
      }),
    ),
  );
  const final = await engine.read((tx) => tx.get<{ v: string }>('SELECT v FROM t WHERE id = 1'));
  assert.equal(final?.v, String(n), 'even without a lock: SQLite runs one writer at a time');
  for (let i = 0; i < trace.length; i += 2) {
    assert.equal(trace[i]?.replace('begin', 'end'), trace[i + 1], 'each begin is followed by its own end');
  }
  t.diagnostic(`checked ${n} concurrent transactions`);
});

test('[sqlite] pragmas: WAL, synchronous FULL, foreign keys enforced', async (t) => {
  const engine = await freshSqlite(t);
  const pragmas = await engine.transaction(async (tx) => ({
    journal: (await tx.get<{ journal_mode: string }>('PRAGMA journal_mode'))?.journal_mode,
    sync: (await tx.get<{ synchronous: number }>('PRAGMA synchronous'))?.synchronous,
    fk: (await tx.get<{ foreign_keys: number }>('PRAGMA foreign_keys'))?.foreign_keys,
    fullfsync: (await tx.get<{ fullfsync: number }>('PRAGMA fullfsync'))?.fullfsync,
  }));
  assert.deepEqual(pragmas, { journal: 'wal', sync: 2, fk: 1, fullfsync: 1 });
});

test('[sqlite] an in-memory engine works and a closed one refuses work', async () => {
  const engine = openSqliteEngine(':memory:');
  await engine.transaction((tx) => tx.run(SCHEMA));
  await engine.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (1, ?)', ['a']));
  assert.equal(await count(engine), 1);
  await engine.close();
  await assert.rejects(count(engine), (e) => isBatonError(e, 'unavailable'));
});

test('[sqlite] a tiny statement cache still runs every statement correctly', async (t) => {
  const engine = await freshSqlite(t, { statementCacheSize: 2 });
  await engine.transaction(async (tx) => {
    for (let i = 0; i < 10; i++) await tx.run(`INSERT INTO t (id, v) VALUES (?, '${i % 3}')`, [i]);
  });
  const rows = await engine.read((tx) =>
    tx.all<{ v: string; n: number }>('SELECT v, COUNT(*) AS n FROM t GROUP BY v ORDER BY v'),
  );
  assert.deepEqual(
    rows.map((r) => [r.v, r.n]),
    [
      ['0', 4],
      ['1', 3],
      ['2', 3],
    ],
  );
});

test('[sqlite] fileMustExist refuses to create a database', (t) => {
  const path = join(tempDir(t), 'absent.db');
  assert.throws(
    () => openSqliteEngine(path, { fileMustExist: true }),
    (e) => isBatonError(e, 'unavailable'),
  );
});
