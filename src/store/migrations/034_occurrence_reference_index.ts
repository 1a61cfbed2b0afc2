import type { Migration } from '../migrations.js';

/**
 * The webhook receiver locates an occurrence by its BOUND provider reference when the delivery
 * names no native key of Baton's (docs/api.md "Webhooks"): Stripe's `payment_intent.canceled`
 * after a cancel call carries the cancel request's idempotency key, not the entry's, and an
 * event caused by no request carries none. Both the locating read (store/reconciliation.ts) and
 * the delivery's locking read (occurrences-repository.ts `lockByReference`) go through this
 * index. Partial: an occurrence has no reference until an authenticated answer binds one, so the
 * index holds only bound rows. Not unique: a second occurrence with the same reference must never
 * be written (the observe path refuses it as `binding_mismatch`), but if it ever were, both
 * readers see two rows and locate nothing (fail closed) instead of an insert failing somewhere
 * else. Portable SQL: SQLite and PostgreSQL both take a partial index.
 */
export const migration: Migration = {
  id: 34,
  name: 'occurrence_reference_index',
  up: `
CREATE INDEX aoc_occurrences_reference ON aoc_occurrences (profile_id, account, environment, provider_reference)
  WHERE provider_reference IS NOT NULL
`,
};
