/**
 * A server whose database a newer Baton migrated (a rolling upgrade on a shared store) answers
 * `/readyz` 503 so a load balancer drains it, and stops within one watch interval
 * (docs/operations.md, "Upgrading"): both read `schema_migrations` and find a migration this build
 * does not know.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { runServe } from '../../src/cli/commands/serve.js';
import { captureIo, tempDir } from '../store/support.js';
import { waitUntil } from '../support/wait.js';

test('serve: /readyz answers 503 and the server stops (exit 1) once the store holds a migration this build does not know', async (t) => {
  const db = join(tempDir(t), 'baton.db');
  const io = captureIo();
  const stop = new AbortController();
  const done = runServe(['--db', db, '--port', '0', '--log-level', 'silent'], io, stop.signal);
  t.after(() => stop.abort());
  const out = () => io.out.join('');
  await waitUntil('serve to listen', () => out().includes('baton listening'), { running: done });
  const base = /baton listening on (\S+)/.exec(out())?.[1] ?? '';
  assert.equal((await fetch(`${base}/readyz`)).status, 200);
  // What a newer Baton's `migrate` leaves behind, written by another process.
  const other = new Database(db);
  other
    .prepare("INSERT INTO schema_migrations (id, name, digest, applied_at) VALUES (9999, 'future', 'x', 0)")
    .run();
  other.close();
  const r = await fetch(`${base}/readyz`);
  assert.equal(r.status, 503);
  const body = (await r.json()) as { code?: string; details?: { newer?: number[] } };
  assert.equal(body.code, 'unavailable');
  assert.deepEqual(body.details?.newer, [9999]);
  // Within one watch interval the server stops on its own, refusing the store from then on
  // (src/store/schema-watch.ts): exit 1, said on stderr. Nothing here aborts it.
  assert.equal(await done, 1);
  const err = io.err.join('');
  assert.match(err, /unavailable: the store was migrated by a newer Baton \(migration 9999\)/);
  assert.match(err, /stopped: the store can no longer be used by this server/);
});
