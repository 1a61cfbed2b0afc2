import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../support/paths.js';
import { renderCliDocs } from '../../src/cli/docs.js';
import { SERVE_OPTIONS } from '../../src/cli/commands/serve.js';

test('docs/cli.md is the current --help of every command (regenerate with node scripts/cli-docs.mjs)', async () => {
  const onDisk = readFileSync(join(repoRoot, 'docs', 'cli.md'), 'utf8');
  assert.equal(onDisk, await renderCliDocs());
});

test('docs/api.md names every `baton serve` flag that has no BATON_* variable', () => {
  const api = readFileSync(join(repoRoot, 'docs', 'api.md'), 'utf8').replace(/\s+/g, ' ');
  const said = /Every flag but (.+?) can also come from a `BATON_\*` variable/.exec(api)?.[1];
  assert.ok(said !== undefined, 'docs/api.md says which serve flags have no variable');
  const named = [...said.matchAll(/`--([a-z-]+)`/g)].map((m) => m[1]).sort();
  const without = Object.entries(SERVE_OPTIONS)
    .filter(([, o]) => !('env' in o))
    .map(([name]) => name)
    .sort();
  assert.deepEqual(named, without);
});
