/**
 * The reference system of record's own SQLite schema (it is a separate system, not Baton's store).
 * The database enforces what must never break even if the code did: lease ids are unique (replay),
 * an epoch only grows, and the audit log is append-only. `sor_meta` pins the origin every target URI
 * (and so every `resources` key) was minted under: a restart on another origin is refused, never
 * seeded afresh (docs/leases.md, "Origin pin"). Refusals of requests with no verified signature go
 * to `unauthenticated_refusals`, a ring of the last UNAUTHENTICATED_KEPT (slot = seq mod that), not
 * the audit log: anyone can send them (docs/leases.md §6).
 */
/** How many refusals of unauthenticated requests the system of record keeps (the newest). */
export const UNAUTHENTICATED_KEPT = 1000;

export const SOR_SCHEMA = `
CREATE TABLE IF NOT EXISTS sor_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS sor_meta_no_update BEFORE UPDATE ON sor_meta
  BEGIN SELECT RAISE(ABORT, 'sor_meta is write-once'); END;
CREATE TABLE IF NOT EXISTS resources (
  target TEXT PRIMARY KEY, epoch INTEGER NOT NULL CHECK (epoch >= 0), state TEXT NOT NULL,
  digest TEXT NOT NULL, updated_at INTEGER NOT NULL);
CREATE TRIGGER IF NOT EXISTS resources_epoch_grows BEFORE UPDATE ON resources
  WHEN NEW.epoch <= OLD.epoch BEGIN SELECT RAISE(ABORT, 'epoch must grow'); END;
CREATE TABLE IF NOT EXISTS leases (
  lease_id TEXT PRIMARY KEY, target TEXT NOT NULL, mode TEXT NOT NULL, status TEXT NOT NULL,
  lease TEXT NOT NULL, operation TEXT NOT NULL, inverse_payload TEXT NOT NULL,
  accepted_at INTEGER NOT NULL, window_ends_at INTEGER NOT NULL, committed_epoch INTEGER);
CREATE TABLE IF NOT EXISTS snapshots (
  lease_id TEXT PRIMARY KEY, target TEXT NOT NULL, epoch INTEGER NOT NULL, state TEXT NOT NULL, digest TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS shadow (
  lease_id TEXT PRIMARY KEY, target TEXT NOT NULL, base_epoch INTEGER NOT NULL, epoch INTEGER NOT NULL,
  state TEXT NOT NULL, digest TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS escrow (
  lease_id TEXT PRIMARY KEY, target TEXT NOT NULL, held_at INTEGER NOT NULL, approve_by INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS escrow_due ON escrow (approve_by);
CREATE TABLE IF NOT EXISTS unauthenticated_refusals (
  slot INTEGER PRIMARY KEY, seq INTEGER NOT NULL, code TEXT, receipt TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS audit (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, receipt_type TEXT NOT NULL, lease_id TEXT, code TEXT,
  receipt TEXT NOT NULL, prev_hash TEXT, hash TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit
  BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit
  BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
`;
