/**
 * What the docs say a run is labelled and where Baton listens must be what the code does: the
 * README's `baton conformance` row names each suite's label as report.ts writes it, and no
 * document or help text sends a first user to a port `serve` does not default to.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { HARNESS_LABEL, LABEL } from '../../src/cli/conformance/report.js';
import { main } from '../../src/cli/baton.js';
import type { CliIo } from '../../src/cli/io.js';
import { repoRoot } from '../support/paths.js';

async function help(command: string): Promise<string> {
  let out = '';
  const io: CliIo = {
    stdout: (s) => void (out += s),
    stderr: () => undefined,
    readStdin: () => Promise.resolve(Buffer.alloc(0)),
  };
  assert.equal(await main([command, '--help'], io), 0);
  return out;
}

test("the README's conformance row names the label of each run", () => {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const row = readme.split('\n').find((l) => l.startsWith('| `baton conformance` |'));
  assert.ok(row !== undefined);
  assert.ok(row.includes(`"${LABEL}" (the AOC run)`), row);
  assert.ok(row.includes(`"${HARNESS_LABEL}" (\`--suite harness\`)`), row);
});

test("the client guide and `baton mcp --help` use serve's default port 4000", async () => {
  assert.match(await help('serve'), /4000/);
  for (const [name, text] of [
    ['docs/client.md', readFileSync(join(repoRoot, 'docs', 'client.md'), 'utf8')],
    ['baton mcp --help', await help('mcp')],
  ]) {
    assert.ok(!/127\.0\.0\.1:8080/.test(text ?? ''), `${name ?? ''} names port 8080`);
    assert.match(text ?? '', /127\.0\.0\.1:4000/, name);
  }
});
