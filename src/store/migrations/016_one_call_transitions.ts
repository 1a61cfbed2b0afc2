import type { Migration } from '../migrations.js';

/**
 * One server-side call per transition on PostgreSQL (issue 16 §2, docs/store.md "One round trip
 * per transition"). Nothing on SQLite, where a statement is a function call inside the process.
 *
 * `baton_batch(items)` runs, in order and inside the caller's transaction, statements Baton has
 * deferred (src/store/postgres.ts `defer`): each item `{"s": sql, "p": [params], "e": expected,
 * "q": 1}` is the portable SQL of one repository statement with its `?` written as `%L`
 * (postgres-sql.ts `toFormatTemplate`), so `format` quotes every parameter as a literal
 * (quote_nullable: injection-safe, NULL stays NULL) and the statement runs exactly as the
 * statement-by-statement path would run it — same locks, same unique indexes, same
 * compare-and-set WHERE clauses, same `baton_append_evidence`. An item with `e` must change exactly
 * that many rows, else the function raises SQLSTATE BTN10 and PostgreSQL aborts the whole
 * transaction: the engine then runs the transaction again statement by statement, where the
 * repository meets the same condition and answers it as it always has (a conflict, a refusal, a
 * stripe fallback). An item with `q` returns its rows (a JSON array); the others their row count.
 * The answer is a JSON array, one member per item. Baton still checks every evidence hash the
 * database returns (evidence-log.ts): the database never invents evidence.
 */
const BATCH = `
CREATE FUNCTION baton_batch(p_items text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_item json;
  v_sql text;
  v_n bigint;
  v_rows json;
  v_out text[] := '{}';
  v_i integer := 0;
BEGIN
  FOR v_item IN SELECT x.e FROM json_array_elements(p_items::json) WITH ORDINALITY AS x(e, ord) ORDER BY x.ord LOOP
    v_sql := format(v_item->>'s', VARIADIC ARRAY(SELECT json_array_elements_text(v_item->'p')));
    IF v_item->'q' IS NOT NULL THEN
      EXECUTE 'SELECT coalesce(json_agg(t), ''[]''::json) FROM (' || v_sql || ') t' INTO v_rows;
      v_out := v_out || v_rows::text;
    ELSE
      EXECUTE v_sql;
      GET DIAGNOSTICS v_n = ROW_COUNT;
      IF v_item->'e' IS NOT NULL AND v_n <> (v_item->>'e')::bigint THEN
        RAISE EXCEPTION 'deferred statement % changed % row(s), not %', v_i, v_n, v_item->>'e'
          USING ERRCODE = 'BTN10';
      END IF;
      v_out := v_out || v_n::text;
    END IF;
    v_i := v_i + 1;
  END LOOP;
  RETURN '[' || array_to_string(v_out, ',') || ']';
END
$$`;

/**
 * `baton_lock_observe(credential_digest, occurrence_id)`: what an executor-reported observation
 * reads first (src/occurrences/service/observe.ts observeIn), in its order and with its locks —
 * the credential (read), then the occurrence with its request (FOR UPDATE) — as one JSON object
 * of whole rows, stopping where the service would refuse (unknown or retired credential). Nothing
 * of the lineage or the authority (AOC-REQ-007, AOC-REQ-012).
 */
const LOCK_OBSERVE = `
CREATE FUNCTION baton_lock_observe(p_digest text, p_occurrence text) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  v_credential aoc_credentials;
  v_occurrence json;
BEGIN
  SELECT * INTO v_credential FROM aoc_credentials c WHERE c.secret_digest = p_digest;
  IF NOT FOUND OR v_credential.retired_at IS NOT NULL THEN
    RETURN json_build_object('credential', CASE WHEN FOUND THEN row_to_json(v_credential) END);
  END IF;
  SELECT row_to_json(o) INTO v_occurrence FROM (
    SELECT * FROM aoc_occurrences WHERE id = p_occurrence FOR UPDATE
  ) o;
  RETURN json_build_object('credential', row_to_json(v_credential), 'occurrence', v_occurrence);
END
$$`;

export const migration: Migration = {
  id: 16,
  name: 'one_call_transitions',
  up: '-- nothing on SQLite: statements there are in-process calls',
  postgres: `${BATCH};\n${LOCK_OBSERVE}`,
};
