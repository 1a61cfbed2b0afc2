/**
 * `baton serve` flags that only mean something beside another one (docs/operations.md): given
 * without it they would be accepted and do nothing, so serve refuses to start — `input_invalid`,
 * exit 2, naming which flag needs which — before anything is opened (no database file made).
 * `--reconcile-concurrency` needs `--reconcile-every`; `--sqlite-checkpoints` needs the inline
 * writer (the engine's checkpoint thread exists for it only, src/store/sqlite.ts). The same pairs
 * given together as they are meant still serve. Real `baton serve` processes on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { spawnNode, type Exit, type WatchedChild } from '../support/child.js';
import { repoRoot } from '../support/paths.js';

const main = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

function serve(t: TestContext, args: string[], env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'baton-serve-pairs-'));
  const db = join(dir, 'b.db');
  const child = spawnNode('baton serve', [main, 'serve', '--port', '0', '--json', ...args], {
    cwd: repoRoot,
    env: { ...process.env, BATON_LOG_LEVEL: 'silent', BATON_DB: db, ...env },
  });
  t.after(() => {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  return { child, db };
}

/** Its exit, or 'ready' if it printed its ready line first (then it is stopped: it should not have started). */
async function exitOrReady(child: WatchedChild): Promise<Exit | 'ready'> {
  const ready: Promise<Exit | 'ready'> = child
    .waitFor('the ready line', (l) => (l.startsWith('{"url"') ? ('ready' as const) : undefined))
    .catch(() => child.exited);
  const first = await Promise.race([child.exited, ready]);
  if (first === 'ready') child.kill('SIGTERM');
  return first;
}

async function assertRefused(t: TestContext, args: string[], env: Record<string, string>, message: RegExp) {
  const { child, db } = serve(t, args, env);
  const exit = await exitOrReady(child);
  assert.notEqual(exit, 'ready', `${args.join(' ')} ${JSON.stringify(env)}: serve started`);
  assert.equal((exit as Exit).code, 2, child.stderr());
  assert.match(child.stderr(), message);
  assert.equal(existsSync(db), false, 'refused before the store was opened');
}

async function assertServes(t: TestContext, args: string[]) {
  const { child } = serve(t, args);
  assert.equal(await exitOrReady(child), 'ready', child.stderr());
  assert.equal((await child.exited).code, 0);
}

test('--reconcile-concurrency without --reconcile-every refuses to start (input_invalid, exit 2)', async (t) => {
  const needs =
    /^error: input_invalid: --reconcile-concurrency \(BATON_RECONCILE_CONCURRENCY\) needs --reconcile-every \(BATON_RECONCILE_EVERY\)/m;
  await assertRefused(t, ['--reconcile-concurrency', '8'], {}, needs);
  await assertRefused(t, [], { BATON_RECONCILE_CONCURRENCY: '8' }, needs);
  await assertServes(t, ['--reconcile-every', '30s', '--reconcile-concurrency', '8']);
});

test('--sqlite-checkpoints with --sqlite-writer thread refuses to start (input_invalid, exit 2)', async (t) => {
  const needs =
    /^error: input_invalid: --sqlite-checkpoints \(BATON_SQLITE_CHECKPOINTS\) needs the inline writer \(--sqlite-writer inline\)/m;
  await assertRefused(t, ['--sqlite-writer', 'thread', '--sqlite-checkpoints', 'sqlite'], {}, needs);
  await assertRefused(t, ['--sqlite-checkpoints', 'thread'], { BATON_SQLITE_WRITER: 'thread' }, needs);
  await assertRefused(t, ['--sqlite-writer', 'thread'], { BATON_SQLITE_CHECKPOINTS: 'sqlite' }, needs);
  await assertServes(t, ['--sqlite-writer', 'inline', '--sqlite-checkpoints', 'sqlite']);
});
