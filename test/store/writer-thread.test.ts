/**
 * The SQLite writer on its own thread (docs/store.md, "The writer thread"; issue 16 §3): the same
 * group commit, typed errors that keep their codes across the thread boundary, a thread that stops
 * failing closed (every waiting caller answered `unavailable`, nothing half-applied, the owner told
 * once), and close() draining what was queued. The contract suite itself also runs on this engine
 * (engine.test.ts, "sqlite writer thread").
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { BatonError, isBatonError } from '../../src/core/errors.js';
import { isUniqueViolation } from '../../src/store/errors.js';
import {
  openSqliteEngine,
  type SqliteEngineOptions,
  type SqliteStoreEngine,
} from '../../src/store/sqlite.js';
import { liveWriterThreads, type ThreadWriter } from '../../src/store/sqlite-writer-thread.js';
import { gate, tempDir } from './support.js';

const SCHEMA = [
  'CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, v TEXT NOT NULL)',
  'CREATE TABLE child (id BIGINT NOT NULL PRIMARY KEY, t_id BIGINT NOT NULL REFERENCES t (id))',
];

interface Fixture {
  engine: SqliteStoreEngine;
  path: string;
  /** The rows of t as another connection (another process) sees them on disk. */
  committed: () => number[];
  /** This engine's writer thread. */
  thread: ThreadWriter;
}

async function fixture(t: TestContext, options: SqliteEngineOptions = {}): Promise<Fixture> {
  const path = join(tempDir(t), 'baton.db');
  const before = new Set(liveWriterThreads);
  const engine = openSqliteEngine(path, { maxBatchMs: 60_000, ...options, writer: 'thread' });
  t.after(() => engine.close());
  const thread = [...liveWriterThreads].find((w) => !before.has(w));
  assert.ok(thread, 'the engine started a writer thread');
  await engine.transaction(async (tx) => {
    for (const sql of SCHEMA) await tx.run(sql);
  });
  const committed = (): number[] => {
    const raw = new Database(path, { readonly: true });
    try {
      return (raw.prepare('SELECT id FROM t ORDER BY id').all() as { id: number }[]).map((r) => r.id);
    } finally {
      raw.close();
    }
  };
  return { engine, path, committed, thread };
}

const insert = (engine: SqliteStoreEngine, id: number): Promise<number> =>
  engine.transaction(async (tx) => {
    await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [id, `v${id}`]);
    return id;
  });

test('[sqlite writer thread] concurrent transactions share one COMMIT; each caller is told after it', async (t) => {
  const { engine, committed } = await fixture(t);
  const before = engine.stats();
  const seen: number[][] = [];
  const ids = [1, 2, 3, 4, 5, 6, 7, 8];
  await Promise.all(ids.map((id) => insert(engine, id).then(() => seen.push(committed()))));
  const after = engine.stats();
  assert.equal(after.transactions - before.transactions, ids.length);
  assert.equal(after.commits - before.commits, 1, 'queued in one turn: one batch, one COMMIT');
  for (const rows of seen) assert.deepEqual(rows, ids, 'told only once all of the batch was on disk');
});

test('[sqlite writer thread] a refused member rolls back alone; the others commit', async (t) => {
  const { engine, committed } = await fixture(t);
  const results = await Promise.allSettled([
    insert(engine, 1),
    engine.transaction(async (tx) => {
      await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [2, 'two']);
      throw new BatonError('conflict', 'refused by the caller');
    }),
    insert(engine, 3),
  ]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  assert.deepEqual(committed(), [1, 3]);
  assert.equal(engine.stats().rolledBack, 1);
});

test('[sqlite writer thread] driver errors cross the thread with their codes', async (t) => {
  const { engine } = await fixture(t);
  await insert(engine, 1);
  await assert.rejects(insert(engine, 1), (e) => isBatonError(e, 'conflict') && isUniqueViolation(e));
  await assert.rejects(
    engine.transaction((tx) => tx.run('INSERT INTO child (id, t_id) VALUES (1, 99)')),
    (e) => isBatonError(e, 'conflict') && e.details['constraint'] === 'foreign_key',
  );
  await assert.rejects(
    engine.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [2, 'a\u0000b'])),
    (e) => isBatonError(e, 'input_invalid'),
  );
  await assert.rejects(
    engine.transaction((tx) => tx.run('SELEC nothing')),
    (e) => e instanceof Database.SqliteError && e.code === 'SQLITE_ERROR',
  );
  // After every refusal the writer is usable and nothing of them was written.
  await insert(engine, 2);
  assert.deepEqual(await engine.read((r) => r.all('SELECT id FROM t ORDER BY id')), [{ id: 1 }, { id: 2 }]);
});

test('[sqlite writer thread] another process holding the write lock past the budget is store_busy', async (t) => {
  const { engine, path, committed } = await fixture(t, { busyTimeoutMs: 200 });
  const other = new Database(path);
  other.exec('BEGIN IMMEDIATE');
  try {
    await assert.rejects(insert(engine, 1), (e) => isBatonError(e, 'store_busy'));
  } finally {
    other.exec('ROLLBACK');
    other.close();
  }
  await insert(engine, 2);
  assert.deepEqual(committed(), [2]);
});

test('[sqlite writer thread] the pragmas hold on the thread’s connection: WAL, synchronous FULL', async (t) => {
  const { engine } = await fixture(t);
  const pragmas = await engine.transaction(async (tx) => ({
    journal: (await tx.get<{ journal_mode: string }>('PRAGMA journal_mode'))?.journal_mode,
    sync: (await tx.get<{ synchronous: number }>('PRAGMA synchronous'))?.synchronous,
    fk: (await tx.get<{ foreign_keys: number }>('PRAGMA foreign_keys'))?.foreign_keys,
  }));
  assert.deepEqual(pragmas, { journal: 'wal', sync: 2, fk: 1 });
});

test('[sqlite writer thread] a thread that dies fails closed: nothing half-applied, everyone told', async (t) => {
  let stops = 0;
  let told: (e: BatonError) => void = () => undefined;
  const stopped = new Promise<BatonError>((resolve) => (told = resolve));
  const { engine, committed, thread } = await fixture(t, {
    onWriterStop: (e) => {
      stops += 1;
      told(e);
    },
  });
  await insert(engine, 1);
  const hold = gate();
  const entered = gate();
  const inFlight = engine.transaction(async (tx) => {
    await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [2, 'two']);
    entered.open();
    await hold.wait; // the batch is open on the thread, its insert not committed
    await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [3, 'three']);
  });
  const queued = insert(engine, 4);
  await entered.wait; // the batch runs its first statement: kill the thread under it
  await thread.kill();
  const error = await stopped;
  assert.ok(isBatonError(error, 'unavailable'));
  hold.open();
  await assert.rejects(inFlight, (e) => isBatonError(e, 'unavailable'));
  await assert.rejects(queued, (e) => isBatonError(e, 'unavailable'));
  await assert.rejects(insert(engine, 5), (e) => isBatonError(e, 'unavailable'));
  assert.deepEqual(committed(), [1], 'what the dead thread had not committed is not on disk');
  assert.equal(stops, 1, 'the owner is told once');
  await engine.close();
});

test('[sqlite writer thread] close() drains what was queued, then ends the thread', async (t) => {
  const { engine, committed, thread } = await fixture(t);
  const pending = [1, 2, 3, 4, 5].map((id) => insert(engine, id));
  await engine.close();
  assert.deepEqual(await Promise.all(pending), [1, 2, 3, 4, 5]);
  assert.deepEqual(committed(), [1, 2, 3, 4, 5]);
  assert.equal(liveWriterThreads.has(thread), false);
  await assert.rejects(insert(engine, 6), (e) => isBatonError(e, 'unavailable'));
});

test('[sqlite writer thread] an in-memory database is refused (nothing else could read it)', () => {
  assert.throws(
    () => openSqliteEngine(':memory:', { writer: 'thread' }),
    (e) => isBatonError(e, 'usage'),
  );
});
