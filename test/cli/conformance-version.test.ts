/**
 * The conformance report names the implementation that ran it: the same version `baton --version`
 * prints and the package's npm name (package.json), never "unknown".
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../support/paths.js';
import { baton, tempDir } from '../config/support.js';

test('conformance report: implementation {name, version} are the package name and `baton --version`', async (t) => {
  const v = await baton(['--version']);
  assert.equal(v.code, 0, v.err);
  const version = /^baton (\S+)\n$/.exec(v.out)?.[1];
  assert.ok(version !== undefined && version !== 'unknown', v.out);
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  assert.equal(version, pkg.version);

  const out = tempDir(t, 'baton-conf-version-');
  const r = await baton(['conformance', '--out', out, '--case', 'AOC-CASE-002']);
  assert.equal(r.code, 0, r.out + r.err);
  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as {
    implementation: { name: string; version: string; node: string };
  };
  assert.deepEqual(report.implementation, { name: pkg.name, version, node: process.version });
  const md = readFileSync(join(out, 'report.md'), 'utf8');
  assert.ok(md.includes(`- implementation: ${pkg.name} ${version} (Node ${process.version})`), md);
});
