/** Shared pieces of the config tests: an in-process `baton` run, a config in a temp dir, a sandbox. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { main } from '../../src/cli/baton.js';
import type { CliIo } from '../../src/cli/io.js';
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
