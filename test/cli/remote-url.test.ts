/**
 * A server that does not answer is named by the base URL tried (a wrong --url or BATON_URL is seen
 * at once), never with the token. Real loopback: a port bound, then closed, so nothing listens.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { baton, tempDir, writeConfig } from '../config/support.js';

const TOKEN = 'btk.tok_0123456789abcdef0123456789abcdef.S3cr3t-part';

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address();
  await new Promise<void>((ok) => server.close(() => ok()));
  assert.ok(address !== null && typeof address === 'object');
  return address.port;
}

test('apply and the verbs name the base URL that gave no answer, never the token', async (t) => {
  const url = `http://127.0.0.1:${await closedPort()}`;
  const dir = tempDir(t);
  const file = writeConfig(dir, {
    format: 'baton.config/1',
    authorities: [{ id: 'a', unit: 'usd_cents', total: 5 }],
  });
  const applied = await baton(['apply', file, '--url', url, '--token', TOKEN]);
  assert.equal(applied.code, 1, applied.err);
  assert.equal(
    applied.err,
    `error: unavailable: no answer from Baton at ${url} for GET /v1/authorities/a (ECONNREFUSED)\n`,
  );
  const prefixed = await baton(['domain', 'show', '--url', `${url}/baton/`, '--token', TOKEN]);
  assert.equal(prefixed.code, 1, prefixed.err);
  assert.match(
    prefixed.err,
    new RegExp(`^error: unavailable: no answer from Baton at ${url}/baton for GET /v1/domain`),
  );
  for (const r of [applied, prefixed]) assert.doesNotMatch(r.err + r.out, /S3cr3t|btk\./);
});
