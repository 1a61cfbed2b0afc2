import type { Migration } from '../migrations.js';

/**
 * A released occurrence is reissued at most once (AOC-REQ-008: "a later presentation of the same
 * occurrence … MUST NOT create a new reservation"). The reissue decision reads the tombstone's
 * successor under the tombstone's row lock (occurrences/machine/create.ts `checkLink`), so two
 * reissues of one tombstone serialize there and the second meets the first; this index makes that
 * read an index probe. Partial: only reissues have an entry, so no other occurrence's INSERT or
 * UPDATE writes one (docs/store.md, "One row version per transition").
 */
const INDEX =
  'CREATE INDEX IF NOT EXISTS aoc_occurrences_reissue_of ON aoc_occurrences (reissue_of) WHERE reissue_of IS NOT NULL';

export const migration: Migration = {
  id: 26,
  name: 'reissue_successor',
  up: INDEX,
};
