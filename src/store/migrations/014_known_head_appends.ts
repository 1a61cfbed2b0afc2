import type { Migration } from '../migrations.js';

/**
 * Evidence appends whose chain head the transaction already holds (issue 16 §2, §6; docs/store.md
 * "One round trip per transition"). Nothing on SQLite.
 *
 * `baton_append_known(subject, events, head, count)` stores a run Baton has ALREADY chained and
 * hashed from the head it holds — a chain this transaction started (a new occurrence) or whose
 * head row it locked (`baton_lock_observe_head`) — so the database neither reads the head nor
 * hashes: each event is `[type, bodyJcsText, at, actor, prev, hash]`, inserted at `count + 1…`
 * under the unique (subject, idx) index, then the head is written with a compare-and-set on
 * `head` (NULL: the chain's first events, the head row inserted). Anything else than exactly those
 * rows and that head raises BTN10 (postgres-batch.ts DEFERRED_MISMATCH): the engine runs the
 * transaction again statement by statement, where evidence-log.ts reads the head and meets the
 * same state as it always has. Because the hashes are Baton's own, nothing the database returns
 * needs checking, and the call may leave with the COMMIT (docs/store.md).
 *
 * `baton_lock_observe_head(credential_digest, occurrence_id)`: what migration 016's
 * `baton_lock_observe` reads (the credential, then the occurrence FOR UPDATE, stopping where the
 * service would refuse), then the occurrence's evidence head FOR UPDATE — the lock every append to that chain takes first — as one JSON object.
 */
const APPEND_KNOWN = `
CREATE FUNCTION baton_append_known(p_subject text, p_events text, p_head text, p_count bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_n bigint;
  v_last text;
  v_seq bigint;
BEGIN
  WITH ins AS (
    INSERT INTO evidence_events (subject, idx, type, body, at, actor, prev, hash)
    SELECT p_subject, p_count + x.ord, x.e->>0, x.e->>1, (x.e->>2)::bigint, x.e->>3, x.e->>4, x.e->>5
    FROM json_array_elements(p_events::json) WITH ORDINALITY AS x(e, ord)
    ON CONFLICT DO NOTHING
    RETURNING seq, idx, hash
  )
  SELECT count(*), max(seq), (array_agg(hash ORDER BY idx DESC))[1] INTO v_n, v_seq, v_last FROM ins;
  IF v_n <> json_array_length(p_events::json) OR v_n = 0 THEN
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

// Migration 016's baton_lock_observe (credential, then the occurrence FOR UPDATE), then the head
// of the occurrence's chain FOR UPDATE: the same lock order, one more row, no second copy of it.
const LOCK_OBSERVE_HEAD = `
CREATE FUNCTION baton_lock_observe_head(p_digest text, p_occurrence text) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  v_locked json := baton_lock_observe(p_digest, p_occurrence);
  v_head json;
BEGIN
  IF json_typeof(v_locked->'occurrence') IS DISTINCT FROM 'object' THEN
    RETURN v_locked;
  END IF;
  SELECT row_to_json(h) INTO v_head FROM (
    SELECT head, count FROM evidence_heads WHERE subject = 'occurrence:' || p_occurrence FOR UPDATE
  ) h;
  RETURN json_build_object('credential', v_locked->'credential', 'occurrence', v_locked->'occurrence',
    'head', coalesce(v_head, json_build_object('head', NULL, 'count', 0)));
END
$$`;

export const migration: Migration = {
  id: 14,
  name: 'known_head_appends',
  up: '-- nothing on SQLite: statements there are in-process calls',
  postgres: `${APPEND_KNOWN};\n${LOCK_OBSERVE_HEAD}`,
};
