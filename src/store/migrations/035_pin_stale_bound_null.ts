import type { Migration } from '../migrations.js';

/**
 * Issuer pins now tell an issuer that advertised no `mission_max_stale_seconds` (`null`) from one
 * that advertised 0, the strictest bound (MSG-03; docs/missions.md "The issuer pin"). A pin
 * stored before held 0 for both, and 0 then meant "not advertised" (Baton's bound alone): every
 * stored pin whose bound is 0 is rewritten to `null`, so it keeps the meaning it was registered
 * with. Pins are stored as JCS text, where `bounds` has one member, so the text is exact. The row's
 * `pin_digest` is kept: it names the pin as registered (evidence, `baton apply`'s comparison).
 * `msn_issuer_unpins` is history and is left as it was written. Portable SQL: REPLACE is in
 * SQLite and PostgreSQL.
 */
export const migration: Migration = {
  id: 35,
  name: 'pin_stale_bound_null',
  up: `
UPDATE msn_issuers
SET pin = REPLACE(pin, '"bounds":{"max_stale_seconds":0}', '"bounds":{"max_stale_seconds":null}')
WHERE pin LIKE '%"bounds":{"max_stale_seconds":0}%'
`,
};
