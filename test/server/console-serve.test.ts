/**
 * `baton serve` and the console (issue 14): the console's address is printed after the listening
 * line; --no-console (or BATON_NO_CONSOLE) turns /console off; the --json line says which.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnNode } from '../support/child.js';
import { repoRoot } from '../support/paths.js';

const main = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

function serve(t: TestContext, args: string[], env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'baton-console-serve-'));
  const child = spawnNode('baton serve', [main, 'serve', '--db', join(dir, 'b.db'), '--port', '0', ...args], {
    cwd: repoRoot,
    env: { ...process.env, BATON_LOG_LEVEL: 'silent', ...env },
  });
  t.after(() => {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  return child;
}

test('baton serve prints the console address after the listening line', async (t) => {
  const child = serve(t, []);
  const url = await child.waitFor('listening', (l) => /^baton listening on (http:\S+) /.exec(l)?.[1]);
  const line = await child.waitFor('console line', (l) => (l.startsWith('console at ') ? l : undefined));
  assert.equal(line, `console at ${url}/console/ (sign in with an operator or admin token)`);
  const page = await fetch(`${url}/console/`);
  assert.ok([200, 503].includes(page.status), 'served (503 only when the console is not built)');
  assert.ok(page.headers.get('content-security-policy')?.includes("frame-ancestors 'none'"));
});

test('--no-console and BATON_NO_CONSOLE turn /console off; --json says console null', async (t) => {
  for (const [args, env] of [
    [['--no-console', '--json'], {}],
    [['--json'], { BATON_NO_CONSOLE: 'true' }],
  ] as const) {
    const child = serve(t, [...args], env);
    const ready = JSON.parse(
      await child.waitFor('json', (l) => (l.startsWith('{') ? l : undefined)),
    ) as Record<string, unknown>;
    assert.equal(ready['console'], null);
    const page = await fetch(`${String(ready['url'])}/console/`);
    assert.equal(page.status, 404);
    assert.equal((await fetch(`${String(ready['url'])}/healthz`)).status, 200, 'the API still serves');
    child.kill('SIGTERM');
  }
  const on = serve(t, ['--json']);
  const ready = JSON.parse(await on.waitFor('json', (l) => (l.startsWith('{') ? l : undefined))) as Record<
    string,
    unknown
  >;
  assert.equal(ready['console'], `${String(ready['url'])}/console/`);
});

test('--secure-cookies (BATON_SECURE_COOKIES): the session cookie is Secure though the server speaks plain http', async (t) => {
  for (const [args, env] of [
    [['--json', '--secure-cookies'], {}],
    [['--json'], { BATON_SECURE_COOKIES: 'true' }],
    [['--json'], {}],
  ] as const) {
    const child = serve(t, [...args], env);
    const ready = JSON.parse(await child.waitFor('json', (l) => (l.startsWith('{') ? l : undefined))) as {
      url: string;
      adminToken: string;
    };
    const res = await fetch(`${ready.url}/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: ready.adminToken }),
    });
    assert.equal(res.status, 201);
    const attrs = (res.headers.get('set-cookie') ?? '').split(';').map((a) => a.trim());
    const asked = (args as readonly string[]).includes('--secure-cookies') || 'BATON_SECURE_COOKIES' in env;
    assert.equal(attrs.includes('Secure'), asked, attrs.join('; '));
    child.kill('SIGTERM');
  }
});
