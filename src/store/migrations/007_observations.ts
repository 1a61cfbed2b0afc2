import type { Migration } from '../migrations.js';

/**
 * Continuity observation records (docs/observations.md; build spec B6, OBS-08). Raw records are
 * immutable: corrections are new rows naming their predecessor (`supersedes`). UPDATE and DELETE
 * are refused by the database itself on both engines (triggers), not by Baton's goodwill.
 * - `cop_records`: one row per (producer, record_id); `body` is the record's JCS text (with its
 *   envelope when signed), `digest` the sha-256 of those bytes.
 * - `cop_artifacts`: bytes that evidence digests point at, with their representation (OBS-10).
 * - `cop_profiles`: measurement profiles pinned by digest.
 */
const TABLES = `
CREATE TABLE cop_records (
  producer TEXT NOT NULL,
  record_id TEXT NOT NULL,
  digest TEXT NOT NULL,
  body TEXT NOT NULL,
  event_type TEXT NOT NULL,
  scope_id TEXT NOT NULL,
  observed_at BIGINT NOT NULL,
  supersedes TEXT,
  analysis_revision TEXT,
  envelope TEXT,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (producer, record_id)
);
CREATE INDEX cop_records_scope ON cop_records (scope_id, observed_at);
CREATE INDEX cop_records_supersedes ON cop_records (producer, supersedes);
CREATE TABLE cop_artifacts (
  locator TEXT NOT NULL PRIMARY KEY,
  digest TEXT NOT NULL,
  representation TEXT NOT NULL,
  media_type TEXT NOT NULL,
  bytes TEXT NOT NULL,
  redacted_of TEXT,
  created_at BIGINT NOT NULL
);
CREATE TABLE cop_profiles (
  id TEXT NOT NULL,
  version TEXT NOT NULL,
  digest TEXT NOT NULL UNIQUE,
  body TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (id, version)
)`;

const TABLE_NAMES = ['cop_records', 'cop_artifacts', 'cop_profiles'];

const sqliteTriggers = TABLE_NAMES.flatMap((t) =>
  ['UPDATE', 'DELETE'].map(
    (op) =>
      `CREATE TRIGGER ${t}_no_${op.toLowerCase()} BEFORE ${op} ON ${t} BEGIN SELECT RAISE(ABORT, '${t} is append-only'); END`,
  ),
).join(';\n');

const postgresTriggers = [
  `CREATE FUNCTION cop_append_only() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RAISE EXCEPTION ''% is append-only'', TG_TABLE_NAME; END'`,
  ...TABLE_NAMES.flatMap((t) => [
    `CREATE TRIGGER ${t}_append_only BEFORE UPDATE OR DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION cop_append_only()`,
    `CREATE TRIGGER ${t}_no_truncate BEFORE TRUNCATE ON ${t} FOR EACH STATEMENT EXECUTE FUNCTION cop_append_only()`,
  ]),
].join(';\n');

export const migration: Migration = {
  id: 7,
  name: 'observations',
  up: `${TABLES};\n${sqliteTriggers}`,
  postgres: `${TABLES};\n${postgresTriggers}`,
};
