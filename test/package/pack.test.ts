/**
 * What `npm pack` puts in the tarball (issue 10, part 2): the compiled entry points of every
 * "exports" target with their types, the bin, the profiles the providers load at run time, the
 * licence and the README; never the tests, the benchmarks, TypeScript sources or source maps.
 * The documents it ships link only to what it ships (a README on the registry with dead links and
 * missing pictures is the first thing a user sees), and the examples it ships import Baton by the
 * package's name, as the user's own project would.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
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
      (f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.startsWith('examples/')),
  );
  assert.deepEqual(banned, [], 'no tests, benchmarks, TypeScript sources or source maps');
  assert.equal(manifest.name, 'baton-aoc');
  t.diagnostic(`${files.length} files in the tarball`);
});

/** Folders the tarball holds a file under, for links to a folder (`examples/stripe-client/`). */
function foldersOf(files: readonly string[]): Set<string> {
  const folders = new Set<string>();
  for (const f of files) for (let d = posix.dirname(f); d !== '.'; d = posix.dirname(d)) folders.add(d);
  return folders;
}

/** Relative link targets of a Markdown file: `[text](target)` and `![alt](target)`, anchors dropped. */
function relativeLinks(markdown: string): string[] {
  const links: string[] = [];
  for (const m of markdown.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1] ?? '';
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
    links.push(target.split('#')[0] ?? '');
  }
  return links;
}

test('npm pack: every relative link in a shipped document resolves inside the tarball', async (t) => {
  const { files } = await pack(t);
  const has = new Set(files);
  const folders = foldersOf(files);
  const documents = files.filter((f) => f.endsWith('.md'));
  const dead: string[] = [];
  let links = 0;
  for (const doc of documents) {
    for (const link of relativeLinks(readFileSync(join(repoRoot, doc), 'utf8'))) {
      links += 1;
      const target = posix.normalize(posix.join(posix.dirname(doc), link)).replace(/\/$/, '');
      if (!has.has(target) && !folders.has(target)) dead.push(`${doc} -> ${link}`);
    }
  }
  assert.deepEqual(dead, [], 'links to files the tarball does not hold');
  assert.ok(documents.includes('README.md') && links > 20, `${links} links read`);
  t.diagnostic(`${links} relative links in ${documents.length} shipped documents resolve`);
});

test('npm pack: the shipped examples import Baton by the package name, never from its sources', async (t) => {
  const { files } = await pack(t);
  const examples = files.filter((f) => f.startsWith('examples/') && f.endsWith('.ts'));
  assert.ok(examples.includes('examples/first-call.ts'), 'the first-call example ships');
  for (const file of examples) {
    const text = readFileSync(join(repoRoot, file), 'utf8');
    const imports = [...text.matchAll(/from '([^']+)'/g)].map((m) => m[1] ?? '');
    const intoSources = imports.filter((i) => i.includes('/src/') || i.startsWith('../'));
    assert.deepEqual(intoSources, [], `${file} imports only packages and its own folder`);
  }
  t.diagnostic(`${examples.length} shipped examples: ${examples.join(', ')}`);
});
