import type { Migration } from '../migrations.js';

/**
 * Fewer index entries per lifecycle write, and the evidence run parsed once (PostgreSQL; docs/store.md
 * "One row version per transition (PostgreSQL, migration 023)"). Nothing on SQLite.
 *
 * Every transition changes `phase` (and settlement `outcome`), which indexes of `aoc_occurrences`
 * hold, so no lifecycle UPDATE can be HOT on PostgreSQL (before version 16 any indexed column that
 * changes makes every index take a new entry): each row version costs one entry in EVERY index of
 * the table. So an index another one covers goes:
 * - `aoc_occurrences_creation_key` (creation_key, created_at, id), for the listing's creation-key
 *   filter: the creation binding's unique index becomes (creation_key, creation_scope) — the same
 *   unique columns, so the same guarantee (AOC-REQ-002 / -010), and its equality lookups on both
 *   columns are unchanged — and it answers that filter too (a key is nearly unique: one row per
 *   lineage, sorted for the page).
 * - `aoc_linked_ids_value` (type, value): no query reads it (migration 021 dropped it on SQLite);
 *   the table's two unique keys stay.
 * Eleven indexes on `aoc_occurrences` become ten; `aoc_linked_ids` keeps two of three. (Measured
 * and not done: folding the counts' `(phase, outcome, conflict)` into `phase_created` as INCLUDE
 * columns. That index is tiny — 1.3 MB at 200,000 rows, b-tree deduplication, which INCLUDE
 * indexes cannot use — so it costs little per entry, and without it the counts took 2.2× longer.)
 *
 * `baton_append_known` (migration 014) read its events as `json`, which PostgreSQL re-parses for
 * every `->>`: six field reads per event, each scanning the event's text again, plus two more
 * parses for the count. It now parses the run once, as jsonb (fields found by index). Same
 * arguments, same rows, same head compare-and-set, same BTN10.
 */
const APPEND_KNOWN = `
CREATE OR REPLACE FUNCTION baton_append_known(p_subject text, p_events text, p_head text, p_count bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_events jsonb := p_events::jsonb;
  v_n bigint;
  v_last text;
  v_seq bigint;
BEGIN
  WITH ins AS (
    INSERT INTO evidence_events (subject, idx, type, body, at, actor, prev, hash)
    SELECT p_subject, p_count + x.ord, x.e->>0, x.e->>1, (x.e->>2)::bigint, x.e->>3, x.e->>4, x.e->>5
    FROM jsonb_array_elements(v_events) WITH ORDINALITY AS x(e, ord)
    ON CONFLICT DO NOTHING
    RETURNING seq, idx, hash
  )
  SELECT count(*), max(seq), (array_agg(hash ORDER BY idx DESC))[1] INTO v_n, v_seq, v_last FROM ins;
  IF v_n <> jsonb_array_length(v_events) OR v_n = 0 THEN
    RAISE EXCEPTION 'evidence positions of % taken', p_subject USING ERRCODE = 'BTN10';
  END IF;
  IF p_head IS NULL THEN
    INSERT INTO evidence_heads (subject, head, count, last_seq) VALUES (p_subject, v_last, p_count + v_n, v_seq)
      ON CONFLICT DO NOTHING;
  ELSE
    UPDATE evidence_heads SET head = v_last, count = p_count + v_n, last_seq = v_seq
      WHERE subject = p_subject AND head = p_head;
  END IF;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'the evidence head of % moved', p_subject USING ERRCODE = 'BTN10';
  END IF;
  RETURN v_n;
END
$$`;

const INDEXES = `
CREATE UNIQUE INDEX aoc_occurrences_creation_v23 ON aoc_occurrences (creation_key, creation_scope);
DROP INDEX aoc_occurrences_creation;
ALTER INDEX aoc_occurrences_creation_v23 RENAME TO aoc_occurrences_creation;
DROP INDEX aoc_occurrences_creation_key;
DROP INDEX aoc_linked_ids_value`;

export const migration: Migration = {
  id: 23,
  name: 'fewer_update_indexes',
  up: '-- nothing on SQLite: see above (its indexes were weighed in pages per COMMIT, migration 021)',
  postgres: `${INDEXES};\n${APPEND_KNOWN}`,
};
