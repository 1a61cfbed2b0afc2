/**
 * The docs import from the package name, never from `./src` (issue 10, part 2): every `import … from`
 * in a code block of README.md and docs/*.md names `baton-aoc` or one of its "exports" subpaths (or a
 * Node built-in), and every value it names is exported there — checked against the compiled entry
 * the package.json "exports" map points to, so a renamed export or a removed subpath fails here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '../support/paths.js';

const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, string | { default: string }>;
};

const docs = ['README.md', ...readdirSync(join(repoRoot, 'docs')).map((f) => join('docs', f))].filter((f) =>
  f.endsWith('.md'),
);

interface DocImport {
  readonly file: string;
  readonly names: string[];
  readonly from: string;
}

function importsOf(file: string): DocImport[] {
  const text = readFileSync(join(repoRoot, file), 'utf8');
  const blocks = [...text.matchAll(/^```(?:ts|js|typescript|javascript|mjs)\n([\s\S]*?)^```$/gm)].map(
    (m) => m[1] ?? '',
  );
  return blocks.flatMap((code) =>
    [...code.matchAll(/^import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'([^']+)';/gm)].map((m) => ({
      file,
      from: m[2] ?? '',
      // Type-only names leave no trace at run time; the rest must be real exports.
      names: (m[1] ?? '')
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n !== '' && !n.startsWith('type ') && !m[0].startsWith('import type')),
    })),
  );
}

test('docs import from baton-aoc and its exports subpaths only, and every named value exists there', async (t) => {
  const all = docs.flatMap(importsOf);
  assert.ok(all.length >= 4, `found ${all.length} imports in the docs`);
  for (const { file, from, names } of all) {
    if (from.startsWith('node:')) continue;
    assert.ok(
      from === manifest.name || from.startsWith(`${manifest.name}/`),
      `${file}: import from '${from}'`,
    );
    const subpath = from === manifest.name ? '.' : `.${from.slice(manifest.name.length)}`;
    const target = manifest.exports[subpath];
    assert.ok(target !== undefined, `${file}: '${from}' is not in package.json "exports"`);
    const entry = typeof target === 'string' ? target : target.default;
    const module = (await import(pathToFileURL(join(repoRoot, entry)).href)) as Record<string, unknown>;
    for (const name of names) assert.ok(name in module, `${file}: '${from}' exports no ${name}`);
  }
  t.diagnostic(`${all.length} imports in ${docs.length} documents resolve to the package's entry points`);
});
