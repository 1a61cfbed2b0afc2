/**
 * A PostgreSQL URL is never printed with its password (docs/store.md, "PostgreSQL"): not in
 * `user:pass@`, not as `?password=` or `sslpassword=` in the query. `baton serve` names its store
 * by scheme, user, host, port and database only, in the listening line and in --json `store`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { runServe } from '../../src/cli/commands/serve.js';
import { redactSecrets } from '../../src/cli/command.js';
import { redactUrl } from '../../src/server/open.js';
import { captureIo, tempDir } from '../store/support.js';
import { postgresForTests } from '../support/postgres.js';
import { waitUntil } from '../support/wait.js';

const db = await postgresForTests();

test('redactUrl keeps scheme, user, host, port and database; no password, no query value', () => {
  const url =
    'postgres://bob:pw1@db.example:6432/baton?password=pw2&sslpassword=pw3&sslkey=/k.pem&sslmode=require';
  assert.equal(redactUrl(url), 'postgres://bob@db.example:6432/baton?…');
  assert.equal(redactUrl('postgresql://db/x'), 'postgresql://db/x');
  assert.equal(
    redactSecrets(`at ${url} now`),
    'at postgres://bob:***@db.example:6432/baton?password=***&sslpassword=***&sslkey=/k.pem&sslmode=require now',
  );
});

/** `url` with its password, if any, moved into the query (a trust-auth server ignores one it needs not). */
function passwordInQuery(url: string): { url: string; secret: string } {
  const u = new URL(url);
  const secret = u.password === '' ? 'n0t-Pr1nted-s3cret' : decodeURIComponent(u.password);
  u.password = '';
  u.searchParams.set('password', secret);
  return { url: u.toString(), secret };
}

if (db !== undefined) {
  for (const json of [false, true]) {
    test(`baton serve --postgres URL?password=…${json ? ' --json' : ''}: the password is not printed`, async (t) => {
      const { url, secret } = passwordInQuery(await db.schema());
      const io = captureIo();
      const stop = new AbortController();
      const key = join(tempDir(t), 'serve.domain-key.pem');
      const args = ['--postgres', url, '--domain-key', key, '--port', '0', '--log-level', 'silent'];
      const done = runServe([...args, ...(json ? ['--json'] : [])], io, stop.signal);
      t.after(() => stop.abort());
      const out = () => io.out.join('');
      await waitUntil('baton serve to start', () => out().includes(json ? '"store"' : 'baton listening'), {
        running: done,
        detail: () => `stdout: ${out()}\nstderr: ${io.err.join('')}`,
      });
      const shown = new URL(url);
      const expected = `postgres ${shown.protocol}//${shown.username === '' ? '' : `${shown.username}@`}${shown.host}${shown.pathname}?…`;
      if (json) assert.equal((JSON.parse(out()) as { store: string }).store, expected);
      else assert.ok(out().includes(`(${expected})\n`), out());
      assert.ok(!out().includes(secret), out());
      stop.abort();
      assert.equal(await done, 0);
    });
  }
}
