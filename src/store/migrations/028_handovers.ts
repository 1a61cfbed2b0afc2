import type { Migration } from '../migrations.js';

/**
 * The handovers of each occurrence (AOC-REQ-005; docs/occurrences.md, "Handovers"): one row per
 * occurrence a takeover delivered to its successor, naming the generation that takeover advanced
 * to — which is also its `generation_advanced` event's position in `lineage:<id>` (each takeover
 * appends exactly one). Written in the takeover's transaction; read by `GET /v1/occurrences/{id}`,
 * so an occurrence's handovers are found by its key instead of by reading its lineage's whole
 * chain, which grows with every takeover.
 *
 * Filled here from the takeovers already in the log: every string id in a `generation_advanced`
 * event's `delivered.reserved` and `delivered.unresolved`. A body that is not JSON (a changed
 * row) adds nothing and does not stop the migration; the chain walk reports that event.
 */
const TABLE = `
CREATE TABLE aoc_handovers (
  occurrence_id TEXT NOT NULL,
  lineage TEXT NOT NULL,
  generation BIGINT NOT NULL CHECK (generation >= 1),
  PRIMARY KEY (occurrence_id, lineage, generation)
)`;

const sqliteFill = ['reserved', 'unresolved']
  .map(
    (list) => `INSERT INTO aoc_handovers (occurrence_id, lineage, generation)
SELECT d.value, substr(e.subject, 9), e.idx
FROM evidence_events e,
  json_each(CASE WHEN json_valid(e.body) THEN
    CASE WHEN json_type(e.body, '$.delivered.${list}') = 'array'
      THEN json_extract(e.body, '$.delivered.${list}') ELSE '[]' END
    ELSE '[]' END) d
WHERE substr(e.subject, 1, 8) = 'lineage:' AND e.type = 'generation_advanced' AND d.type = 'text'
ON CONFLICT DO NOTHING`,
  )
  .join(';\n');

// PostgreSQL 15 has no "is this text JSON?" test: a throwaway function answers NULL for text that
// does not parse, so one changed row cannot stop the migration.
const postgresFill = `
CREATE FUNCTION baton_028_jsonb(t TEXT) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN t::jsonb;
EXCEPTION WHEN others THEN
  RETURN NULL;
END
$$;
INSERT INTO aoc_handovers (occurrence_id, lineage, generation)
SELECT DISTINCT d.value #>> '{}', substr(e.subject, 9), e.idx
FROM (SELECT subject, idx, baton_028_jsonb(body) AS b FROM evidence_events
      WHERE substr(subject, 1, 8) = 'lineage:' AND type = 'generation_advanced') e
CROSS JOIN (VALUES ('reserved'), ('unresolved')) AS k(list)
CROSS JOIN LATERAL jsonb_array_elements(
  CASE WHEN jsonb_typeof(e.b -> 'delivered' -> k.list) = 'array'
    THEN e.b -> 'delivered' -> k.list ELSE '[]'::jsonb END) AS d(value)
WHERE jsonb_typeof(d.value) = 'string'
ON CONFLICT DO NOTHING;
DROP FUNCTION baton_028_jsonb(TEXT)`;

export const migration: Migration = {
  id: 28,
  name: 'handovers',
  up: `${TABLE} WITHOUT ROWID;\n${sqliteFill}`,
  postgres: `${TABLE};\n${postgresFill}`,
};
