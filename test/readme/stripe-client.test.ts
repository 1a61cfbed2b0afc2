/**
 * examples/stripe-client/README.md "Run it", run VERBATIM: the fenced block is read from the
 * README (so drift fails this test) and run with bash in a scratch copy of the clone (symlinks to
 * dist, src, node_modules, profiles; its own examples/stripe-client/ and database), on the
 * README's ports. It starts the Stripe-compatible sandbox, a Baton server that pins the shipped
 * Stripe profile to it (`pinToSandbox`) with the secrets from `--credentials`, and pays one
 * invoice: the result line must say `succeeded` and the sandbox's effect list — the oracle — must
 * hold exactly one effect for its native key; the same invoice again sends nothing. Every process
 * the block started is killed afterwards (its process group).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { repoRoot } from '../support/paths.js';

const SANDBOX = 'http://127.0.0.1:4160';
const ADMIN = 'readme-test-stripe-admin-token';
const DEADLINE_MS = 180_000;
const EXAMPLE = join(repoRoot, 'examples', 'stripe-client');

function readmeBlock(): string {
  const readme = readFileSync(join(EXAMPLE, 'README.md'), 'utf8');
  const section = readme.split(/^## Run it$/m)[1];
  const m = /```sh\n([\s\S]*?)```/.exec(section?.split(/^## /m)[0] ?? '');
  assert.ok(m?.[1] !== undefined, 'the README has a "Run it" section with a sh block');
  return m[1];
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', () => resolve(true));
  });
}

function workspace(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-readme-stripe-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const name of ['node_modules', 'dist', 'src', 'profiles', 'schemas'])
    symlinkSync(join(repoRoot, name), join(dir, name));
  copyFileSync(join(repoRoot, 'package.json'), join(dir, 'package.json'));
  mkdirSync(join(dir, 'examples'));
  cpSync(EXAMPLE, join(dir, 'examples', 'stripe-client'), { recursive: true });
  rmSync(join(dir, 'examples', 'stripe-client', 'stripe-client.tokens.json'), { force: true });
  return dir;
}

/** Run bash in its own process group; resolve when bash exits (background children keep the pipes). */
function bash(
  t: TestContext,
  cwd: string,
  script: string,
): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn('bash', ['-c', script], {
    cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, BATON_SANDBOX_ADMIN_TOKEN: ADMIN, npm_config_update_notifier: 'false' },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
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

function resultLine(out: string): Record<string, unknown> {
  const line = out
    .split('\n')
    .filter((l) => l.startsWith('{"invoice"'))
    .pop();
  assert.ok(line !== undefined, `a result line in:\n${out}`);
  return JSON.parse(line) as Record<string, unknown>;
}

async function effectsFor(nativeKey: string): Promise<number> {
  const r = await fetch(`${SANDBOX}/admin/effects`, { headers: { authorization: `Bearer ${ADMIN}` } });
  assert.equal(r.status, 200);
  const { effects } = (await r.json()) as { effects: { idempotency_key: string }[] };
  return effects.filter((e) => e.idempotency_key === nativeKey).length;
}

test(
  'examples/stripe-client/README.md "Run it", verbatim: the profile pinned from the shell, one payment, one effect',
  { timeout: DEADLINE_MS * 2 },
  async (t) => {
    for (const port of [4160, 4161]) assert.ok(await portFree(port), `port ${port} (the README's) is in use`);
    const dir = workspace(t);
    const block = readmeBlock();
    const run = await bash(t, dir, block);
    assert.equal(run.code, 0, `${run.out}\n${run.err}`);
    const paid = resultLine(run.out);
    assert.deepEqual(
      [paid['invoice'], paid['status'], paid['phase'], paid['effect'], paid['adapterCalls']],
      ['inv-1', 'succeeded', 'resolved', 'occurred', 1],
    );
    assert.equal(await effectsFor(String(paid['nativeKey'])), 1, 'the sandbox applied exactly one effect');

    // The same invoice again, with the block's environment: the original, and nothing sent.
    const env = block.split('\n')[0] ?? '';
    const again = await bash(t, dir, `${env}\nnpx tsx examples/stripe-client/run.ts inv-1`);
    assert.equal(again.code, 0, again.err);
    const re = resultLine(again.out);
    assert.deepEqual(
      [re['adapterCalls'], re['reason'], re['occurrenceId']],
      [0, 'existing_resolved', paid['occurrenceId']],
    );
    assert.equal(await effectsFor(String(paid['nativeKey'])), 1, 'still one effect');
  },
);
