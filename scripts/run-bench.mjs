#!/usr/bin/env node
// Runs every compiled benchmark (dist/bench/*.bench.js) one after another, so they do not compete
// for the machine's cores, and prints their figures. Usage: node scripts/run-bench.mjs [filter ...]
import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = join(import.meta.dirname, '..');
const benchRoot = join(root, 'dist', 'bench');
if (!existsSync(benchRoot)) {
  console.error('dist/bench is missing: run `npm run build` first (npm run bench does it for you).');
  process.exit(2);
}
const filters = process.argv.slice(2);
const files = readdirSync(benchRoot)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
let failed = 0;
for (const file of files) {
  console.log(`\n=== ${file.replace(/\.bench\.js$/, '')}`);
  const result = spawnSync(process.execPath, [join(benchRoot, file)], { stdio: 'inherit', cwd: root });
  if (result.status !== 0) failed += 1;
}
console.log(`\n${files.length - failed} benchmark(s) ran, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
