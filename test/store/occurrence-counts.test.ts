/**
 * Migration 013: the counts behind GET /v1/counts (the console's overview) are a covering index
 * scan on SQLite, never a walk of the rows (at 1,000,000 occurrences that walk took seconds;
 * docs/scale.md). The statement is the reader's own (occurrences-reader.ts countByState).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { migrate } from '../../src/store/migrations.js';
import { openSqliteEngine } from '../../src/store/sqlite.js';

const COUNTS =
  'SELECT phase, outcome, conflict, COUNT(*) AS n FROM aoc_occurrences GROUP BY phase, outcome, conflict';

test('the occurrence counts read only the (phase, outcome, conflict) index', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-counts-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'baton.db');
  const engine = openSqliteEngine(path);
  await migrate(engine);
  await engine.close();
  const db = new Database(path, { readonly: true });
  try {
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${COUNTS}`).all() as { detail: string }[]).map(
      (r) => r.detail,
    );
    assert.deepEqual(plan, ['SCAN aoc_occurrences USING COVERING INDEX aoc_occurrences_state']);
  } finally {
    db.close();
  }
});
