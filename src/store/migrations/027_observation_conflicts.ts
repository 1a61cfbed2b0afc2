import type { Migration } from '../migrations.js';

/**
 * Conflicts the continuity projector found (docs/observations.md, "Corrections, immutability";
 * B3.2, OBS-13 ¶26): one row per stored record whose re-derivation from the evidence log gave other
 * bytes, and per digest re-derived. Recorded when found, read by every later CIF, series and report,
 * so a record found contradicted counts UNKNOWN `conflicting_evidence` from then on, whether or not
 * the read that follows re-derives it. Insert-only like `cop_records`: UPDATE, DELETE (and, on
 * PostgreSQL, TRUNCATE) are refused by the database (migration 007's function on PostgreSQL).
 */
const TABLE = `
CREATE TABLE cop_conflicts (
  producer TEXT NOT NULL,
  record_id TEXT NOT NULL,
  stored_digest TEXT NOT NULL,
  derived_digest TEXT NOT NULL,
  detected_at BIGINT NOT NULL,
  actor TEXT NOT NULL,
  PRIMARY KEY (producer, record_id, derived_digest)
)`;

const sqliteTriggers = ['UPDATE', 'DELETE']
  .map(
    (op) =>
      `CREATE TRIGGER cop_conflicts_no_${op.toLowerCase()} BEFORE ${op} ON cop_conflicts BEGIN SELECT RAISE(ABORT, 'cop_conflicts is append-only'); END`,
  )
  .join(';\n');

const postgresTriggers = [
  'CREATE TRIGGER cop_conflicts_append_only BEFORE UPDATE OR DELETE ON cop_conflicts FOR EACH ROW EXECUTE FUNCTION cop_append_only()',
  'CREATE TRIGGER cop_conflicts_no_truncate BEFORE TRUNCATE ON cop_conflicts FOR EACH STATEMENT EXECUTE FUNCTION cop_append_only()',
].join(';\n');

export const migration: Migration = {
  id: 27,
  name: 'observation_conflicts',
  up: `${TABLE};\n${sqliteTriggers}`,
  postgres: `${TABLE};\n${postgresTriggers}`,
};
