/**
 * What the README tests share: a fenced `sh` block read from a README section (so drift fails the
 * test), a port check, a scratch clone (what a fresh clone has after `npm install`), and bash run
 * in its own process group, killed afterwards with everything it started in the background.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { repoRoot } from '../support/paths.js';

/** The first ```sh block after the `## heading` line of `file`, up to the next `## ` heading. */
export function readmeBlock(file: string, heading: string): string {
  const readme = readFileSync(file, 'utf8');
  const section = readme.split(new RegExp(`^## ${heading}$`, 'm'))[1];
  assert.ok(section !== undefined, `${file} has a "${heading}" section`);
  const m = /```sh\n([\s\S]*?)```/.exec(section.split(/^## /m)[0] ?? '');
  assert.ok(m?.[1] !== undefined, `the "${heading}" section has a sh block`);
  return m[1];
}

export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', () => resolve(true));
  });
}

/**
 * A scratch clone: symlinks to what `npm install` leaves (dist built), its own package.json and
 * an empty examples/ for the caller to fill; removed after the test.
 */
export function scratchClone(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const name of ['node_modules', 'dist', 'src', 'profiles', 'schemas'])
    symlinkSync(join(repoRoot, name), join(dir, name));
  copyFileSync(join(repoRoot, 'package.json'), join(dir, 'package.json'));
  mkdirSync(join(dir, 'examples'));
  return dir;
}

export interface Finished {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

/**
 * Run `bash ARGS` in its own process group with `env` added; resolve when bash exits (background
 * children keep the pipes), reject after `deadlineMs`. The group is killed after the test.
 */
export function bashGroup(
  t: TestContext,
  cwd: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  deadlineMs: number,
): Promise<Finished> {
  const child = spawn('bash', args, {
    cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env, npm_config_update_notifier: 'false' },
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
      () => reject(new Error(`no exit within ${deadlineMs} ms:\n${out}\n${err}`)),
      deadlineMs,
    );
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}
