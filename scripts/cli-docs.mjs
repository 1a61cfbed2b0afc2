#!/usr/bin/env node
// Writes docs/cli.md from the commands' own --help texts, so the reference cannot drift from the
// code (test/cli/docs.test.ts fails when docs/cli.md is stale). Run after `npm run build`.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderCliDocs } from '../dist/src/cli/docs.js';

const root = join(import.meta.dirname, '..');
writeFileSync(join(root, 'docs', 'cli.md'), await renderCliDocs());
console.log('wrote docs/cli.md');
