/**
 * What `npm pack` puts in the tarball (issue 10, part 2): the compiled entry points of every
 * "exports" target with their types, the bin, the profiles the providers load at run time, the
 * licence and the README; never the tests, the benchmarks, TypeScript sources or source maps.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../support/paths.js';
import { pack } from './support.js';

interface Manifest {
  name: string;
  main: string;
  types: string;
  bin: Record<string, string>;
  exports: Record<string, string | { types: string; default: string }>;
}

const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as Manifest;
const strip = (p: string): string => p.replace(/^\.\//, '');

test('npm pack: entry points, types, bin, profiles, LICENSE and README in; tests, benches, sources out', async (t) => {
  const { files } = await pack(t);
  const has = new Set(files);
  const targets = [manifest.main, manifest.types, ...Object.values(manifest.bin)];
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    if (typeof target === 'string') targets.push(target);
    else targets.push(target.types, target.default);
    assert.ok(['.', './client', './providers', './leases', './package.json'].includes(subpath), subpath);
  }
  for (const target of targets) assert.ok(has.has(strip(target)), `the tarball has ${target}`);
  for (const f of ['LICENSE', 'README.md', 'package.json', 'profiles/sandbox-payments.json']) {
    assert.ok(has.has(f), `the tarball has ${f}`);
  }
  const banned = files.filter(
    (f) =>
      /^(test|bench|src|scripts|\.ci|node_modules|dist\/test|dist\/bench)\//.test(f) ||
      f.endsWith('.map') ||
      (f.endsWith('.ts') && !f.endsWith('.d.ts')),
  );
  assert.deepEqual(banned, [], 'no tests, benchmarks, TypeScript sources or source maps');
  assert.equal(manifest.name, 'baton-aoc');
  t.diagnostic(`${files.length} files in the tarball`);
});
