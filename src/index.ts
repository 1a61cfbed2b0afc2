/**
 * The package root (`import … from 'baton-aoc'`): everything needed to embed Baton in a process —
 * the core (errors, JCS, digests, keys), the occurrences context, the store (SQLite and
 * PostgreSQL), the HTTP server and both SDK clients. It loads better-sqlite3, pg and Fastify. A
 * worker that only talks to a Baton server imports `baton-aoc/client` instead (no native module);
 * `baton-aoc/providers` and `baton-aoc/leases` are those contexts' own surfaces (package.json
 * "exports", docs/client.md "Installing").
 */
export * from './core/index.js';
export * from './occurrences/index.js';
export * from './store/index.js';
export * from './server/index.js';
export * from './client/index.js';
export { DEFAULT_TIMEOUT_MS } from './client/http-transport.js';
// Both contexts name their event record EvidenceEvent: the root's is the one the clients return;
// the store's (with its typed digest) keeps a longer name.
export type { EvidenceEvent } from './occurrences/index.js';
export type { EvidenceEvent as StoredEvidenceEvent } from './store/index.js';
