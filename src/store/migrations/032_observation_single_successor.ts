import type { Migration } from '../migrations.js';

/**
 * A continuity record has at most one correction (docs/observations.md, "Corrections,
 * immutability"; OBS-08 ¶19: a correction replaces its predecessor, so two corrections of one
 * record would each count, or disagree with nothing to tell which stands). `successor_of` is the
 * `supersedes` of every correction stored from now on, and the unique index lets one row per
 * (producer, predecessor) hold it, so of two corrections of one record committed at once on
 * PostgreSQL exactly one is stored (`insertRecord` answers the other 409).
 *
 * A store may already hold such forks (written before this migration): `cop_records` is
 * insert-only, so their rows keep `successor_of` NULL (NULLs never collide in a unique index), the
 * index is built whatever they hold, and nothing is chosen for them. `insertRecord` refuses any
 * further correction of a record that has a successor, old or new, by reading `supersedes` first;
 * CIF counts a fork's competing corrections once, every dimension UNKNOWN `conflicting_evidence`
 * (B3.2: disagreeing evidence is kept, not resolved by picking one; `currentRecords`).
 */
const TEXT = `ALTER TABLE cop_records ADD COLUMN successor_of TEXT;
CREATE UNIQUE INDEX cop_records_single_successor ON cop_records (producer, successor_of)`;

export const migration: Migration = {
  id: 32,
  name: 'observation_single_successor',
  up: TEXT,
};
