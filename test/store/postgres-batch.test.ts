/**
 * Deferred statements on PostgreSQL (migration 016's `baton_batch`, docs/store.md "One call per
 * transition"): they run in order, inside the transaction, as the statement path runs them; a read
 * after them carries them and still sees them; a guard that fails (BTN10) commits nothing and runs
 * the transaction function again statement by statement; parameters stay literals. Migration 014
 * ("One write per transition"): after a read, the deferred call leaves with the COMMIT, which a
 * failed guard turns into a rollback; an append to a held chain is hashed by Baton and refused by
 * the database unless the head is the one Baton held; a read-only snapshot ends before the next
 * transaction on its connection.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { migrate, verifyEvidence } from '../../src/store/index.js';
import { appendEvidence, deferEvidenceRun, listEvidence, startsChain } from '../../src/store/evidence-log.js';
import type { StoreEngine, Transaction } from '../../src/store/engine.js';
import { toFormatTemplate } from '../../src/store/postgres-sql.js';
import { postgresForTests } from '../support/postgres.js';
import { postgresUnderTest } from './engines.js';

test('a statement as a format() template: ? is %L outside quotes, every % doubled', () => {
  assert.deepEqual(toFormatTemplate("SELECT ? WHERE a LIKE '50%?' AND b = ? % 2"), {
    text: "SELECT %L WHERE a LIKE '50%%?' AND b = %L %% 2",
    params: 2,
  });
});

const db = await postgresForTests();

if (db !== undefined) {
  const e = postgresUnderTest(db, 'postgres');

  async function migrated(t: TestContext): Promise<StoreEngine> {
    const store = await e.open(t);
    await migrate(store.engine);
    await store.engine.transaction((tx) =>
      tx.run('CREATE TABLE t (id BIGINT NOT NULL PRIMARY KEY, v TEXT, n BIGINT NOT NULL DEFAULT 0)'),
    );
    await store.engine.transaction((tx) => tx.run("INSERT INTO t (id, v) VALUES (1, 'a')"));
    return store.engine;
  }

  const defer = (tx: Transaction, sql: string, params: (string | number | null)[], expect?: number) => {
    assert.ok(tx.defer !== undefined);
    tx.defer(sql, params, expect === undefined ? {} : { expect });
  };

  test('[postgres] deferred writes run in order before a read, which sees them, and commit', async (t) => {
    const engine = await migrated(t);
    const seen = await engine.transaction(async (tx) => {
      assert.equal(tx.deferrable, true);
      defer(tx, 'INSERT INTO t (id, v) VALUES (?, ?)', [2, "it's; DROP TABLE t; --"], 1);
      defer(tx, 'UPDATE t SET n = n + 1 WHERE id = ?', [2], 1);
      defer(tx, 'UPDATE t SET v = ? WHERE id = ?', [null, 1], 1);
      return tx.all<{ id: number; v: string | null; n: number }>('SELECT id, v, n FROM t ORDER BY id');
    });
    // The quoted parameter stayed a value; types as a plain statement's (BIGINT as number).
    assert.deepEqual(seen, [
      { id: 1, v: null, n: 0 },
      { id: 2, v: "it's; DROP TABLE t; --", n: 1 },
    ]);
    const after = await engine.read((r) => r.all('SELECT id FROM t ORDER BY id'));
    assert.deepEqual(after, [{ id: 1 }, { id: 2 }]);
  });

  test('[postgres] an amended deferred statement runs with its new parameters; once it left, amend refuses', async (t) => {
    const engine = await migrated(t);
    const refused = await engine.transaction(async (tx) => {
      assert.ok(tx.defer !== undefined);
      const write = tx.defer('INSERT INTO t (id, v) VALUES (?, ?)', [2, 'first'], { expect: 1 });
      assert.equal(write.amend([2, 'amended']), true);
      await tx.all('SELECT id FROM t'); // carries the deferred INSERT: it has left
      return write.amend([2, 'too late']);
    });
    assert.equal(refused, false);
    assert.deepEqual(await engine.read((r) => r.all('SELECT id, v FROM t ORDER BY id')), [
      { id: 1, v: 'a' },
      { id: 2, v: 'amended' },
    ]);
  });

  test('[postgres] what is still deferred when the function ends is sent before COMMIT', async (t) => {
    const engine = await migrated(t);
    await engine.transaction((tx) => Promise.resolve(defer(tx, "UPDATE t SET v = 'b' WHERE id = ?", [1], 1)));
    assert.deepEqual(await engine.read((r) => r.all('SELECT v FROM t')), [{ v: 'b' }]);
  });

  test('[postgres] a failed guard commits nothing and runs the function again, statement by statement', async (t) => {
    const engine = await migrated(t);
    const runs: boolean[] = [];
    const answer = await engine.transaction(async (tx) => {
      runs.push(tx.deferrable === true);
      if (tx.deferrable === true) {
        defer(tx, "UPDATE t SET v = 'deferred' WHERE id = ?", [1], 1);
        defer(tx, "UPDATE t SET v = 'missing' WHERE id = ?", [99], 1); // changes 0 rows: BTN10
        return 'deferred';
      }
      const { changes } = await tx.run("UPDATE t SET v = 'missing' WHERE id = ?", [99]);
      return changes === 0 ? 'refused statement by statement' : 'unexpected';
    });
    assert.deepEqual(runs, [true, false]);
    assert.equal(answer, 'refused statement by statement');
    // Nothing of the deferred run committed.
    assert.deepEqual(await engine.read((r) => r.all('SELECT v FROM t')), [{ v: 'a' }]);
  });

  test('[postgres] a rows check that throws fails the transaction even if the function goes on', async (t) => {
    const engine = await migrated(t);
    await assert.rejects(
      engine.transaction(async (tx) => {
        assert.ok(tx.defer !== undefined);
        tx.defer("UPDATE t SET v = 'x' WHERE id = 1 RETURNING id", [], {});
        tx.defer('SELECT id FROM t', [], {
          rows: () => {
            throw new Error('Baton refuses this answer');
          },
        });
        await tx.get('SELECT 1 AS one').catch(() => undefined); // swallowed by the function
      }),
    );
    assert.deepEqual(await engine.read((r) => r.all('SELECT v FROM t')), [{ v: 'a' }]);
  });

  test('[postgres] after a read, the deferred writes leave with the COMMIT, and commit', async (t) => {
    const engine = await migrated(t);
    await engine.transaction(async (tx) => {
      await tx.get('SELECT id FROM t WHERE id = ? FOR UPDATE', [1]); // the BEGIN goes out with it
      defer(tx, "UPDATE t SET v = 'with-commit' WHERE id = ?", [1], 1);
      defer(tx, 'INSERT INTO t (id, v) VALUES (?, ?)', [3, 'c'], 1);
    });
    assert.deepEqual(await engine.read((r) => r.all('SELECT id, v FROM t ORDER BY id')), [
      { id: 1, v: 'with-commit' },
      { id: 3, v: 'c' },
    ]);
  });

  test('[postgres] a failed guard in the call that carries the COMMIT commits nothing and runs again', async (t) => {
    const engine = await migrated(t);
    const runs: boolean[] = [];
    const answer = await engine.transaction(async (tx) => {
      runs.push(tx.deferrable === true);
      await tx.get('SELECT id FROM t WHERE id = ? FOR UPDATE', [1]);
      if (tx.deferrable === true) {
        defer(tx, "UPDATE t SET v = 'deferred' WHERE id = ?", [1], 1);
        defer(tx, "UPDATE t SET v = 'missing' WHERE id = ?", [99], 1); // changes 0 rows: BTN10
        return 'deferred';
      }
      return 'statement by statement';
    });
    assert.deepEqual(runs, [true, false]);
    assert.equal(answer, 'statement by statement');
    assert.deepEqual(await engine.read((r) => r.all('SELECT v FROM t')), [{ v: 'a' }]);
  });

  test('[postgres] an append on a wrongly held head is refused by the database, then appended statement by statement', async (t) => {
    const engine = await migrated(t);
    const subject = 'occurrence:held';
    const at = 1_700_000_000_000;
    await engine.transaction((tx) =>
      appendEvidence(tx, { subject, type: 'first', body: { n: 1 }, at, actor: 'a' }),
    );
    const runs: boolean[] = [];
    await engine.transaction(async (tx) => {
      runs.push(tx.deferrable === true);
      // A wrong hint (the chain exists): Baton hashes from an empty head, the database refuses it.
      startsChain(tx, subject);
      await tx.get('SELECT 1 AS one');
      const second = { subject, type: 'second', body: { n: 2 }, at, actor: 'a' };
      if (tx.deferrable === true) deferEvidenceRun(tx, [second]);
      else await appendEvidence(tx, second);
    });
    assert.deepEqual(runs, [true, false]);
    const events = await engine.read((r) => listEvidence(r, subject));
    assert.deepEqual(
      events.map((e) => [e.type, e.prev]),
      [
        ['first', null],
        ['second', events[0]?.hash],
      ],
    );
    assert.equal((await verifyEvidence(engine)).ok, true);
  });

  test('[postgres] a read-only snapshot ends before the next transaction on its connection', async (t) => {
    // One connection: the second read runs where the first one's snapshot was left open.
    const one = postgresUnderTest(db, 'postgres one connection', { maxConnections: 1 });
    const store = await one.open(t);
    await migrate(store.engine);
    await store.engine.transaction((tx) => tx.run('CREATE TABLE s (id BIGINT NOT NULL PRIMARY KEY)'));
    const count = () => store.engine.read((r) => r.get<{ n: number }>('SELECT COUNT(*)::BIGINT AS n FROM s'));
    assert.deepEqual(await count(), { n: 0 });
    // Another server commits in between: the next snapshot must see it.
    await store.another().transaction((tx) => tx.run('INSERT INTO s (id) VALUES (1)'));
    assert.deepEqual(await count(), { n: 1 });
    await store.engine.transaction((tx) => tx.run('INSERT INTO s (id) VALUES (2)'));
    assert.deepEqual(await count(), { n: 2 });
  });
}
