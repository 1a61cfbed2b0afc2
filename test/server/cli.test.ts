/**
 * `baton tokens` in-process against a real SQLite file, and `baton serve` as a real child process:
 * it prints the one-time admin token and exactly where it listens, serves, and stops cleanly on
 * SIGTERM and SIGINT.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/baton.js';
import type { CliIo } from '../../src/cli/io.js';
import { buildServer } from '../../src/server/index.js';
import { openBaton } from '../../src/server/open.js';
import { spawnNode } from '../support/child.js';
import { repoRoot } from '../support/paths.js';
import { assertProblem, request } from './helpers.js';

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: (s) => void (out += s),
    stderr: (s) => void (err += s),
    readStdin: () => Promise.resolve(Buffer.alloc(0)),
  };
  const code = await main(argv, io);
  return { code, out, err };
}

test('baton tokens create | list | revoke, and a revoked token is refused by the server', async (t) => {
  const db = join(tempDir(t), 'baton.db');
  // tokens never creates a database (test/cli/input-exits.test.ts): set the store up first.
  assert.equal((await run(['migrate', '--db', db])).code, 0);
  const created = await run(['tokens', 'create', '--role', 'operator', '--name', 'ci bot', '--db', db]);
  assert.equal(created.code, 0, created.err);
  const token = created.out.trim();
  assert.match(token, /^btk\.tok_[a-f0-9]{32}\.[A-Za-z0-9_-]{43}$/, 'the secret is printed alone, once');
  const id = token.split('.')[1] ?? '';
  const listed = await run(['tokens', 'list', '--db', db]);
  assert.equal(listed.code, 0);
  assert.match(listed.out, new RegExp(`^${id}  operator .* active  ci bot$`, 'm'));
  assert.ok(!listed.out.includes(token.split('.')[2] ?? '-'), 'list never shows a secret');

  const opened = await openBaton({ kind: 'sqlite', path: db });
  const app = buildServer({ engine: opened.engine, service: opened.service });
  t.after(async () => {
    await app.close();
    await opened.close();
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  assert.equal((await request(url, 'GET', '/v1/counts', { token })).status, 200);

  const revoked = await run(['tokens', 'revoke', id, '--db', db]);
  assert.equal(revoked.code, 0, revoked.err);
  assert.match(revoked.out, / revoked /);
  assertProblem(await request(url, 'GET', '/v1/counts', { token }), 401, 'unauthenticated');
  assert.equal((await run(['tokens', 'revoke', id, '--db', db])).code, 0, 'revoking again is harmless');
  assert.equal((await run(['tokens', 'revoke', `tok_${'0'.repeat(32)}`, '--db', db])).code, 1);
  assert.equal((await run(['tokens', 'create', '--role', 'executor', '--db', db])).code, 2);
  assert.equal((await run(['tokens', 'create', '--db', db])).code, 2);
  assert.equal((await run(['tokens', 'frobnicate', '--db', db])).code, 2);
  assert.equal(
    (await run(['tokens', 'list', '--db', join(db, '..', 'absent.db')])).code,
    2,
    'list creates nothing',
  );
});

const fromTs = import.meta.url.endsWith('.ts');
const mainScript = fileURLToPath(new URL(`../../src/cli/main.${fromTs ? 'ts' : 'js'}`, import.meta.url));

interface Served {
  readonly proc: ChildProcess;
  readonly lines: string[];
  readonly exited: Promise<number | null>;
}

/** Spawn `baton serve` and collect stdout until the listening line (a deadline, then its stderr). */
async function serve(args: string[]): Promise<Served & { url: string }> {
  const argv = fromTs ? ['--import', 'tsx', mainScript, 'serve', ...args] : [mainScript, 'serve', ...args];
  const child = spawnNode('baton serve', argv, { cwd: repoRoot });
  const lines: string[] = [];
  const url = await child.waitFor('listening line', (line) => {
    lines.push(line);
    return /^baton listening on (http:\/\/127\.0\.0\.1:\d+) \(sqlite .+\)$/.exec(line)?.[1];
  });
  return {
    proc: child.proc,
    lines,
    url,
    get exited() {
      return child.waitForExit().then((e) => e.code);
    },
  };
}

test('baton serve prints its address and the one-time admin token, serves, and stops on SIGTERM', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'baton.db');
  const first = await serve(['--db', db, '--port', '0', '--log-level', 'silent']);
  t.after(() => first.proc.kill('SIGKILL'));
  assert.equal(first.lines.length, 2);
  const admin = /^initial admin token \(shown once; only its digest is stored\): (btk\.\S+)$/.exec(
    first.lines[0] ?? '',
  )?.[1];
  assert.ok(admin !== undefined, first.lines[0]);
  assert.equal(first.lines[1], `baton listening on ${first.url} (sqlite ${db})`);
  assert.deepEqual((await request(first.url, 'GET', '/healthz')).body, { status: 'ok' });
  assert.equal((await request(first.url, 'GET', '/readyz')).status, 200);
  const tokens = await request(first.url, 'GET', '/v1/tokens', { token: admin });
  assert.equal(tokens.status, 200);
  assert.equal((tokens.body['tokens'] as unknown[]).length, 1);
  assert.equal(statSync(`${db}.domain-key.pem`).mode & 0o077, 0, 'the domain key is private');
  first.proc.kill('SIGTERM');
  assert.equal(await first.exited, 0, 'graceful shutdown exits 0');

  // A second start on the same store: no new admin token, the old one still works.
  const second = await serve(['--db', db, '--port', '0', '--log-level', 'silent']);
  t.after(() => second.proc.kill('SIGKILL'));
  assert.equal(second.lines.length, 1, 'no second admin token is printed');
  assert.equal((await request(second.url, 'GET', '/v1/tokens', { token: admin })).status, 200);
  second.proc.kill('SIGINT');
  assert.equal(await second.exited, 0);
});

test('baton serve refuses bad arguments with exit 2', async () => {
  assert.equal((await run(['serve', '--port', '70000'])).code, 2);
  assert.equal((await run(['serve', '--db', 'x.db', '--postgres', 'postgres://h/db'])).code, 2);
  assert.equal((await run(['serve', '--log-level', 'loud'])).code, 2);
  assert.equal((await run(['serve', '--domain-key', 'k.domain-key.pem'])).code, 2);
  assert.equal((await run(['serve', '--pool', '5'])).code, 2, '--pool is for --postgres');
  for (const pool of ['0', '1001', '-1', 'ten']) {
    const r = await run(['serve', '--postgres', 'postgres://127.0.0.1:1/none', '--pool', pool]);
    assert.equal(r.code, 2, `--pool ${pool}`);
  }
  assert.match((await run(['serve', '--help'])).out, /usage: baton serve/);
});
