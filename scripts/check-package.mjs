#!/usr/bin/env node
// Lints the package as npm would publish it: packs it once (`npm pack --ignore-scripts`, from the
// dist/ that `npm run build` or `npm test` made; prepare would only rebuild it), then runs
// publint --strict and @arethetypeswrong/cli on that tarball.
//
// attw runs with `--profile esm-only`: Baton is ESM only ("type": "module", no "require"
// condition), so the two resolutions that profile leaves out cannot work by design: `node10`
// (no "exports" support: only "main", which is ESM) and `node16` from CommonJS (require() of ESM
// is not available on Node 20). Every other check, including types for each subpath under
// node16-ESM and bundler resolution, must pass. CommonJS callers use `await import('baton-aoc')`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
if (!existsSync(join(root, 'dist', 'src', 'index.js'))) {
  console.error('dist/src is missing: run `npm run build` first.');
  process.exit(2);
}
const out = mkdtempSync(join(tmpdir(), 'baton-check-package-'));
const run = (command, args) => {
  console.log(`== ${command} ${args.join(' ')}`);
  const r = spawnSync(command, args, { cwd: root, stdio: 'inherit', timeout: 300_000 });
  if (r.status !== 0) {
    rmSync(out, { recursive: true, force: true });
    console.error(`${command} failed (${r.error?.message ?? `exit ${r.status}`})`);
    process.exit(1);
  }
};
run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', out]);
const [tarball] = readdirSync(out).filter((f) => f.endsWith('.tgz'));
const bin = (name) => join(root, 'node_modules', '.bin', name);
run(bin('publint'), ['--strict', join(out, tarball)]);
run(bin('attw'), [join(out, tarball), '--profile', 'esm-only']);
rmSync(out, { recursive: true, force: true });
console.log('package checks passed');
