import type { Migration } from '../migrations.js';

/**
 * The append-only evidence log (DESIGN.md §2, docs/store.md "Evidence log").
 * - `evidence_events`: one row per state change; never updated or deleted by Baton.
 * - `evidence_heads`: subject → last hash and event count, written in the same transaction as
 *   each append, so `baton log verify` notices a chain whose last event was removed.
 * - `evidence_counter`: the last global `seq` handed out; a single row whose update serializes
 *   appends, so `seq` has no gaps (a rolled-back append rolls its number back too).
 */
export const migration: Migration = {
  id: 1,
  name: 'evidence_log',
  up: `
CREATE TABLE evidence_events (
  seq BIGINT NOT NULL PRIMARY KEY,
  subject TEXT NOT NULL,
  type TEXT NOT NULL,
  body TEXT NOT NULL,
  at BIGINT NOT NULL,
  actor TEXT NOT NULL,
  prev TEXT,
  hash TEXT NOT NULL UNIQUE
);
CREATE INDEX evidence_events_subject ON evidence_events (subject, seq);
CREATE TABLE evidence_heads (
  subject TEXT NOT NULL PRIMARY KEY,
  head TEXT NOT NULL,
  count BIGINT NOT NULL,
  last_seq BIGINT NOT NULL
);
CREATE TABLE evidence_counter (
  id BIGINT NOT NULL PRIMARY KEY,
  last_seq BIGINT NOT NULL
);
INSERT INTO evidence_counter (id, last_seq) VALUES (1, 0)
`,
};
