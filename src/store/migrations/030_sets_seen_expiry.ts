import type { Migration } from '../migrations.js';

/**
 * The SET replay table learns each row's end (docs/missions.md "SET replay rows are pruned"):
 * `expires_at` is the SET's `exp` in epoch milliseconds. A jti must stay one-time only while its
 * SET could still be accepted (C-A18; A3.4 refuses a SET whose `exp` passed by more than 30 s), so
 * a row well past that can go; the partial index lets a bounded DELETE find the oldest rows
 * without a scan. Rows written before this migration have no `expires_at` (their SET's `exp` was
 * never stored) and are kept: nothing says when they stopped mattering.
 */
export const migration: Migration = {
  id: 30,
  name: 'sets_seen_expiry',
  up: `
ALTER TABLE msn_sets_seen ADD COLUMN expires_at BIGINT;
CREATE INDEX msn_sets_seen_expiry ON msn_sets_seen (expires_at) WHERE expires_at IS NOT NULL
`,
};
