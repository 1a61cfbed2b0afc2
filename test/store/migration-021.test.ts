/**
 * Migration 21 (fewer write b-trees) over a store written before it, on SQLite: `aoc_linked_ids`
 * keeps every row, becomes WITHOUT ROWID without its unread value index, and still refuses what
 * its two unique keys and its foreign key refused (docs/store.md, "WAL pages per commit").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Transaction } from '../../src/store/engine.js';
import { migrate } from '../../src/store/migrations.js';
import { migrations } from '../../src/store/migrations/index.js';
import { insertBareOccurrence, insertBareParents } from './bare-occurrence.js';
import { enginesUnderTest } from './engines.js';

const sqlite = (await enginesUnderTest()).filter((e) => e.kind === 'sqlite');
const BEFORE_21 = migrations.filter((m) => m.id < 21);
const LINK =
  'INSERT INTO aoc_linked_ids (occurrence_id, type, value, exclusive_key) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING';
const ROWS: [string, string, string, string | null][] = [
  ['occ-1', 'invoice', 'inv-1', 'inv-1'],
  ['occ-1', 'order', 'ord-1', null],
  ['occ-2', 'order', 'ord-1', null],
  ['occ-2', 'provider_reference', 'pay_1', '["p","acct","env","pay_1"]'],
];

function occurrence(tx: Transaction, id: string): Promise<void> {
  return insertBareOccurrence(tx, { id, creationKey: id, phase: 'resolved', at: 1 });
}

async function seed(tx: Transaction): Promise<void> {
  await insertBareParents(tx);
  for (const id of ['occ-1', 'occ-2', 'occ-3']) await occurrence(tx, id);
  for (const r of ROWS) assert.equal((await tx.run(LINK, r)).changes, 1);
}

for (const e of sqlite) {
  test(`[${e.name}] migration 21 keeps aoc_linked_ids' rows and refusals, as one b-tree plus its unique index`, async (t) => {
    const { engine } = await e.open(t);
    await migrate(engine, { list: BEFORE_21 });
    await engine.transaction(seed);
    const result = await migrate(engine);
    assert.deepEqual(
      result.applied.map((m) => m.id),
      migrations.filter((m) => m.id >= 21).map((m) => m.id),
    );

    const rows = await engine.read((tx) =>
      tx.all<{ occurrence_id: string; type: string; value: string; exclusive_key: string | null }>(
        'SELECT occurrence_id, type, value, exclusive_key FROM aoc_linked_ids ORDER BY occurrence_id, type, value',
      ),
    );
    assert.deepEqual(
      rows.map((r) => [r.occurrence_id, r.type, r.value, r.exclusive_key]),
      ROWS,
    );
    const schema = await engine.read((tx) =>
      tx.all<{ type: string; name: string; sql: string | null }>(
        "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'aoc_linked_ids' ORDER BY name",
      ),
    );
    assert.deepEqual(
      schema.map((s) => s.name),
      ['aoc_linked_ids', 'aoc_linked_ids_exclusive'],
    );
    assert.match(schema[0]?.sql ?? '', /WITHOUT ROWID\s*$/);
    assert.match(schema[1]?.sql ?? '', /^CREATE UNIQUE INDEX/);

    await engine.transaction(async (tx) => {
      // The same identifier twice on one occurrence, an exclusive one on another: refused.
      assert.equal((await tx.run(LINK, ['occ-1', 'order', 'ord-1', null])).changes, 0);
      assert.equal((await tx.run(LINK, ['occ-3', 'invoice', 'inv-1', 'inv-1'])).changes, 0);
      // A non-exclusive identifier may be shared; a new exclusive one is taken once.
      assert.equal((await tx.run(LINK, ['occ-3', 'order', 'ord-1', null])).changes, 1);
      assert.equal((await tx.run(LINK, ['occ-3', 'invoice', 'inv-3', 'inv-3'])).changes, 1);
    });
    // The foreign key still holds: no identifier for an occurrence that does not exist.
    await assert.rejects(engine.transaction((tx) => tx.run(LINK, ['occ-none', 'order', 'ord-9', null])));
  });
}
