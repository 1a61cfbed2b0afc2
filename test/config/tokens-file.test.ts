/**
 * The tokens file holds secrets shown nowhere else (docs/config.md "Operator tokens"): it is
 * written whole through FILE.partial with mode 0600, and a write that fails leaves no copy of a
 * secret behind (no temporary file, no .partial) and names the file and why.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTokensFile, writeTokensFile } from '../../src/cli/config/tokens-file.js';
import { isBatonError } from '../../src/core/errors.js';
import { tempDir } from './support.js';

const minted = [{ name: 'ci', role: 'operator', id: 'tok_1', token: 'btk.tok_1.S3CRET' }] as const;

test('the tokens file is written 0600 and read back; earlier entries are kept', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'tokens.json');
  await writeTokensFile(file, [], minted as never);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const again = [{ name: 'ops', role: 'admin', id: 'tok_2', token: 'btk.tok_2.X' }];
  await writeTokensFile(file, await readTokensFile(file), again as never);
  assert.deepEqual(
    (await readTokensFile(file)).map((e) => e.name),
    ['ci', 'ops'],
  );
  assert.deepEqual(readdirSync(dir), ['tokens.json']);
});

test('a tokens file that cannot be put in place leaves no copy of the secret behind', async (t) => {
  const dir = tempDir(t);
  // The rename over FILE fails: FILE became a folder holding something since it was checked.
  const file = join(dir, 'tokens.json');
  mkdirSync(file);
  writeFileSync(join(file, 'x'), '');
  await assert.rejects(
    writeTokensFile(file, [], minted as never),
    (e: unknown) => isBatonError(e, 'usage') && e.message.startsWith(`cannot write ${file}: `),
  );
  assert.deepEqual(readdirSync(dir), ['tokens.json'], 'no temporary or .partial file left');
  for (const name of readdirSync(dir))
    if (statSync(join(dir, name)).isFile())
      assert.doesNotMatch(readFileSync(join(dir, name), 'utf8'), /S3CRET/);
});
