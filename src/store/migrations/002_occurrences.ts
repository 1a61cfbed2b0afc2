import type { Migration } from '../migrations.js';

/**
 * The occurrences context (AOC, DESIGN.md §3). Uniqueness the draft requires is enforced here, by
 * the database, never by a read-then-write:
 * - the occurrence-creation binding (scope, key) — AOC-REQ-002 / -010;
 * - the native provider key within its provider namespace — AOC-REQ-003 / AOC-CASE-006;
 * - one credential per (lineage, generation) — AOC-REQ-006;
 * - exclusive linked identifiers (AADP request/permit, BCR operation, provider key/reference).
 * Authority arithmetic is guarded by CHECK constraints as a last line of defence (AOC-REQ-012).
 */
export const migration: Migration = {
  id: 2,
  name: 'occurrences',
  up: `
CREATE TABLE aoc_domain (
  singleton BIGINT NOT NULL PRIMARY KEY CHECK (singleton = 1),
  id TEXT NOT NULL,
  kid TEXT NOT NULL,
  public_key TEXT NOT NULL,
  limits TEXT NOT NULL,
  bypass_paths TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  version BIGINT NOT NULL
);
CREATE TABLE aoc_profiles (
  id TEXT NOT NULL,
  version TEXT NOT NULL,
  digest TEXT NOT NULL,
  document TEXT NOT NULL,
  registered_at BIGINT NOT NULL,
  PRIMARY KEY (id, version)
);
CREATE TABLE aoc_lineages (
  id TEXT NOT NULL PRIMARY KEY,
  generation BIGINT NOT NULL CHECK (generation >= 1),
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  version BIGINT NOT NULL
);
CREATE TABLE aoc_credentials (
  secret_digest TEXT NOT NULL PRIMARY KEY,
  lineage TEXT NOT NULL REFERENCES aoc_lineages (id),
  generation BIGINT NOT NULL,
  issued_at BIGINT NOT NULL,
  retired_at BIGINT
);
CREATE UNIQUE INDEX aoc_credentials_generation ON aoc_credentials (lineage, generation);
CREATE TABLE aoc_authorities (
  id TEXT NOT NULL PRIMARY KEY,
  unit TEXT NOT NULL,
  total BIGINT NOT NULL CHECK (total > 0),
  reserved BIGINT NOT NULL CHECK (reserved >= 0),
  consumed BIGINT NOT NULL CHECK (consumed >= 0),
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  version BIGINT NOT NULL,
  CHECK (reserved + consumed <= total)
);
CREATE TABLE aoc_occurrences (
  id TEXT NOT NULL PRIMARY KEY,
  lineage TEXT NOT NULL REFERENCES aoc_lineages (id),
  creation_scope TEXT NOT NULL,
  creation_key TEXT NOT NULL,
  creation_digest TEXT NOT NULL,
  linked_ids TEXT NOT NULL,
  profile_id TEXT NOT NULL,
  profile_version TEXT NOT NULL,
  profile_digest TEXT NOT NULL,
  account TEXT NOT NULL,
  environment TEXT NOT NULL,
  request_digest TEXT NOT NULL,
  native_key_rule TEXT NOT NULL,
  native_key TEXT,
  provider_reference TEXT,
  request TEXT NOT NULL,
  captured_generation BIGINT NOT NULL,
  entry_deadline BIGINT NOT NULL,
  authority_id TEXT NOT NULL REFERENCES aoc_authorities (id),
  authority_amount BIGINT NOT NULL CHECK (authority_amount > 0),
  authority_unit TEXT NOT NULL,
  phase TEXT NOT NULL CHECK (phase IN ('reserved', 'entered', 'resolved', 'released')),
  outcome TEXT NOT NULL,
  effect TEXT NOT NULL,
  conflict BIGINT NOT NULL,
  entered_at BIGINT,
  entered_generation BIGINT,
  released_at BIGINT,
  resolved_at BIGINT,
  remedy_of TEXT REFERENCES aoc_occurrences (id),
  remedy_kind TEXT,
  reissue_of TEXT REFERENCES aoc_occurrences (id),
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  version BIGINT NOT NULL,
  FOREIGN KEY (profile_id, profile_version) REFERENCES aoc_profiles (id, version)
);
CREATE UNIQUE INDEX aoc_occurrences_creation ON aoc_occurrences (creation_scope, creation_key);
CREATE UNIQUE INDEX aoc_occurrences_native_key ON aoc_occurrences (profile_id, account, environment, native_key);
CREATE INDEX aoc_occurrences_open ON aoc_occurrences (phase, lineage);
CREATE INDEX aoc_occurrences_lineage ON aoc_occurrences (lineage, created_at);
CREATE TABLE aoc_linked_ids (
  occurrence_id TEXT NOT NULL REFERENCES aoc_occurrences (id),
  type TEXT NOT NULL,
  value TEXT NOT NULL,
  exclusive_key TEXT,
  PRIMARY KEY (occurrence_id, type, value)
);
CREATE UNIQUE INDEX aoc_linked_ids_exclusive ON aoc_linked_ids (type, exclusive_key);
CREATE INDEX aoc_linked_ids_value ON aoc_linked_ids (type, value)
`,
};
