import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * This build's version, from the package.json that ships with it (found upwards from this file,
 * so it is the same from dist/src/cli and, under tsx, from src/cli).
 */
export function batonVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { bin?: unknown; version?: unknown };
      // The package that ships the `baton` command, whatever its npm name (baton-aoc).
      const bin = typeof pkg.bin === 'object' && pkg.bin !== null ? (pkg.bin as Record<string, unknown>) : {};
      if (typeof bin['baton'] === 'string' && typeof pkg.version === 'string') return pkg.version;
    }
    const parent = dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}
