/**
 * `baton demo --missions` (issue 11 §6) run as a user runs it, in process: the reference issuer
 * pushes the revocation SET to Baton's real HTTP route; the demo's own facts are re-read from its
 * output (each line printed from a measured value, never a constant): zero provider effects after
 * the revocation, both queued payments suppressed, the dispatched one refused at entry, three
 * stops evidenced. And its usage errors.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { baton } from '../config/support.js';

test('HAR-13 A7.1 A7.2: demo --missions — queued payments suppressed by a pushed SET, the dispatched one refused at entry, no effect after the revocation', async () => {
  const r = await baton(['demo', '--missions']);
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(r.out, /reference Mission issuer \(.*for development and tests only/);
  assert.match(r.out, /^provider effects before the revocation: 1; after it: 0$/m);
  assert.match(r.out, /^queued payments suppressed: 2 of 2$/m);
  assert.match(r.out, /^invoice-2: enter refused — mission_not_active/m);
  assert.match(r.out, /^stops with signed Harness Evidence: 3 of 3$/m);
  assert.equal((r.out.match(/: suppressed$/gm) ?? []).length, 2);
});

test('demo --missions refuses --db (temporary files only)', async () => {
  const r = await baton(['demo', '--missions', '--db', '/tmp/never-created-by-baton.db']);
  assert.equal(r.code, 2);
  assert.match(r.err, /--missions uses temporary files only/);
});
