/**
 * examples/first-call.sh against a stand-in server (the full run is test/readme/first-call.test.ts):
 * it says on stderr which Baton it talks to (BATON_URL exported for a real server is never used
 * unnoticed), it takes the token named first-call-operator (not the tokens file's first entry),
 * and with no Baton answering it says so after its 30 s wait, as first-call.ts does.
 */
import assert from 'node:assert/strict';
import { cpSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../support/paths.js';
import { spawnWatched } from '../support/child.js';
import { tempDir } from '../store/support.js';

function script(t: Parameters<typeof tempDir>[0]): string {
  const dir = tempDir(t);
  cpSync(join(repoRoot, 'examples', 'first-call.sh'), join(dir, 'first-call.sh'));
  const tokens = [
    { name: 'ci', token: 'the-ci-token' },
    { name: 'first-call-operator', token: 'the-operator-token' },
  ];
  writeFileSync(join(dir, 'first-call.tokens.json'), JSON.stringify({ tokens }), { mode: 0o600 });
  return join(dir, 'first-call.sh');
}

test('first-call.sh names the Baton it uses and sends the first-call-operator token, found by name', async (t) => {
  const bearers: string[] = [];
  const server = createServer((req, res) => {
    if (req.url === '/readyz' || req.url === '/.well-known/baton-sandbox') {
      res.setHeader('content-type', 'application/json');
      res.end('{}');
      return;
    }
    bearers.push(String(req.headers.authorization));
    res.statusCode = 401;
    res.end('{"code":"unauthenticated"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const child = spawnWatched('first-call.sh', 'bash', [script(t), 'inv-x'], {
    env: { ...process.env, BATON_URL: url, SANDBOX_URL: url },
  });
  const exit = await child.waitForExit();
  assert.notEqual(exit.code, 0);
  assert.match(
    child.stderr(),
    new RegExp(
      `^first-call\\.sh: Baton at ${url} \\(from BATON_URL\\), sandbox at ${url} \\(from SANDBOX_URL\\)$`,
      'm',
    ),
  );
  assert.deepEqual(bearers, ['Bearer the-operator-token']);
});

test('first-call.sh with no Baton answering: "Baton did not answer at URL within 30 s", exit 1', async (t) => {
  // A port just closed: nothing answers there.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const child = spawnWatched('first-call.sh', 'bash', [script(t), 'inv-x'], {
    env: { ...process.env, BATON_URL: url, SANDBOX_URL: url },
  });
  const exit = await child.waitForExit(90_000);
  assert.equal(exit.code, 1, child.stderr());
  assert.match(
    child.stderr(),
    new RegExp(`^first-call\\.sh: Baton did not answer at ${url} within 30 s$`, 'm'),
  );
});
