import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The npm package that ships the `baton` command: its name (baton-aoc) and version. */
export interface BatonPackage {
  readonly name: string;
  readonly version: string;
}

/**
 * This build's package.json (found upwards from this file, so it is the same from dist/src/cli and,
 * under tsx, from src/cli): the first one whose `bin` has `baton`, whatever its npm name. Name
 * `baton`, version `unknown` when there is none.
 */
export function batonPackage(): BatonPackage {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as {
        name?: unknown;
        bin?: unknown;
        version?: unknown;
      };
      const bin = typeof pkg.bin === 'object' && pkg.bin !== null ? (pkg.bin as Record<string, unknown>) : {};
      if (typeof bin['baton'] === 'string' && typeof pkg.version === 'string') {
        return { name: typeof pkg.name === 'string' ? pkg.name : 'baton', version: pkg.version };
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return { name: 'baton', version: 'unknown' };
    dir = parent;
  }
}
