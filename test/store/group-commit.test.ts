/**
 * Group commit on SQLite (docs/store.md, "Group commit"): concurrent logical transactions share one
 * physical COMMIT, each in its own savepoint, and nobody is told "committed" before that COMMIT
 * returned. Observable through the engine's counters (`stats()`), a second connection on the file,
 * and the rows themselves.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { isBatonError } from '../../src/core/errors.js';
import {
  openSqliteEngine,
  type SqliteEngineOptions,
  type SqliteStoreEngine,
} from '../../src/store/sqlite.js';
import { tempDir } from './support.js';

const SCHEMA = [
  'CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, v TEXT NOT NULL)',
  // Checked at COMMIT, not at the statement: the way to make a COMMIT fail on demand.
  'CREATE TABLE child (id BIGINT NOT NULL PRIMARY KEY, t_id BIGINT NOT NULL REFERENCES t (id) DEFERRABLE INITIALLY DEFERRED)',
];

interface Fixture {
  engine: SqliteStoreEngine;
  path: string;
  /** Rows as another connection (another process) sees them on disk. */
  committed: () => number[];
}

async function fixture(t: TestContext, options: SqliteEngineOptions = {}): Promise<Fixture> {
  const path = join(tempDir(t), 'baton.db');
  // Generous time bound: these tests check which transactions share a COMMIT, not how fast.
  const engine = openSqliteEngine(path, { maxBatchMs: 60_000, ...options });
  t.after(() => engine.close());
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
  return { engine, path, committed };
}

const insert = (engine: SqliteStoreEngine, id: number): Promise<number> =>
  engine.transaction(async (tx) => {
    await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [id, `v${id}`]);
    return id;
  });

test('[sqlite] concurrent transactions share one COMMIT, and each caller is told only after it', async (t) => {
  const { engine, committed } = await fixture(t);
  const before = engine.stats();
  const n = 12;
  const seenAtResolve: number[][] = [];
  const commitsAtResolve: number[] = [];
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      insert(engine, i + 1).then(() => {
        seenAtResolve.push(committed());
        commitsAtResolve.push(engine.stats().commits);
      }),
    ),
  );
  const after = engine.stats();
  assert.equal(after.commits - before.commits, 1, 'one physical COMMIT');
  assert.equal(after.transactions - before.transactions, n);
  assert.equal(after.largestBatch, n);
  // Every caller, when told, could already read every row of the batch from another connection.
  for (const rows of seenAtResolve) assert.equal(rows.length, n);
  for (const c of commitsAtResolve) assert.equal(c, before.commits + 1);
  t.diagnostic(`checked ${n} transactions in one COMMIT`);
});

test('[sqlite] transactions arriving from separate callbacks of one event-loop turn share a COMMIT', async (t) => {
  // As HTTP requests do: each arrives in its own I/O callback, not as a continuation of another.
  const { engine, committed } = await fixture(t);
  await new Promise((resolve) => setTimeout(resolve, 5)); // the last COMMIT is turns behind
  const before = engine.stats();
  const n = 8;
  const arrivals = Array.from(
    { length: n },
    (_, i) =>
      new Promise<number>((resolve, reject) => {
        setImmediate(() => {
          insert(engine, i + 1).then(resolve, reject);
        });
      }),
  );
  assert.equal((await Promise.all(arrivals)).length, n);
  assert.equal(engine.stats().commits - before.commits, 1);
  assert.equal(committed().length, n);
});

test('[sqlite] a throw in the middle of a batch rolls back only that transaction', async (t) => {
  const { engine, committed } = await fixture(t);
  const before = engine.stats();
  const boom = new Error('refused');
  const results = await Promise.allSettled(
    [1, 2, 3, 4, 5].map((id) =>
      engine.transaction(async (tx) => {
        await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [id, `v${id}`]);
        if (id === 3) {
          await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [30, 'also gone']);
          throw boom;
        }
        return id;
      }),
    ),
  );
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
  );
  const refused = results[2];
  assert.ok(refused?.status === 'rejected' && refused.reason === boom, 'the caller gets its own error');
  assert.deepEqual(committed(), [1, 2, 4, 5]);
  const after = engine.stats();
  assert.equal(after.commits - before.commits, 1);
  assert.equal(after.transactions - before.transactions, 4);
  assert.equal(after.rolledBack - before.rolledBack, 1);
});

test('[sqlite] a failing first transaction is rolled back alone and the rest still share a COMMIT', async (t) => {
  const { engine, committed } = await fixture(t);
  const before = engine.stats();
  const results = await Promise.allSettled([
    engine.transaction(async (tx) => {
      await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [1, 'first']);
      // A failing statement: NOT NULL.
      await tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [2, null]);
    }),
    insert(engine, 3),
    insert(engine, 4),
  ]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['rejected', 'fulfilled', 'fulfilled'],
  );
  const first = results[0];
  assert.ok(first?.status === 'rejected' && isBatonError(first.reason, 'conflict'));
  assert.deepEqual(committed(), [3, 4]);
  assert.equal(engine.stats().commits - before.commits, 1);
});

test('[sqlite] a failed COMMIT rejects every transaction of the batch, refused ones included', async (t) => {
  const { engine, committed } = await fixture(t);
  const results = await Promise.allSettled([
    insert(engine, 1),
    // Succeeds as a statement; its deferred foreign key fails the batch's COMMIT.
    engine.transaction((tx) => tx.run('INSERT INTO child (id, t_id) VALUES (1, 999)')),
    engine.transaction(() => Promise.reject(new Error('refused on what the batch wrote'))),
    insert(engine, 2),
  ]);
  for (const r of results) {
    assert.equal(r.status, 'rejected');
    assert.ok(isBatonError(r.reason, 'conflict'), 'everyone gets the COMMIT failure');
    assert.equal(r.reason.details['constraint'], 'foreign_key');
  }
  assert.deepEqual(committed(), []);
  // The engine is usable afterwards: nothing was left open.
  assert.equal(await insert(engine, 7), 7);
  assert.deepEqual(committed(), [7]);
});

test('[sqlite] logical transactions still run one after another inside a batch', async (t) => {
  const { engine } = await fixture(t);
  await insert(engine, 1);
  const before = engine.stats();
  const trace: string[] = [];
  const n = 20;
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      engine.transaction(async (tx) => {
        trace.push(`begin ${i}`);
        const row = await tx.get<{ v: string }>('SELECT v FROM t WHERE id = 1');
        await tick(); // other callers get the event loop, but not the connection
        await tx.run('UPDATE t SET v = ? WHERE id = 1', [`${row?.v ?? ''}+`]);
        trace.push(`end ${i}`);
      }),
    ),
  );
  const final = await engine.read((tx) => tx.get<{ v: string }>('SELECT v FROM t WHERE id = 1'));
  assert.equal(final?.v, `v1${'+'.repeat(n)}`);
  for (let i = 0; i < trace.length; i += 2) assert.equal(trace[i]?.replace('begin', 'end'), trace[i + 1]);
  assert.ok(engine.stats().commits - before.commits < n, 'they shared COMMITs');
});

test('[sqlite] a batch is bounded by count and by time', async (t) => {
  const counted = await fixture(t, { maxBatchTransactions: 3 });
  let before = counted.engine.stats();
  await Promise.all(Array.from({ length: 10 }, (_, i) => insert(counted.engine, i + 1)));
  assert.equal(counted.engine.stats().commits - before.commits, 4, '3 + 3 + 3 + 1');
  assert.equal(counted.engine.stats().largestBatch, 3);

  const timed = await fixture(t, { maxBatchMs: 0 });
  before = timed.engine.stats();
  await Promise.all(Array.from({ length: 5 }, (_, i) => insert(timed.engine, i + 1)));
  assert.equal(timed.engine.stats().commits - before.commits, 5, 'no time left to add a second one');
  assert.deepEqual(timed.committed(), [1, 2, 3, 4, 5]);
});

test('[sqlite] transactions queued while another process holds the lock wait, then commit together', async (t) => {
  const { engine, path, committed } = await fixture(t);
  const other = new Database(path);
  t.after(() => other.close());
  other.prepare('BEGIN IMMEDIATE').run();
  const before = engine.stats();
  const waiting = Promise.all([insert(engine, 1), insert(engine, 2), insert(engine, 3)]);
  await new Promise((resolve) => setTimeout(resolve, 30));
  other.prepare('COMMIT').run();
  assert.deepEqual(await waiting, [1, 2, 3]);
  assert.equal(engine.stats().commits - before.commits, 1);
  assert.deepEqual(committed(), [1, 2, 3]);
});

test('[sqlite] a lock held past the budget fails every waiting transaction with store_busy', async (t) => {
  const { engine, path, committed } = await fixture(t, { busyTimeoutMs: 40 });
  const other = new Database(path);
  t.after(() => other.close());
  other.prepare('BEGIN IMMEDIATE').run();
  const results = await Promise.allSettled([insert(engine, 1), insert(engine, 2)]);
  other.prepare('ROLLBACK').run();
  for (const r of results) {
    assert.ok(r.status === 'rejected' && isBatonError(r.reason, 'store_busy') && r.reason.retryable);
  }
  assert.equal(await insert(engine, 3), 3);
  assert.deepEqual(committed(), [3]);
});

test('[sqlite] closing lets queued batches finish first', async (t) => {
  const { engine, committed } = await fixture(t, { maxBatchTransactions: 2 });
  const all = Promise.all(Array.from({ length: 7 }, (_, i) => insert(engine, i + 1)));
  await engine.close();
  assert.deepEqual(await all, [1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(committed(), [1, 2, 3, 4, 5, 6, 7]);
  await assert.rejects(insert(engine, 8), (e) => isBatonError(e, 'unavailable'));
});

test('[sqlite] callers that go straight from one COMMIT to their next transaction do not starve timers or I/O', async (t) => {
  const { engine } = await fixture(t);
  const perWorker = 200;
  let done = 0;
  let doneWhenTimerFired: number | undefined;
  // Registered before the load starts: it must run while the load is still going.
  setTimeout(() => (doneWhenTimerFired = done), 0);
  await Promise.all(
    Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; i < perWorker; i++) {
        await insert(engine, w * perWorker + i + 1);
        done += 1;
      }
    }),
  );
  assert.ok(doneWhenTimerFired !== undefined, 'the timer fired before the load ended');
  assert.ok(
    doneWhenTimerFired < 8 * perWorker,
    `timer fired after ${doneWhenTimerFired} of ${8 * perWorker}`,
  );
  assert.ok(engine.stats().commits < 8 * perWorker, 'and the callers still shared COMMITs');
});

test('[sqlite] transactions that keep arriving over the next turns of the event loop join the batch', async (t) => {
  const { engine, committed } = await fixture(t);
  const before = engine.stats();
  // Callbacks stand for I/O (HTTP requests): two arrive in one turn, the third one turn later,
  // after the first batch would have started had it not waited while transactions kept coming.
  const inTurn = (turns: number, id: number): Promise<number> =>
    new Promise<number>((resolve, reject) => {
      const step = (left: number): void => {
        if (left > 0) setImmediate(() => step(left - 1));
        else insert(engine, id).then(resolve, reject);
      };
      setImmediate(() => step(turns));
    });
  assert.deepEqual(await Promise.all([inTurn(0, 1), inTurn(0, 2), inTurn(1, 3)]), [1, 2, 3]);
  const after = engine.stats();
  assert.equal(after.transactions - before.transactions, 3);
  assert.equal(after.commits - before.commits, 1, 'one COMMIT (one fsync) for the three');
  assert.deepEqual(committed(), [1, 2, 3]);
});
