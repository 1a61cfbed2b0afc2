/**
 * Packing the package the way `npm publish` would (`npm pack`, from the compiled dist/ that
 * `npm test` builds first), for the tests of what a user installs (issue 10, part 2).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { runWatched } from '../support/child.js';
import { repoRoot } from '../support/paths.js';

/** npm itself can take a while on a shared machine (pack, and install from its cache). */
export const NPM_DEADLINE_MS = 300_000;

export interface Packed {
  readonly name: string;
  readonly tarball: string;
  /** Paths inside the package, as `npm pack --json` lists them. */
  readonly files: readonly string[];
}

/** The environment for npm as a child: npm's own run-script variables would steer it (prefix, scripts). */
export function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'NODE_TEST_CONTEXT' || k === 'NODE_OPTIONS') continue;
    if (k.toLowerCase().startsWith('npm_') && k.toLowerCase() !== 'npm_config_cache') continue;
    env[k] = v;
  }
  return { ...env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
}

export function tempDir(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** `npm pack` into a temporary folder. `--ignore-scripts`: dist/ is already built, and prepare would rebuild it. */
export async function pack(t: TestContext): Promise<Packed> {
  const out = tempDir(t, 'baton-pack-');
  const args = ['pack', '--json', '--ignore-scripts', '--pack-destination', out];
  const child = await runWatched('npm pack', 'npm', args, {
    cwd: repoRoot,
    env: npmEnv(),
    deadlineMs: NPM_DEADLINE_MS,
  });
  const [info] = JSON.parse(child.lines.join('\n')) as { filename: string; files: { path: string }[] }[];
  if (info === undefined) throw child.failure('npm pack --json listed no package');
  const name = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { name: string }).name;
  return { name, tarball: join(out, info.filename), files: info.files.map((f) => f.path) };
}
