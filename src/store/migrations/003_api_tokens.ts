import type { Migration } from '../migrations.js';

/**
 * Principal tokens of the HTTP API (DESIGN.md §8, docs/api.md "Authentication"): `admin` and
 * `operator` bearer tokens. Only the SHA-256 digest of each 256-bit secret is stored; a revoked
 * token keeps its row (revoked_at) so the list and the evidence stay complete. Executors do not
 * appear here: their credential is the one takeover issues (aoc_credentials, AOC-REQ-006).
 */
export const migration: Migration = {
  id: 3,
  name: 'api_tokens',
  up: `
CREATE TABLE api_tokens (
  id TEXT NOT NULL PRIMARY KEY,
  name TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('operator', 'admin')),
  secret_digest TEXT NOT NULL UNIQUE,
  created_at BIGINT NOT NULL,
  revoked_at BIGINT
)
`,
};
