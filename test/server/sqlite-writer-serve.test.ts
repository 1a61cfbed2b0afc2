/**
 * `baton serve --sqlite-writer thread|inline` (BATON_SQLITE_WRITER; docs/store.md "The writer
 * thread"): with the writer thread, what serve writes at start (migrations, the first admin token)
 * goes through the thread and is what the main thread then reads; SIGTERM drains and exits 0. A
 * value other than thread or inline, or the flag with PostgreSQL, refuses to start (exit 2).
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
  const dir = mkdtempSync(join(tmpdir(), 'baton-writer-serve-'));
  const child = spawnNode('baton serve', [main, 'serve', '--port', '0', '--json', ...args], {
    cwd: repoRoot,
    env: { ...process.env, BATON_LOG_LEVEL: 'silent', BATON_DB: join(dir, 'b.db'), ...env },
  });
  t.after(() => {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  return child;
}

test('serve with the writer thread: what it wrote at start is read back; SIGTERM exits 0', async (t) => {
  for (const [args, env] of [
    [['--sqlite-writer', 'thread'], {}],
    [[], { BATON_SQLITE_WRITER: 'thread' }],
  ] as const) {
    const child = serve(t, [...args], env);
    const ready = JSON.parse(
      await child.waitFor('json', (l) => (l.startsWith('{') ? l : undefined)),
    ) as Record<string, unknown>;
    const token = ready['adminToken'];
    assert.equal(typeof token, 'string', 'the first admin token was created through the thread');
    const ask = (bearer: string) =>
      fetch(`${String(ready['url'])}/v1/domain`, { headers: { authorization: `Bearer ${bearer}` } });
    assert.equal((await ask(`${String(token)}x`)).status, 401, 'a token nobody stored is refused');
    assert.notEqual((await ask(String(token))).status, 401, 'the token the thread committed authenticates');
    child.kill('SIGTERM');
    assert.equal((await child.exited).code, 0);
  }
});

test('--sqlite-writer refuses an unknown value and PostgreSQL (exit 2)', async (t) => {
  const bad = serve(t, ['--sqlite-writer', 'fast']);
  assert.equal((await bad.exited).code, 2);
  assert.match(bad.stderr(), /--sqlite-writer \(BATON_SQLITE_WRITER\) must be thread or inline/);
  const pg = serve(t, ['--postgres', 'postgres://127.0.0.1:1/none', '--sqlite-writer', 'thread'], {
    BATON_DB: '',
  });
  assert.equal((await pg.exited).code, 2);
  assert.match(pg.stderr(), /--sqlite-writer is for SQLite/);
});

test('--sqlite-checkpoints sqlite serves; an unknown value or PostgreSQL refuses to start (exit 2)', async (t) => {
  const ok = serve(t, ['--sqlite-checkpoints', 'sqlite']);
  const ready = JSON.parse(await ok.waitFor('json', (l) => (l.startsWith('{') ? l : undefined))) as Record<
    string,
    unknown
  >;
  assert.equal(typeof ready['adminToken'], 'string');
  ok.kill('SIGTERM');
  assert.equal((await ok.exited).code, 0);
  const bad = serve(t, [], { BATON_SQLITE_CHECKPOINTS: 'never' });
  assert.equal((await bad.exited).code, 2);
  assert.match(bad.stderr(), /--sqlite-checkpoints \(BATON_SQLITE_CHECKPOINTS\) must be thread or sqlite/);
  const pg = serve(t, ['--postgres', 'postgres://127.0.0.1:1/none', '--sqlite-checkpoints', 'sqlite'], {
    BATON_DB: '',
  });
  assert.equal((await pg.exited).code, 2);
  assert.match(pg.stderr(), /--sqlite-checkpoints is for SQLite/);
});
