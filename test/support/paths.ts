import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
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

/**
 * The public vectors the tests read, inside the repository (test/vectors/README.md: each folder names
 * its source and licence), so a fresh clone needs nothing beside it.
 */
export const vectorsDir: string = join(repoRoot, 'test', 'vectors');
