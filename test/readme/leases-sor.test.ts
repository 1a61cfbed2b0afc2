/**
 * docs/leases.md §8 "Building your own system of record" shows a complete system of record built
 * on `baton-aoc/leases` (an in-memory LeaseLedger, a ResourceModel, LeaseService, leasePlugin with
 * its required receiptJwk). The block is read from the document, so drift fails here: it must
 * type-check under the strict settings Baton itself uses, importing the package by its name (Node
 * and TypeScript resolve a package's own name through its "exports"), and run to the answers its
 * comments state — a commit, then the same lease refused as a replay.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runWatched } from '../support/child.js';
import { repoRoot } from '../support/paths.js';

const HEADING = '### Building your own system of record';

function exampleBlock(): string {
  const doc = readFileSync(join(repoRoot, 'docs', 'leases.md'), 'utf8');
  const section = doc.split(HEADING)[1]?.split(/^## /m)[0];
  assert.ok(section !== undefined, `docs/leases.md has "${HEADING}"`);
  const m = /^```ts\n([\s\S]*?)^```$/m.exec(section);
  assert.ok(m?.[1] !== undefined, 'the section has a ts block');
  return m[1];
}

test('the system of record example in docs/leases.md §8 type-checks strictly and runs as documented', async (t) => {
  // Inside the package (dist/ is ignored by git), so `baton-aoc/leases` is the package's own entry.
  const dir = mkdtempSync(join(repoRoot, 'dist', 'docs-leases-sor-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'sor.ts'), exampleBlock());
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noUncheckedIndexedAccess: true,
        exactOptionalPropertyTypes: true,
        skipLibCheck: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        types: ['node'],
        rootDir: dir,
        outDir: dir,
      },
      files: ['sor.ts'],
    }),
  );
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  await runWatched('tsc -p docs example', process.execPath, [tsc, '-p', dir], { cwd: dir });
  const run = await runWatched('docs example', process.execPath, [join(dir, 'sor.js')], { cwd: dir });
  assert.deepEqual(run.lines, ['200 1', '409 ERR_LEASE_REPLAYED']);
});
