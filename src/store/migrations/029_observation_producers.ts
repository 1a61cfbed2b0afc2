import type { Migration } from '../migrations.js';

/**
 * Producer key pins of the continuity observation service (docs/observations.md "Pinned producer
 * keys"; OBS-12 ¶25): one row per producer other than Baton's own, holding the Ed25519 public keys
 * a signed record under that producer must verify under — the JCS text of their JWKs, in kid
 * order, and the digest of their kids. Unlike the `cop_*` record tables this one changes (a pin is
 * replaced or removed by an operator); its history is the evidence chain `producer:<producer>`
 * (`observation_producer_pinned`, `observation_producer_unpinned`), written in the same
 * transaction as the row. Every server of a deployment reads it when it verifies a submission.
 */
export const migration: Migration = {
  id: 29,
  name: 'observation_producers',
  up: `
CREATE TABLE cop_producers (
  producer TEXT NOT NULL PRIMARY KEY,
  keys TEXT NOT NULL,
  keys_digest TEXT NOT NULL,
  pinned_at BIGINT NOT NULL,
  pinned_by TEXT NOT NULL
)
`,
};
