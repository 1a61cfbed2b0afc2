import type { Migration } from '../migrations.js';

/**
 * The hot deferred writes as STATIC SQL in the one call per transition (issue 16 §2, docs/store.md
 * "Static writes in the one call (PostgreSQL, migration 022)"). Nothing on SQLite.
 *
 * Migration 016's `baton_batch` runs every item by dynamic `EXECUTE` of `format('%L')` text, so
 * PostgreSQL parses and plans each one on every call. `baton_batch_static(items)` is the same call
 * (items in order, in the caller's transaction, one JSON answer per item) but takes items
 * `{"k": key, "p": [params as text]}` too: the key names one of the statements below, written out
 * as PL/pgSQL static SQL, whose plans PL/pgSQL prepares once per connection and then reuses. Each
 * is the SAME statement as the portable text it stands for (`STATIC_STATEMENTS`, which the engine
 * matches by exact text: postgres-batch.ts), with each `?` the matching parameter cast to its
 * column's type — the same table, the same WHERE compare-and-set guard, the same `ON CONFLICT DO
 * NOTHING` under the same unique indexes, the same evidence functions; so the same row locks in
 * the same order, and the same row counts. `e` (the expected row count, BTN10 otherwise) and `q`
 * (answer the rows as JSON) mean what they mean in 016. An item with `s` (any statement not listed
 * here) is handed to 016's `baton_batch` as it is, alone. A key this function does not know raises
 * BTN11: never silently skipped.
 */
export const BATCH = `
CREATE FUNCTION baton_batch_static(p_items text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  -- jsonb: parsed once, then each parameter is found by its index, not by re-reading the text.
  v_items jsonb := p_items::jsonb;
  v_item jsonb;
  v_p jsonb;
  v_k text;
  v_n bigint;
  v_rows json;
  v_answers text[] := '{}';
BEGIN
  FOR v_i IN 0 .. jsonb_array_length(v_items) - 1 LOOP
    v_item := v_items->v_i;
    v_p := v_item->'p';
    v_k := v_item->>'k';
    v_rows := NULL;
    IF v_k IS NULL THEN
      -- 016's dynamic path, unchanged: its answer (a count or rows) is this item's, its guard its own.
      v_rows := (baton_batch(jsonb_build_array(v_item)::text)::json)->0;
    ELSIF v_k = 'append_known' THEN
      PERFORM baton_append_known(v_p->>0, v_p->>1, v_p->>2, (v_p->>3)::bigint);
      v_n := 1;
    ELSIF v_k = 'append_evidence' THEN
      SELECT coalesce(json_agg(t), '[]'::json) INTO v_rows FROM (
        SELECT out_seq, out_idx, out_prev, out_hash FROM baton_append_evidence(v_p->>0, v_p->>1)
      ) t;
    ELSIF v_k = 'occurrence_insert' THEN
      INSERT INTO aoc_occurrences (id, lineage, creation_scope, creation_key, creation_digest, linked_ids,
        profile_id, profile_version, profile_digest, account, environment, request_digest, native_key_rule,
        native_key, provider_reference, captured_generation, entry_deadline, authority_id, authority_amount,
        authority_unit, phase, outcome, effect, conflict, entered_at, entered_generation, released_at,
        resolved_at, remedy_of, remedy_kind, reissue_of, created_at, updated_at, version, request, open_stripe)
      VALUES (v_p->>0, v_p->>1, v_p->>2, v_p->>3, v_p->>4, v_p->>5,
        v_p->>6, v_p->>7, v_p->>8, v_p->>9, v_p->>10, v_p->>11, v_p->>12,
        v_p->>13, v_p->>14, (v_p->>15)::bigint, (v_p->>16)::bigint, v_p->>17, (v_p->>18)::bigint,
        v_p->>19, v_p->>20, v_p->>21, v_p->>22, (v_p->>23)::bigint, (v_p->>24)::bigint, (v_p->>25)::bigint,
        (v_p->>26)::bigint, (v_p->>27)::bigint, v_p->>28, v_p->>29, v_p->>30, (v_p->>31)::bigint,
        (v_p->>32)::bigint, (v_p->>33)::bigint, v_p->>34, (v_p->>35)::bigint)
      ON CONFLICT DO NOTHING;
      GET DIAGNOSTICS v_n = ROW_COUNT;
    ELSIF v_k = 'occurrence_update' THEN
      UPDATE aoc_occurrences SET phase = v_p->>0, outcome = v_p->>1, effect = v_p->>2,
        conflict = (v_p->>3)::bigint, entered_at = (v_p->>4)::bigint, entered_generation = (v_p->>5)::bigint,
        released_at = (v_p->>6)::bigint, resolved_at = (v_p->>7)::bigint, linked_ids = v_p->>8,
        provider_reference = v_p->>9, updated_at = (v_p->>10)::bigint, version = (v_p->>11)::bigint,
        open_stripe = (v_p->>12)::bigint
      WHERE id = v_p->>13 AND version = (v_p->>14)::bigint
        AND (provider_reference IS NULL OR provider_reference = v_p->>15);
      GET DIAGNOSTICS v_n = ROW_COUNT;
    ELSIF v_k = 'linked_id_insert' THEN
      INSERT INTO aoc_linked_ids (occurrence_id, type, value, exclusive_key)
        VALUES (v_p->>0, v_p->>1, v_p->>2, v_p->>3) ON CONFLICT DO NOTHING;
      GET DIAGNOSTICS v_n = ROW_COUNT;
    ELSIF v_k = 'authority_update' THEN
      UPDATE aoc_authorities SET reserved = (v_p->>0)::bigint, consumed = (v_p->>1)::bigint,
        updated_at = (v_p->>2)::bigint, version = (v_p->>3)::bigint
      WHERE id = v_p->>4 AND version = (v_p->>5)::bigint AND consumed <= (v_p->>6)::bigint;
      GET DIAGNOSTICS v_n = ROW_COUNT;
    ELSIF v_k = 'lineage_update' THEN
      UPDATE aoc_lineages SET generation = (v_p->>0)::bigint, updated_at = (v_p->>1)::bigint,
        version = (v_p->>2)::bigint
      WHERE id = v_p->>3 AND version = (v_p->>4)::bigint AND generation < (v_p->>5)::bigint;
      GET DIAGNOSTICS v_n = ROW_COUNT;
    ELSIF v_k = 'claim_pending' THEN
      UPDATE aoc_open_stripes SET pending = pending + 1
        WHERE stripe = (v_p->>0)::bigint AND pending < (v_p->>1)::bigint;
      GET DIAGNOSTICS v_n = ROW_COUNT;
    ELSIF v_k = 'claim_in_flight' THEN
      UPDATE aoc_open_stripes SET in_flight = in_flight + 1
        WHERE stripe = (v_p->>0)::bigint AND in_flight < (v_p->>1)::bigint;
      GET DIAGNOSTICS v_n = ROW_COUNT;
    ELSIF v_k = 'move_to_in_flight' THEN
      UPDATE aoc_open_stripes SET pending = pending - 1, in_flight = in_flight + 1
        WHERE stripe = (v_p->>0)::bigint AND in_flight < (v_p->>1)::bigint;
      GET DIAGNOSTICS v_n = ROW_COUNT;
    ELSIF v_k = 'release_pending' THEN
      UPDATE aoc_open_stripes SET pending = pending - 1 WHERE stripe = (v_p->>0)::bigint;
      GET DIAGNOSTICS v_n = ROW_COUNT;
    ELSIF v_k = 'release_in_flight' THEN
      UPDATE aoc_open_stripes SET in_flight = in_flight - 1 WHERE stripe = (v_p->>0)::bigint;
      GET DIAGNOSTICS v_n = ROW_COUNT;
    ELSIF v_k = 'add_in_flight' THEN
      UPDATE aoc_open_stripes SET in_flight = in_flight + 1 WHERE stripe = (v_p->>0)::bigint;
      GET DIAGNOSTICS v_n = ROW_COUNT;
    ELSE
      RAISE EXCEPTION 'baton_batch_static: unknown statement key %', v_k USING ERRCODE = 'BTN11';
    END IF;
    IF v_rows IS NULL THEN
      -- A count other than the expected one (when one is): BTN10, the whole transaction aborts.
      IF v_n <> coalesce((v_item->>'e')::bigint, v_n) THEN
        RAISE EXCEPTION 'deferred statement % changed % row(s), not %', v_i, v_n, v_item->>'e' USING ERRCODE = 'BTN10';
      END IF;
      v_rows := to_json(v_n);
    END IF;
    v_answers := v_answers || v_rows::text;
  END LOOP;
  RETURN '[' || array_to_string(v_answers, ',') || ']';
END
$$`;

/** A statement `baton_batch_static` holds: its key, what it answers, how many parameters it reads. */
export interface StaticStatement {
  readonly key: string;
  /** It answers rows (a SELECT, sent with `q`), not a row count. */
  readonly rows: boolean;
  /** The `?` of its text (none of these texts has a quoted one). */
  readonly params: number;
}

/**
 * The portable SQL texts (exactly as the repositories send them) that the static branches stand
 * for, by key. Matched by exact text, so a repository statement that changes no longer matches
 * and goes the dynamic way (016's): slower, never different. Part of this migration: never edited
 * once released; a changed statement gets a new key in a new migration.
 */
const STATICS: Readonly<Record<string, string>> = {
  append_known: 'SELECT baton_append_known(?, ?, ?, ?) AS n',
  append_evidence: 'SELECT out_seq, out_idx, out_prev, out_hash FROM baton_append_evidence(?, ?)',
  occurrence_insert:
    'INSERT INTO aoc_occurrences (id, lineage, creation_scope, creation_key, creation_digest, linked_ids, profile_id, profile_version, profile_digest, account, environment, request_digest, native_key_rule, native_key, provider_reference, captured_generation, entry_deadline, authority_id, authority_amount, authority_unit, phase, outcome, effect, conflict, entered_at, entered_generation, released_at, resolved_at, remedy_of, remedy_kind, reissue_of, created_at, updated_at, version, request, open_stripe) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
  occurrence_update: `UPDATE aoc_occurrences SET phase = ?, outcome = ?, effect = ?, conflict = ?, entered_at = ?,
         entered_generation = ?, released_at = ?, resolved_at = ?, linked_ids = ?, provider_reference = ?,
         updated_at = ?, version = ?, open_stripe = ?
       WHERE id = ? AND version = ? AND (provider_reference IS NULL OR provider_reference = ?)`,
  linked_id_insert:
    'INSERT INTO aoc_linked_ids (occurrence_id, type, value, exclusive_key) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
  authority_update: `UPDATE aoc_authorities SET reserved = ?, consumed = ?, updated_at = ?, version = ?
       WHERE id = ? AND version = ? AND consumed <= ?`,
  lineage_update:
    'UPDATE aoc_lineages SET generation = ?, updated_at = ?, version = ? WHERE id = ? AND version = ? AND generation < ?',
  claim_pending: 'UPDATE aoc_open_stripes SET pending = pending + 1 WHERE stripe = ? AND pending < ?',
  claim_in_flight: 'UPDATE aoc_open_stripes SET in_flight = in_flight + 1 WHERE stripe = ? AND in_flight < ?',
  move_to_in_flight:
    'UPDATE aoc_open_stripes SET pending = pending - 1, in_flight = in_flight + 1 WHERE stripe = ? AND in_flight < ?',
  release_pending: 'UPDATE aoc_open_stripes SET pending = pending - 1 WHERE stripe = ?',
  release_in_flight: 'UPDATE aoc_open_stripes SET in_flight = in_flight - 1 WHERE stripe = ?',
  add_in_flight: 'UPDATE aoc_open_stripes SET in_flight = in_flight + 1 WHERE stripe = ?',
};

/** By exact portable text: what the engine sends by key after migration 022. */
export const STATIC_STATEMENTS: ReadonlyMap<string, StaticStatement> = new Map(
  Object.entries(STATICS).map(([key, sql]) => [
    sql,
    { key, rows: key === 'append_evidence', params: sql.split('?').length - 1 },
  ]),
);

export const migration: Migration = {
  id: 22,
  name: 'static_transition_writes',
  up: '-- nothing on SQLite: statements there are in-process calls',
  postgres: BATCH,
};
