import type { Migration } from '../migrations.js';

/**
 * `GET /v1/occurrences` (docs/api.md, "Listing occurrences"): pages are ordered newest first by
 * (created_at, id), and every filter the route offers has an index ending in that order, so the
 * first page (and every later one, by keyset) reads about a page of index entries whatever the
 * table's size. The lineage index of migration 002 ends at created_at; it is replaced by one that
 * also carries the id tie-break. A creation key is nearly unique (one per lineage), so its index
 * only needs the key. Combined filters use one of these and check the rest per row.
 */
export const migration: Migration = {
  id: 5,
  name: 'occurrence_listing',
  up: `
CREATE INDEX aoc_occurrences_created ON aoc_occurrences (created_at, id);
CREATE INDEX aoc_occurrences_phase_created ON aoc_occurrences (phase, created_at, id);
CREATE INDEX aoc_occurrences_outcome_created ON aoc_occurrences (outcome, created_at, id);
CREATE INDEX aoc_occurrences_profile_created ON aoc_occurrences (profile_id, created_at, id);
CREATE INDEX aoc_occurrences_creation_key ON aoc_occurrences (creation_key, created_at, id);
DROP INDEX aoc_occurrences_lineage;
CREATE INDEX aoc_occurrences_lineage_created ON aoc_occurrences (lineage, created_at, id)
`,
};
