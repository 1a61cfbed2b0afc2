import type { Migration } from '../migrations.js';

/**
 * `GET /v1/counts` (the console's overview, issue 14 §4 "usable at 1,000,000 stored
 * occurrences") groups every occurrence by (phase, outcome, conflict). Without an index holding
 * all three, both engines read every row: at 1,000,000 occurrences SQLite walked the
 * (phase, lineage) index and fetched each row for its outcome (≈ 10 s on the bench machine under
 * load), PostgreSQL scanned the table (≈ 1.3 s). With this index the count is a covering
 * (index-only) scan: ≈ 0.2 s on both (docs/scale.md, "The console's list at 1,000,000
 * occurrences"). It costs one more index entry per occurrence write, of three short columns.
 */
export const migration: Migration = {
  id: 13,
  name: 'occurrence_counts',
  up: `
CREATE INDEX aoc_occurrences_state ON aoc_occurrences (phase, outcome, conflict)
`,
};
