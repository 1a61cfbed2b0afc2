import type { Migration } from '../migrations.js';

/**
 * The history of unpinned Mission issuers (docs/missions.md "Unpinning an issuer"): an operator's
 * `DELETE /v1/missions/issuers/{issuer}` moves the issuer's `msn_issuers` row here — its pin as
 * JCS text and digest, who registered it when, who unpinned it when — in the transaction that
 * writes the evidence event `mission_issuer_unpinned` (chain `issuer:<issuer>`) and makes every
 * non-final view of that origin stale (A3.5: fail closed). One row per unpin: an issuer pinned
 * and unpinned again adds another. The key archive `msn_keys` is not touched (MST-06: archived
 * Status answers still re-verify).
 */
export const migration: Migration = {
  id: 33,
  name: 'mission_issuer_unpins',
  up: `
CREATE TABLE msn_issuer_unpins (
  issuer TEXT NOT NULL,
  pin TEXT NOT NULL,
  pin_digest TEXT NOT NULL,
  registered_at BIGINT NOT NULL,
  registered_by TEXT NOT NULL,
  unpinned_at BIGINT NOT NULL,
  unpinned_by TEXT NOT NULL
);
CREATE INDEX msn_issuer_unpins_issuer ON msn_issuer_unpins (issuer, unpinned_at)
`,
};
