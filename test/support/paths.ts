import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, found from this file (dist/test/support/paths.js or test/support/paths.ts). */
export const repoRoot: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('repository root not found');
    dir = parent;
  }
  return dir;
})();

/** `../shared` beside the clone (CI lays a copy there); BATON_SHARED overrides it. */
export const sharedDir: string = resolve(process.env['BATON_SHARED'] ?? join(repoRoot, '..', 'shared'));

export const vectorsDir: string = join(sharedDir, 'vectors');
export const seedsDir: string = join(sharedDir, 'seeds');
