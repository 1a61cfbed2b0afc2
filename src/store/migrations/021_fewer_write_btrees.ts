import type { Migration } from '../migrations.js';

/**
 * Fewer b-trees per SQLite write (docs/store.md, "WAL pages per commit"). Every b-tree an insert
 * touches costs its COMMIT one more 4 KiB WAL frame, written and fsynced (synchronous = FULL):
 * a lifecycle's two commits wrote 27–36 and 22–31 frames, about one per b-tree touched.
 * - `aoc_linked_ids` was four b-trees: the rowid table, its primary key's index, the exclusive
 *   index and `aoc_linked_ids_value` (type, value). Nothing reads the table: it exists for its two
 *   uniqueness guarantees (an identifier once per occurrence; an exclusive identifier once per
 *   provider namespace, `exclusiveKey` in src/occurrences/model.ts, AOC-REQ-002). So the value
 *   index served no query (what is read is the occurrence's own `linked_ids` column), and WITHOUT
 *   ROWID makes the primary key the table. Two b-trees remain, the same two unique keys.
 * (`evidence_heads` was measured the same way and left as it is: WITHOUT ROWID there wrote more
 *   pages, not fewer — its new rows land at random places in the key's b-tree and split it.)
 * Same columns, constraints, keys and rows. PostgreSQL keeps its schema (its tables are heaps
 * either way; whether to drop its value index too is left to its owners).
 */
export const migration: Migration = {
  id: 21,
  name: 'fewer_write_btrees',
  up: `
CREATE TABLE aoc_linked_ids_v21 (
  occurrence_id TEXT NOT NULL REFERENCES aoc_occurrences (id),
  type TEXT NOT NULL,
  value TEXT NOT NULL,
  exclusive_key TEXT,
  PRIMARY KEY (occurrence_id, type, value)
) WITHOUT ROWID;
INSERT INTO aoc_linked_ids_v21 (occurrence_id, type, value, exclusive_key)
  SELECT occurrence_id, type, value, exclusive_key FROM aoc_linked_ids;
DROP TABLE aoc_linked_ids;
ALTER TABLE aoc_linked_ids_v21 RENAME TO aoc_linked_ids;
CREATE UNIQUE INDEX aoc_linked_ids_exclusive ON aoc_linked_ids (type, exclusive_key)
`,
  postgres: '-- nothing on PostgreSQL: see above',
};
