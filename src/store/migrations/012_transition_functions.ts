import type { Migration } from '../migrations.js';

/**
 * Server-side functions for PostgreSQL (issue 16 §2, docs/store.md "One round trip per
 * transition"): a statement each one replaces would otherwise be a round trip of its own. Nothing
 * on SQLite, where a statement is a function call inside the process.
 *
 * `baton_append_evidence(subject, events)` (`events`: a JSON array of `[type, bodyJcsText, at,
 * actor]`, the port's parameters being scalars) appends consecutive events of ONE
 * subject exactly as src/store/evidence-log.ts does statement by statement: it locks the head row
 * (FOR UPDATE), chains `prev`, computes each
 *   hash = sha-256(JCS({actor, at, body, prev, subject, type}))
 * from the body's JCS text (to_json(text) escapes a string as JSON.stringify does, UTF-8 database),
 * inserts the rows under the unique (subject, idx) index, and writes the head with a
 * compare-and-set. The caller checks every returned hash against its own computation, so a
 * difference between the two can never enter a chain. Refusals carry SQLSTATE BTN01 (positions
 * taken) and BTN02 (head moved): both mean store_corrupt.
 */
const APPEND_EVIDENCE = `
CREATE FUNCTION baton_append_evidence(
  p_subject text, p_events text
) RETURNS TABLE (out_seq bigint, out_idx bigint, out_prev text, out_hash text)
LANGUAGE plpgsql AS $$
DECLARE
  p_types text[];
  p_bodies text[];
  p_ats bigint[];
  p_actors text[];
  v_n integer;
  v_head text;
  v_count bigint;
  v_prev text;
  v_hash text;
  v_prevs text[];
  v_hashes text[];
  v_seqs bigint[];
  v_idxs bigint[];
  v_attempt integer := 0;
BEGIN
  SELECT array_agg(x.e->>0 ORDER BY x.ord), array_agg(x.e->>1 ORDER BY x.ord),
         array_agg((x.e->>2)::bigint ORDER BY x.ord), array_agg(x.e->>3 ORDER BY x.ord)
    INTO p_types, p_bodies, p_ats, p_actors
    FROM json_array_elements(p_events::json) WITH ORDINALITY AS x(e, ord);
  v_n := coalesce(cardinality(p_types), 0);
  LOOP
    v_attempt := v_attempt + 1;
    SELECT h.head, h.count INTO v_head, v_count FROM evidence_heads h WHERE h.subject = p_subject FOR UPDATE;
    IF NOT FOUND THEN
      v_head := NULL;
      v_count := 0;
    END IF;
    v_prev := v_head;
    v_prevs := '{}';
    v_hashes := '{}';
    FOR i IN 1..v_n LOOP
      v_hash := 'sha-256:' || rtrim(translate(encode(sha256(convert_to(
        '{"actor":' || to_json(p_actors[i])::text || ',"at":' || p_ats[i]::text || ',"body":' || p_bodies[i]
        || ',"prev":' || coalesce(to_json(v_prev)::text, 'null') || ',"subject":' || to_json(p_subject)::text
        || ',"type":' || to_json(p_types[i])::text || '}', 'UTF8')), 'base64'), '+/', '-_'), '=');
      v_prevs := v_prevs || v_prev;
      v_hashes := v_hashes || v_hash;
      v_prev := v_hash;
    END LOOP;
    WITH ins AS (
      INSERT INTO evidence_events (subject, idx, type, body, at, actor, prev, hash)
      SELECT p_subject, v_count + u.i, u.type, u.body, u.at, u.actor, u.prev, u.hash
      FROM unnest(p_types, p_bodies, p_ats, p_actors, v_prevs, v_hashes)
        WITH ORDINALITY AS u(type, body, at, actor, prev, hash, i)
      ORDER BY u.i
      ON CONFLICT DO NOTHING
      RETURNING evidence_events.seq, evidence_events.idx
    )
    SELECT coalesce(array_agg(ins.seq ORDER BY ins.idx), '{}'), coalesce(array_agg(ins.idx ORDER BY ins.idx), '{}')
      INTO v_seqs, v_idxs FROM ins;
    EXIT WHEN cardinality(v_seqs) = v_n;
    -- A new subject has no head row to lock: two first appends meet at the unique (subject, idx)
    -- index, the later one inserts nothing and reads the head again (as evidence-log.ts does).
    IF cardinality(v_seqs) = 0 AND v_head IS NULL AND v_attempt < 3 THEN
      CONTINUE;
    END IF;
    RAISE EXCEPTION 'the evidence chain already has events at these positions' USING ERRCODE = 'BTN01';
  END LOOP;
  IF v_head IS NULL THEN
    INSERT INTO evidence_heads (subject, head, count, last_seq)
      VALUES (p_subject, v_prev, v_count + v_n, v_seqs[v_n]);
  ELSE
    UPDATE evidence_heads SET head = v_prev, count = v_count + v_n, last_seq = v_seqs[v_n]
      WHERE subject = p_subject AND head = v_head;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'the evidence head moved during an append' USING ERRCODE = 'BTN02';
    END IF;
  END IF;
  RETURN QUERY SELECT u.seq, u.idx, u.prev, u.hash FROM unnest(v_seqs, v_idxs, v_prevs, v_hashes) AS u(seq, idx, prev, hash);
END
$$`;

/**
 * `baton_lock_entry(credential_digest, occurrence_id)`: everything provider entry reads, in the
 * order and with the locks src/occurrences/service/entry.ts takes them one statement at a time —
 * the domain (read), the credential (read), its lineage (FOR UPDATE), the occurrence with its
 * request (FOR UPDATE), the occurrence's authority (FOR UPDATE), then the open counts (the
 * lineage's exact under its lock) — as one JSON object of whole rows. It stops where the service
 * would refuse (unknown or retired credential, missing lineage or occurrence), locking nothing more.
 */
export const LOCK_ENTRY = `
CREATE FUNCTION baton_lock_entry(p_digest text, p_occurrence text) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  v_domain json;
  v_credential aoc_credentials;
  v_lineage json;
  v_occurrence aoc_occurrences;
  v_authority json;
  v_counts json;
BEGIN
  SELECT row_to_json(d) INTO v_domain FROM aoc_domain d WHERE d.singleton = 1;
  SELECT * INTO v_credential FROM aoc_credentials c WHERE c.secret_digest = p_digest;
  IF NOT FOUND OR v_credential.retired_at IS NOT NULL THEN
    RETURN json_build_object('domain', v_domain, 'credential', CASE WHEN FOUND THEN row_to_json(v_credential) END);
  END IF;
  SELECT row_to_json(l) INTO v_lineage FROM (
    SELECT * FROM aoc_lineages WHERE id = v_credential.lineage FOR UPDATE
  ) l;
  IF v_lineage IS NULL THEN
    RETURN json_build_object('domain', v_domain, 'credential', row_to_json(v_credential));
  END IF;
  SELECT * INTO v_occurrence FROM aoc_occurrences o WHERE o.id = p_occurrence FOR UPDATE;
  IF NOT FOUND THEN
    RETURN json_build_object('domain', v_domain, 'credential', row_to_json(v_credential), 'lineage', v_lineage);
  END IF;
  SELECT row_to_json(a) INTO v_authority FROM (
    SELECT * FROM aoc_authorities WHERE id = v_occurrence.authority_id FOR UPDATE
  ) a;
  SELECT row_to_json(k) INTO v_counts FROM (SELECT
    (SELECT COUNT(*) FROM aoc_occurrences WHERE phase = 'reserved' AND lineage = v_credential.lineage) AS lp,
    (SELECT COUNT(*) FROM aoc_occurrences WHERE phase = 'entered' AND lineage = v_credential.lineage) AS lf,
    (SELECT SUM(pending) FROM aoc_open_stripes) AS dp,
    (SELECT SUM(in_flight) FROM aoc_open_stripes) AS df) k;
  RETURN json_build_object('domain', v_domain, 'credential', row_to_json(v_credential), 'lineage', v_lineage,
    'occurrence', row_to_json(v_occurrence), 'authority', v_authority, 'counts', v_counts);
END
$$`;

/**
 * `baton_lock_create(credential_digest, creation_key, authority_id)`: what create + reserve + bind
 * reads (src/occurrences/service/create.ts), in its order and with its locks — the domain, the
 * credential, its lineage (FOR UPDATE), the occurrence already under this creation binding if any
 * (FOR UPDATE), the authority (FOR UPDATE), the open counts — stopping where the service would
 * refuse. Only for a plain create: a remedy or reissue locks its linked occurrence in between.
 */
export const LOCK_CREATE = `
CREATE FUNCTION baton_lock_create(p_digest text, p_key text, p_authority text) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  v_domain json;
  v_credential aoc_credentials;
  v_lineage json;
  v_existing json;
  v_authority json;
  v_counts json;
BEGIN
  SELECT row_to_json(d) INTO v_domain FROM aoc_domain d WHERE d.singleton = 1;
  SELECT * INTO v_credential FROM aoc_credentials c WHERE c.secret_digest = p_digest;
  IF NOT FOUND OR v_credential.retired_at IS NOT NULL THEN
    RETURN json_build_object('domain', v_domain, 'credential', CASE WHEN FOUND THEN row_to_json(v_credential) END);
  END IF;
  SELECT row_to_json(l) INTO v_lineage FROM (
    SELECT * FROM aoc_lineages WHERE id = v_credential.lineage FOR UPDATE
  ) l;
  IF v_lineage IS NULL THEN
    RETURN json_build_object('domain', v_domain, 'credential', row_to_json(v_credential));
  END IF;
  SELECT row_to_json(o) INTO v_existing FROM (
    SELECT * FROM aoc_occurrences WHERE creation_scope = v_credential.lineage AND creation_key = p_key FOR UPDATE
  ) o;
  SELECT row_to_json(a) INTO v_authority FROM (
    SELECT * FROM aoc_authorities WHERE id = p_authority FOR UPDATE
  ) a;
  SELECT row_to_json(k) INTO v_counts FROM (SELECT
    (SELECT COUNT(*) FROM aoc_occurrences WHERE phase = 'reserved' AND lineage = v_credential.lineage) AS lp,
    (SELECT COUNT(*) FROM aoc_occurrences WHERE phase = 'entered' AND lineage = v_credential.lineage) AS lf,
    (SELECT SUM(pending) FROM aoc_open_stripes) AS dp,
    (SELECT SUM(in_flight) FROM aoc_open_stripes) AS df) k;
  RETURN json_build_object('domain', v_domain, 'credential', row_to_json(v_credential), 'lineage', v_lineage,
    'existing', v_existing, 'authority', v_authority, 'counts', v_counts);
END
$$`;

export const migration: Migration = {
  id: 12,
  name: 'transition_functions',
  up: '-- nothing on SQLite: statements there are in-process calls',
  postgres: `${APPEND_EVIDENCE};\n${LOCK_ENTRY};\n${LOCK_CREATE}`,
};
