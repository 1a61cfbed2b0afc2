/**
 * Migration 36: on SQLite a REPLACE no longer rewrites a row of an append-only table (the conflicting
 * row it deleted never fired the DELETE guard); on PostgreSQL an event below seq 1 is refused.
 * Baton's own appends, which skip a taken position, go on as before (docs/store.md, "Evidence log").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { appendEvidence } from '../../src/store/evidence-log.js';
import { verifyEvidence } from '../../src/store/evidence-verify.js';
import { migrate } from '../../src/store/migrations.js';
import { withClient } from '../support/postgres.js';
import { enginesUnderTest, sqliteUnderTest } from './engines.js';

const engines = await enginesUnderTest();

test('[sqlite] INSERT OR REPLACE cannot rewrite an event or a cop_* row; verify stays honest', async (t) => {
  const store = await sqliteUnderTest.open(t);
  await migrate(store.engine);
  for (const i of [1, 2]) {
    await store.engine.transaction((tx) =>
      appendEvidence(tx, { subject: 'A', type: 't', body: { i }, at: 1_000 + i, actor: 'x' }),
    );
  }
  const db = new Database(store.location);
  t.after(() => db.close());
  const before = db.prepare('SELECT * FROM evidence_events ORDER BY seq').all();
  db.prepare(
    "INSERT INTO cop_artifacts (locator, digest, representation, media_type, bytes, redacted_of, created_at) VALUES ('loc', 'd', 'r', 'm', 'b', NULL, 1)",
  ).run();
  const attacks = [
    // Same seq, another chain position: REPLACE would delete seq 1.
    "INSERT OR REPLACE INTO evidence_events (seq, subject, idx, type, body, at, actor, prev, hash) VALUES (1, 'Z', 1, 't', '{}', 1, 'x', NULL, 'sha-256:x')",
    // Same chain position, new seq: REPLACE would delete A#2.
    "REPLACE INTO evidence_events (subject, idx, type, body, at, actor, prev, hash) VALUES ('A', 2, 't', '{\"i\":9}', 1, 'x', NULL, 'sha-256:x')",
    "INSERT INTO evidence_events (subject, idx, type, body, at, actor, prev, hash) VALUES ('A', 2, 't', '{}', 1, 'x', NULL, 'sha-256:x') ON CONFLICT (subject, idx) DO UPDATE SET body = excluded.body",
    "INSERT OR REPLACE INTO cop_artifacts (locator, digest, representation, media_type, bytes, redacted_of, created_at) VALUES ('loc', 'd2', 'r', 'm', 'forged', NULL, 2)",
    "INSERT OR REPLACE INTO cop_artifacts (rowid, locator, digest, representation, media_type, bytes, redacted_of, created_at) VALUES (1, 'other', 'd2', 'r', 'm', 'forged', NULL, 2)",
  ];
  for (const sql of attacks) {
    assert.equal(db.prepare(sql).run().changes, 0, sql);
  }
  assert.deepEqual(db.prepare('SELECT * FROM evidence_events ORDER BY seq').all(), before);
  assert.deepEqual(db.prepare('SELECT locator, bytes FROM cop_artifacts').all(), [
    { locator: 'loc', bytes: 'b' },
  ]);
  // Baton's appends go on: a new position of A, and a new chain.
  await store.engine.transaction((tx) =>
    appendEvidence(tx, { subject: 'A', type: 't', body: { i: 3 }, at: 1_003, actor: 'x' }),
  );
  await store.engine.transaction((tx) =>
    appendEvidence(tx, { subject: 'B', type: 't', body: { i: 1 }, at: 1_004, actor: 'x' }),
  );
  const report = await verifyEvidence(store.engine);
  assert.equal(report.ok, true, report.firstBroken?.reason);
  assert.equal(report.events, 4);
});

for (const e of engines) {
  if (e.kind !== 'postgres') continue;
  test(`[${e.name}] an event below seq 1 is refused by the database`, async (t) => {
    const store = await e.open(t);
    await migrate(store.engine);
    await store.engine.transaction((tx) =>
      appendEvidence(tx, { subject: 'A', type: 't', body: {}, at: 1, actor: 'x' }),
    );
    await withClient(store.location, async (c) => {
      await assert.rejects(
        c.query(
          "INSERT INTO evidence_events (seq, subject, idx, type, body, at, actor, prev, hash) VALUES (-5, 'Z', 1, 't', '{}', 1, 'x', NULL, 'sha-256:x')",
        ),
        /evidence_events_seq_positive/,
      );
    });
    assert.equal((await verifyEvidence(store.engine)).ok, true);
  });
}
