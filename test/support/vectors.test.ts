/**
 * The vectors in test/vectors are public data copied in with their source and licence (issue 10,
 * part 1): every folder names both, and its SHA256SUMS still matches every file, so an edited or
 * truncated vector fails here instead of silently weakening the test that reads it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { vectorsDir } from './paths.js';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

const folders = readdirSync(vectorsDir).filter((name) => statSync(join(vectorsDir, name)).isDirectory());

test('test/vectors: every folder has SOURCE.md, a licence and a SHA256SUMS that covers every file', (t) => {
  assert.ok(folders.length >= 6, `vector folders: ${folders.join(', ')}`);
  let checked = 0;
  for (const folder of folders) {
    const dir = join(vectorsDir, folder);
    assert.ok(existsSync(join(dir, 'SOURCE.md')), `${folder}: SOURCE.md`);
    assert.ok(
      ['LICENSE', 'LICENSE.md'].some((f) => existsSync(join(dir, f))),
      `${folder}: licence`,
    );
    const sums = new Map<string, string>();
    for (const line of readFileSync(join(dir, 'SHA256SUMS'), 'utf8').split('\n')) {
      const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line);
      if (m?.[1] !== undefined && m[2] !== undefined) sums.set(m[2], m[1]);
    }
    const files = filesUnder(dir)
      .map((f) => relative(dir, f))
      .filter((f) => f !== 'SOURCE.md' && f !== 'SHA256SUMS')
      .sort();
    assert.deepEqual(files, [...sums.keys()].sort(), `${folder}: SHA256SUMS lists exactly its files`);
    for (const file of files) {
      const actual = createHash('sha256')
        .update(readFileSync(join(dir, file)))
        .digest('hex');
      assert.equal(actual, sums.get(file), `${folder}/${file}`);
      checked += 1;
    }
  }
  t.diagnostic(`${checked} vector files in ${folders.length} folders match their SHA256SUMS`);
});
