#!/usr/bin/env node
// Runs every compiled test file (dist/test/**/*.test.js) with Node's own test runner.
// Usage: node scripts/run-tests.mjs [substring-filter ...]
import { readdirSync, statSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = join(import.meta.dirname, '..');
const testRoot = join(root, 'dist', 'test');
if (!existsSync(testRoot)) {
  console.error('dist/test is missing: run `npm run build` first (npm test does it for you).');
  process.exit(2);
}

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'fixtures' ? [] : walk(path);
    return name.endsWith('.test.js') ? [path] : [];
  });
}

const filters = process.argv.slice(2);
const files = walk(testRoot)
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
console.log(`running ${files.length} test files: ${files.map((f) => relative(testRoot, f)).join(', ')}`);
const result = spawnSync(
  process.execPath,
  ['--test', '--test-reporter=spec', '--test-concurrency=2', ...files],
  {
    stdio: 'inherit',
    cwd: root,
    env: {
      // The store's nesting check (src/store/nesting-guard.ts) is on for every test and the
      // servers they start: a nested transaction fails the test instead of deadlocking it.
      BATON_STORE_NESTING_CHECK: '1',
      ...process.env,
      BATON_REPO_ROOT: root,
    },
  },
);
process.exit(result.status ?? 1);
