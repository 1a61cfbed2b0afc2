/**
 * Migration 31: the evidence log is append-only in the database itself, on both engines. An UPDATE
 * or a DELETE of `evidence_events` (and, on PostgreSQL, a TRUNCATE) is refused and changes nothing;
 * appends and verification go on as before (docs/store.md, "What it cannot catch").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { appendEvidence } from '../../src/store/evidence-log.js';
import { verifyEvidence } from '../../src/store/evidence-verify.js';
import { migrate } from '../../src/store/migrations.js';
import { withClient } from '../support/postgres.js';
import { enginesUnderTest, type StoreUnderTest } from './engines.js';

const engines = await enginesUnderTest();

/** Run `sql` on a connection of the store's own, not Baton's (the guard is the database's). */
async function raw(store: StoreUnderTest, kind: string, sql: string): Promise<void> {
  if (kind === 'sqlite') {
    const db = new Database(store.location);
    try {
      db.exec(sql);
    } finally {
      db.close();
    }
    return;
  }
  await withClient(store.location, async (c) => {
    await c.query(sql);
  });
}

for (const e of engines) {
  test(`[${e.name}] evidence_events refuses UPDATE and DELETE; appends and verify go on`, async (t) => {
    const store = await e.open(t);
    await migrate(store.engine);
    for (const i of [1, 2]) {
      await store.engine.transaction((tx) =>
        appendEvidence(tx, { subject: 'A', type: 't', body: { i }, at: 1_000 + i, actor: 'x' }),
      );
    }
    const statements = [
      "UPDATE evidence_events SET actor = 'mallory' WHERE seq = 1",
      'DELETE FROM evidence_events WHERE seq = 2',
      ...(e.kind === 'postgres' ? ['TRUNCATE evidence_events'] : []),
    ];
    for (const sql of statements) {
      await assert.rejects(raw(store, e.kind, sql), /evidence_events is append-only/, sql);
    }
    const rows = await store.engine.read((ex) =>
      ex.all<{ seq: number; actor: string }>('SELECT seq, actor FROM evidence_events ORDER BY seq'),
    );
    assert.deepEqual(
      rows.map((r) => [Number(r.seq), r.actor]),
      [
        [1, 'x'],
        [2, 'x'],
      ],
    );
    await store.engine.transaction((tx) =>
      appendEvidence(tx, { subject: 'A', type: 't', body: { i: 3 }, at: 1_003, actor: 'x' }),
    );
    assert.deepEqual(await verifyEvidence(store.engine), { ok: true, subjects: 1, events: 3, problems: 0 });
  });
}
