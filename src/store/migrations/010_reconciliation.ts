import type { Migration } from '../migrations.js';

/**
 * Reconciliation inside `baton serve` (issue 13 §4, docs/providers.md "Reconciliation in serve"):
 * - `prv_webhook_events`: the provider event ids a webhook receiver has accepted, per profile, so
 *   a duplicate delivery (the provider's retry, a replayed capture inside the window) records
 *   nothing new. The primary key is the idempotency rule, enforced by the database (DESIGN.md §2).
 * - `prv_reconcile_claims`: one row per unresolved occurrence the background reconciler has
 *   asked about: who holds it until when (a claim with an expiry, taken by one atomic conditional
 *   upsert, so several servers on one PostgreSQL never ask about one occurrence at once), how many
 *   asks went unanswered, and the earliest time of the next ask (backoff, Retry-After).
 */
export const migration: Migration = {
  id: 10,
  name: 'reconciliation',
  up: `
CREATE TABLE prv_webhook_events (
  profile_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  occurrence_id TEXT,
  received_at BIGINT NOT NULL,
  PRIMARY KEY (profile_id, event_id)
);
CREATE TABLE prv_reconcile_claims (
  occurrence_id TEXT NOT NULL PRIMARY KEY,
  holder TEXT,
  claimed_until BIGINT NOT NULL,
  attempts BIGINT NOT NULL,
  next_at BIGINT NOT NULL
);
CREATE INDEX prv_reconcile_claims_next ON prv_reconcile_claims (next_at)`,
};
