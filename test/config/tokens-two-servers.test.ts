/**
 * One config applied to two servers with one tokens file (docs/config.md "Operator tokens"): each
 * server mints its own token of the name, and the file keeps both — an entry of another server's
 * live token is never overwritten, so no secret of a live token is lost. A name re-minted after its
 * token was revoked on THIS server replaces this server's entry only.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startApi } from '../server/helpers.js';
import { baton, tempDir, writeConfig } from './support.js';

interface Entry {
  name: string;
  role: string;
  id: string;
  token: string;
  server?: string;
}
const entries = (file: string): Entry[] =>
  (JSON.parse(readFileSync(file, 'utf8')) as { tokens: Entry[] }).tokens;

test("a second server minting the same name keeps the first server's entry, and both tokens work", async (t) => {
  const a = await startApi(t);
  const b = await startApi(t);
  const dir = tempDir(t);
  const file = writeConfig(dir, {
    format: 'baton.config/1',
    tokens: { file: 'shared.tokens.json', create: [{ name: 'ci', role: 'operator' }] },
  });
  const tokensPath = join(dir, 'shared.tokens.json');

  const onA = await baton(['apply', file, '--url', a.url, '--token', a.admin]);
  assert.equal(onA.code, 0, onA.err);
  const [fromA] = entries(tokensPath);
  assert.ok(fromA !== undefined);
  assert.equal(fromA.server, new URL(a.url).origin, 'the entry names the server it was minted on');

  const onB = await baton(['apply', file, '--url', b.url, '--token', b.admin]);
  assert.equal(onB.code, 0, onB.err);
  const after = entries(tokensPath);
  assert.equal(after.length, 2, "both servers' tokens are in the file");
  assert.deepEqual(after[0], fromA, "A's entry is kept as it was");
  const fromB = after[1];
  assert.equal(fromB?.name, 'ci');
  assert.equal(fromB?.server, new URL(b.url).origin);
  assert.equal((await a.call('GET', '/v1/counts', { token: fromA.token })).status, 200, "A's token works");
  assert.equal((await b.call('GET', '/v1/counts', { token: fromB?.token ?? '' })).status, 200, "B's works");

  // Rotating on A (revoke, apply again) replaces A's entry only; B's stays.
  assert.equal((await a.call('DELETE', `/v1/tokens/${fromA.id}`, { token: a.admin })).status, 200);
  const again = await baton(['apply', file, '--url', a.url, '--token', a.admin]);
  assert.equal(again.code, 0, again.err);
  const rotated = entries(tokensPath);
  assert.equal(rotated.length, 2);
  assert.ok(!rotated.some((e) => e.id === fromA.id), "A's revoked entry is replaced");
  assert.ok(
    rotated.some((e) => e.id === fromB?.id),
    "B's entry is kept",
  );
  const newA = rotated.find((e) => e.server === new URL(a.url).origin);
  assert.equal((await a.call('GET', '/v1/counts', { token: newA?.token ?? '' })).status, 200);
});
