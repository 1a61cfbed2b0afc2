import type { Migration } from '../migrations.js';

/**
 * Console sessions (issue 14, docs/console.md "Sign-in"): an operator or admin token exchanged
 * for a session cookie. Only the SHA-256 digest of the cookie's 256-bit secret is stored; the
 * CSRF token is derived from that secret, so it is bound to the session and never stored. A
 * session is valid only while unexpired, not ended and its token unrevoked (the join in
 * src/store/sessions.ts), so revoking a token ends every session it opened.
 * The `(type, at)` index serves the overview's evidence-by-type reads (recent takeovers, entries
 * over time; src/store/evidence-recent.ts) without a scan of the log.
 */
export const migration: Migration = {
  id: 11,
  name: 'console_sessions',
  up: `
CREATE TABLE console_sessions (
  id TEXT NOT NULL PRIMARY KEY,
  secret_digest TEXT NOT NULL UNIQUE,
  token_id TEXT NOT NULL REFERENCES api_tokens (id),
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  ended_at BIGINT
);
CREATE INDEX console_sessions_token ON console_sessions (token_id);
CREATE INDEX evidence_events_type_at ON evidence_events (type, at)
`,
};
