import type { Migration } from '../migrations.js';

/**
 * `GET /v1/harness/items` and `baton harness list` page through work items by keyset over
 * (created_at, id) — the order they always listed in — instead of stopping silently at 1,000.
 * Without this index every page sorted the whole table. Every takeover lists the lineage's held
 * items (A6 `held`): without an index on lineage that read every item of every lineage. None of
 * these columns changes after the insert, so an item's state moves (dispatch, stop, entry)
 * never touch these indexes.
 */
export const migration: Migration = {
  id: 18,
  name: 'harness_item_listing',
  up: `
CREATE INDEX msn_items_created ON msn_items (created_at, id);
CREATE INDEX msn_items_lineage ON msn_items (lineage)
`,
};
