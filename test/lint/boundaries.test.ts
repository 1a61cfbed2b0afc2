import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '../support/paths.js';

// Loaded from the repository root so the compiled test (dist/test/…) reads the same file.
const { boundaries } = (await import(pathToFileURL(join(repoRoot, 'eslint.boundaries.js')).href)) as {
  boundaries: unknown[];
};

// The import-boundary rules of DESIGN.md §1, run on deliberately wrong imports placed (virtually) in
// each layer. The same rule objects are part of eslint.config.js, so what fails here fails `npm run lint`.
const eslint = new ESLint({
  cwd: repoRoot,
  overrideConfigFile: true,
  overrideConfig: [
    { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } },
    ...(boundaries as []),
  ],
});

async function ruleIds(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  assert.ok(result, 'eslint returned a result');
  return result.messages.map((m) => m.ruleId ?? `fatal: ${m.message}`);
}

const refused: [string, string][] = [
  ['src/occurrences/fixture.ts', "import { openSqliteEngine } from '../store/sqlite.js';"],
  ['src/occurrences/fixture.ts', "import Database from 'better-sqlite3';"],
  ['src/occurrences/fixture.ts', "import { Pool } from 'pg';"],
  ['src/leases/fixture.ts', "import { main } from '../cli/baton.js';"],
  ['src/leases/fixture.ts', "import { x } from '../server/app.js';"],
  ['src/providers/fixture.ts', "import { machine } from '../occurrences/machine.js';"],
  ['src/core/fixture.ts', "import { service } from '../occurrences/index.js';"],
  ['src/store/fixture.ts', "import { app } from '../server/app.js';"],
  ['src/server/fixture.ts', "import { main } from '../cli/baton.js';"],
];

for (const [filePath, code] of refused) {
  test(`lint boundary refuses in ${filePath}: ${code}`, async () => {
    assert.deepEqual(await ruleIds(filePath, code), ['no-restricted-imports']);
  });
}

const allowed: [string, string][] = [
  ['src/occurrences/fixture.ts', "import { canonicalize } from '../core/jcs.js';"],
  ['src/providers/fixture.ts', "import { createService } from '../occurrences/index.js';"],
  ['src/store/fixture.ts', "import { createService } from '../occurrences/index.js';"],
  ['src/server/fixture.ts', "import { openSqliteEngine } from '../store/sqlite.js';"],
  ['src/cli/fixture.ts', "import { app } from '../server/app.js';"],
];

for (const [filePath, code] of allowed) {
  test(`lint boundary allows in ${filePath}: ${code}`, async () => {
    assert.deepEqual(await ruleIds(filePath, code), []);
  });
}
