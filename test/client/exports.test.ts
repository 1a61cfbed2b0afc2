/**
 * The two ways in agree (package.json "exports"): `baton-aoc/client` (src/client/sdk.ts) exports
 * every type its classes take or return — each public name of the modules those classes live in —
 * and the package root (src/index.ts) exports everything `baton-aoc/client` does. Read with the
 * TypeScript compiler, so `export *` and type-only exports count as the compiler sees them.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { repoRoot } from '../support/paths.js';

const CLASS_MODULES = ['admin.ts', 'http.ts', 'harness.ts', 'occurrences-query.ts', 'types.ts'];

test('baton-aoc/client exports its classes’ types, and the package root exports all of it', () => {
  const file = (...p: string[]): string => join(repoRoot, 'src', ...p);
  const files = [file('client', 'sdk.ts'), file('index.ts'), ...CLASS_MODULES.map((m) => file('client', m))];
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const exported = (path: string): Set<string> => {
    const source = program.getSourceFile(path);
    const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    assert.ok(symbol !== undefined, path);
    return new Set(checker.getExportsOfModule(symbol).map((s) => s.name));
  };
  const [sdk, root, ...modules] = files.map(exported);
  assert.ok(sdk !== undefined && root !== undefined);
  const missing = modules.flatMap((names, i) =>
    [...names].filter((n) => !sdk.has(n)).map((n) => `${CLASS_MODULES[i] ?? ''}: ${n}`),
  );
  assert.deepEqual(missing, [], 'exported by a client module but not by baton-aoc/client');
  assert.deepEqual(
    [...sdk].filter((n) => !root.has(n)),
    [],
    'exported by baton-aoc/client but not by the package root',
  );
  assert.ok(sdk.size > 40, `sdk exports ${sdk.size} names`);
});
