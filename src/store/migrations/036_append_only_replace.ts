import type { Migration } from '../migrations.js';

/**
 * Close the REPLACE hole in the append-only guards of migrations 7, 27 and 31 (AOC-REQ-004, -012:
 * a recorded decision and the consumed-authority record are immutable; COP-OBS records likewise).
 *
 * SQLite: `INSERT OR REPLACE` (or `REPLACE INTO`, or an UPSERT's conflict resolution) deletes the
 * row it conflicts with without firing its DELETE trigger (recursive_triggers is off), so the
 * BEFORE DELETE guards never saw it: an event could be rewritten in place. A BEFORE INSERT trigger
 * per table now drops (RAISE(IGNORE)) any insert one of whose unique keys is already taken, before
 * conflict resolution runs: the stored row stays as it was. IGNORE, not ABORT, because a trigger
 * cannot tell a REPLACE from Baton's own `INSERT OR IGNORE` / `ON CONFLICT DO NOTHING` appends,
 * whose taken position must stay a skipped row the caller sees in `changes` (evidence-log.ts,
 * observations-records.ts); and a trigger that may ABORT would make every append keep a statement
 * journal (docs/store.md, "No statement journal for an append"). An implicit rowid is -1 in a
 * BEFORE INSERT trigger, so a rowid key is compared only when one was given (> 0; Baton never
 * gives one).
 *
 * PostgreSQL has no REPLACE (its UPSERT's UPDATE fires the UPDATE guard). Baton assigns
 * `evidence_events.seq` from 1; a row below 1 is refused there by a CHECK, added NOT VALID so no
 * existing row is rewritten or scanned (`baton log verify` reports any older one). SQLite cannot add
 * a CHECK to a table, and an implicit seq looks like -1 to a trigger: there verify reports it.
 */
const KEYS: Readonly<Record<string, readonly string[]>> = {
  evidence_events: ['seq = NEW.seq', 'subject = NEW.subject AND idx = NEW.idx'],
  cop_records: [
    'NEW.rowid > 0 AND rowid = NEW.rowid',
    'producer = NEW.producer AND record_id = NEW.record_id',
    'producer = NEW.producer AND successor_of = NEW.successor_of',
  ],
  cop_artifacts: ['NEW.rowid > 0 AND rowid = NEW.rowid', 'locator = NEW.locator'],
  cop_profiles: [
    'NEW.rowid > 0 AND rowid = NEW.rowid',
    'id = NEW.id AND version = NEW.version',
    'digest = NEW.digest',
  ],
  cop_conflicts: [
    'NEW.rowid > 0 AND rowid = NEW.rowid',
    'producer = NEW.producer AND record_id = NEW.record_id AND derived_digest = NEW.derived_digest',
  ],
};

const sqlite = Object.entries(KEYS)
  .map(([t, keys]) => {
    const taken = keys.map((k) => `EXISTS (SELECT 1 FROM ${t} WHERE ${k})`).join(' OR ');
    return `CREATE TRIGGER ${t}_no_replace BEFORE INSERT ON ${t} WHEN ${taken} BEGIN SELECT RAISE(IGNORE); END`;
  })
  .join(';\n');

export const migration: Migration = {
  id: 36,
  name: 'append_only_replace',
  up: sqlite,
  postgres:
    'ALTER TABLE evidence_events ADD CONSTRAINT evidence_events_seq_positive CHECK (seq >= 1) NOT VALID',
};
