/**
 * README "First guarded call", run VERBATIM: the fenced block is read from README.md (so drift
 * fails this test) and run with bash in a scratch copy of the clone (symlinks to dist, src,
 * node_modules, profiles; its own examples/ and database), on the README's fixed ports. Then the
 * curl example. Each must print `"status":"succeeded"` and the sandbox's effect ledger — the
 * oracle — must show exactly one effect for that payment's native key; a replay of the same
 * invoice (with either example) sends nothing and prints the original's status. Every process the block started is killed afterwards (its process group).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import {
  cpSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { repoRoot } from '../support/paths.js';

const SANDBOX = 'http://127.0.0.1:4010';
const ADMIN = 'readme-test-sandbox-admin-token';
const DEADLINE_MS = 240_000;

/** The first ```sh block after the "## First guarded call" heading. */
function readmeBlock(): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.split(/^## First guarded call$/m)[1];
  assert.ok(section !== undefined, 'README.md has a "First guarded call" section');
  const m = /```sh\n([\s\S]*?)```/.exec(section.split(/^## /m)[0] ?? '');
  assert.ok(m?.[1] !== undefined, 'the section has a sh block');
  return m[1];
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', () => resolve(true));
  });
}

/** A scratch clone: what a fresh clone has after `npm install` (dist built), with its own examples/. */
function workspace(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-readme-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const name of ['node_modules', 'dist', 'src', 'profiles', 'schemas'])
    symlinkSync(join(repoRoot, name), join(dir, name));
  copyFileSync(join(repoRoot, 'package.json'), join(dir, 'package.json'));
  mkdirSync(join(dir, 'examples'));
  for (const f of ['baton.config.json', 'first-call.ts', 'first-call.sh'])
    cpSync(join(repoRoot, 'examples', f), join(dir, 'examples', f));
  return dir;
}

interface Finished {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

/** Run bash in its own process group; resolve when bash exits (background children keep the pipes). */
function bash(t: TestContext, cwd: string, args: string[]): Promise<Finished> {
  const child: ChildProcess = spawn('bash', args, {
    cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, BATON_SANDBOX_ADMIN_TOKEN: ADMIN, npm_config_update_notifier: 'false' },
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (err += b.toString()));
  t.after(() => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    } catch {
      // the group is already gone
    }
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no exit within ${DEADLINE_MS} ms:\n${out}\n${err}`)),
      DEADLINE_MS,
    );
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

function lastJson(out: string): Record<string, unknown> {
  const line = out
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{"invoice"'))
    .pop();
  assert.ok(line !== undefined, `a result line in:\n${out}`);
  return JSON.parse(line) as Record<string, unknown>;
}

async function effectCount(nativeKey: string): Promise<number> {
  const r = await fetch(`${SANDBOX}/admin/effects/${encodeURIComponent(nativeKey)}`, {
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  assert.equal(r.status, 200);
  return ((await r.json()) as { count: number }).count;
}

test(
  'README "First guarded call": the block verbatim, then the curl example, each one payment and one effect',
  { timeout: DEADLINE_MS * 2 },
  async (t) => {
    for (const port of [4010, 4001]) assert.ok(await portFree(port), `port ${port} (the README's) is in use`);
    const dir = workspace(t);
    const block = readmeBlock();
    assert.equal(block.trim().split('\n').length, 3, 'at most three commands');

    const run = await bash(t, dir, ['-c', block]);
    assert.equal(run.code, 0, `${run.out}\n${run.err}`);
    const sdk = lastJson(run.out);
    assert.equal(sdk['status'], 'succeeded');
    assert.deepEqual(
      [sdk['phase'], sdk['outcome'], sdk['effect'], sdk['adapterCalls']],
      ['resolved', 'success', 'occurred', 1],
    );
    assert.equal(await effectCount(String(sdk['nativeKey'])), 1, 'the sandbox applied exactly one effect');

    // The same invoice again: the creation binding returns the original; nothing is sent.
    const replay = await bash(t, dir, ['-c', `npx tsx examples/first-call.ts ${String(sdk['invoice'])}`]);
    assert.equal(replay.code, 0, replay.err);
    assert.deepEqual(
      [lastJson(replay.out)['adapterCalls'], lastJson(replay.out)['occurrenceId']],
      [0, sdk['occurrenceId']],
    );
    assert.equal(await effectCount(String(sdk['nativeKey'])), 1, 'still one effect');

    const curl = await bash(t, dir, ['examples/first-call.sh', 'inv-sh-1']);
    assert.equal(curl.code, 0, `${curl.out}\n${curl.err}`);
    const sh = lastJson(curl.out);
    assert.deepEqual(
      [sh['status'], sh['phase'], sh['effect'], sh['adapterCalls']],
      ['succeeded', 'resolved', 'occurred', 1],
    );
    assert.notEqual(sh['nativeKey'], sdk['nativeKey']);
    assert.equal(await effectCount(String(sh['nativeKey'])), 1);

    // The same invoice again, as first-call.ts: the original, resolved, and nothing sent twice.
    const again = await bash(t, dir, ['examples/first-call.sh', 'inv-sh-1']);
    assert.equal(again.code, 0, `${again.out}\n${again.err}`);
    const re = lastJson(again.out);
    assert.deepEqual(
      [re['status'], re['reason'], re['adapterCalls'], re['occurrenceId'], re['nativeKey']],
      ['succeeded', 'existing_resolved', 0, sh['occurrenceId'], sh['nativeKey']],
    );
    assert.equal(await effectCount(String(sh['nativeKey'])), 1, 'still one effect after the re-run');

    // A non-2xx answer inside $(…) prints its problem body on stderr (here: a token Baton never issued).
    mkdirSync(join(dir, 'bad'));
    cpSync(join(dir, 'examples', 'first-call.sh'), join(dir, 'bad', 'first-call.sh'));
    writeFileSync(
      join(dir, 'bad', 'first-call.tokens.json'),
      JSON.stringify({ tokens: [{ name: 'first-call-operator', token: 'not-a-token' }] }),
    );
    const refused = await bash(t, dir, ['bad/first-call.sh', 'inv-sh-2']);
    assert.notEqual(refused.code, 0);
    assert.match(
      refused.err,
      /first-call\.sh: GET http:\/\/127\.0\.0\.1:4001\/v1\/profiles answered 401: \{.*"code"/,
    );
  },
);
