import type { Migration } from '../migrations.js';

/**
 * The evidence log refuses UPDATE and DELETE in the database itself (docs/store.md, "What it cannot
 * catch"; AOC-REQ-004, -012: a recorded decision and the consumed-authority record are immutable).
 * Nothing Baton does rewrites an event (evidence-log.ts appends only; its INSERTs are ON CONFLICT
 * DO NOTHING / OR IGNORE, never a replace), so the refusal costs appends nothing and turns an
 * accidental or casual rewrite into an error. As for `cop_*` (migrations 007, 027), it is a guard,
 * not a proof: whoever may drop a trigger can still rewrite a chain consistently; `baton log
 * verify` and the signed checkpoint export are what detect that.
 */
const sqliteTriggers = ['UPDATE', 'DELETE']
  .map(
    (op) =>
      `CREATE TRIGGER evidence_events_no_${op.toLowerCase()} BEFORE ${op} ON evidence_events BEGIN SELECT RAISE(ABORT, 'evidence_events is append-only'); END`,
  )
  .join(';\n');

// migration 007's cop_append_only() raises '<table> is append-only'.
const postgresTriggers = [
  'CREATE TRIGGER evidence_events_append_only BEFORE UPDATE OR DELETE ON evidence_events FOR EACH ROW EXECUTE FUNCTION cop_append_only()',
  'CREATE TRIGGER evidence_events_no_truncate BEFORE TRUNCATE ON evidence_events FOR EACH STATEMENT EXECUTE FUNCTION cop_append_only()',
].join(';\n');

export const migration: Migration = {
  id: 31,
  name: 'evidence_append_only',
  up: sqliteTriggers,
  postgres: postgresTriggers,
};
