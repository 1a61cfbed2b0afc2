import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../support/paths.js';
import { renderCliDocs } from '../../src/cli/docs.js';

test('docs/cli.md is the current --help of every command (regenerate with node scripts/cli-docs.mjs)', async () => {
  const onDisk = readFileSync(join(repoRoot, 'docs', 'cli.md'), 'utf8');
  assert.equal(onDisk, await renderCliDocs());
});
