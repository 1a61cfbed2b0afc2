/** Shared pieces of the config tests: an in-process `baton` run, a config in a temp dir, a sandbox. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { main } from '../../src/cli/baton.js';
import { runServe } from '../../src/cli/commands/serve.js';
import type { CliIo } from '../../src/cli/io.js';
import { captureIo } from '../store/support.js';
import { createSandboxProvider, type SandboxProvider } from '../../src/providers/sandbox/index.js';
import { repoRoot } from '../support/paths.js';

export interface Ran {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

export async function baton(argv: string[], stdin = ''): Promise<Ran> {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: (s) => void (out += s),
    stderr: (s) => void (err += s),
    readStdin: () => Promise.resolve(Buffer.from(stdin)),
  };
  const code = await main(argv, io);
  return { code, out, err };
}

export function tempDir(t: TestContext, prefix = 'baton-config-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export async function startSandbox(t: TestContext): Promise<SandboxProvider> {
  const sandbox = createSandboxProvider({ signing: 'ed25519' });
  await sandbox.listen(0);
  t.after(() => sandbox.close());
  return sandbox;
}

export const PROFILE_FILE = join(repoRoot, 'profiles', 'sandbox-payments-ed25519.json');

/** The shipped example config, pinned to `sandboxUrl`, with the profile path made absolute. */
export function exampleConfig(sandboxUrl: string): Record<string, unknown> {
  const text = readFileSync(join(repoRoot, 'examples', 'baton.config.json'), 'utf8');
  const config = JSON.parse(text) as Record<string, unknown>;
  return {
    ...config,
    profiles: [{ file: PROFILE_FILE, pinToSandbox: sandboxUrl }],
  };
}

export function writeConfig(dir: string, config: unknown, name = 'baton.config.json'): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

/** `baton serve` running in this process (runServe), its output as it comes. */
export interface InProcessServe {
  /** Its exit code once it returned (an early refusal), else undefined. */
  readonly exited: () => number | undefined;
  readonly out: () => string;
  readonly err: () => string;
  /** SIGTERM's path: stop accepting, drain, close; resolves with the exit code. */
  readonly stop: () => Promise<number>;
}

/**
 * Start `serve ARGV --log-level silent` in process and wait (at most 20 s) until `ready(stdout)`
 * or it exits. A deadline passed fails the test with what it wrote on stderr.
 */
export async function serveInProcess(
  argv: string[],
  ready: (out: string) => boolean,
): Promise<InProcessServe> {
  const io = captureIo();
  const out = (): string => io.out.join('');
  const err = (): string => io.err.join('');
  const stop = new AbortController();
  let exited: number | undefined;
  const done = runServe([...argv, '--log-level', 'silent'], io, stop.signal).then((c) => (exited = c));
  const deadline = Date.now() + 20_000;
  while (exited === undefined && !ready(out())) {
    if (Date.now() > deadline) throw new Error(`serve did not start within 20 s: ${err()}`);
    await sleep(20);
  }
  return { exited: () => exited, out, err, stop: () => (stop.abort(), done) };
}
