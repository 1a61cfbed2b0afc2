import type { Migration } from '../migrations.js';

/**
 * The pinned issuer registry of the Mission consumer (build spec A5 "Issuer pin", A6; issue 11 §2).
 * One row per issuer identifier: the `baton.mission-issuer/1` pin as its JCS text and digest (pins
 * are immutable: another document for the same issuer is a conflict), the SSF stream bearer the
 * issuer presents on RFC 8935 pushes and Baton presents on RFC 8936 polls — stored as its
 * SHA-256 digest only for push-only streams, never in clear in evidence or answers —, and the
 * stream's liveness: when the last verified SET of any kind arrived (A3.5).
 * An RFC 8936 poll stream needs its bearer in clear to authenticate outward: the row holds only a
 * reference to it (`env:NAME` or `file:PATH`), resolved by `baton serve`, as the pin's `key_ref`
 * names the private_key_jwt key (docs/missions.md "Issuer registry").
 */
export const migration: Migration = {
  id: 8,
  name: 'mission_issuers',
  up: `
CREATE TABLE msn_issuers (
  issuer TEXT NOT NULL PRIMARY KEY,
  pin TEXT NOT NULL,
  pin_digest TEXT NOT NULL,
  bearer_digest TEXT,
  poll_bearer_ref TEXT,
  registered_at BIGINT NOT NULL,
  registered_by TEXT NOT NULL,
  last_set_at BIGINT,
  last_poll_at BIGINT,
  last_poll_error TEXT
)
`,
};
