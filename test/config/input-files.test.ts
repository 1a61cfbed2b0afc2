/**
 * Every file a config names is read only if it is a regular file, and at most 1 MiB of it
 * (src/cli/config/input-file.ts): a FIFO (which would block the read until something writes to
 * it) and an oversized file (a sparse one here; `/dev/zero` is the endless case) are refused at
 * once with the command's typed error, naming the file and why — and nothing is applied.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readInputFile } from '../../src/cli/config/input-file.js';
import { startApi } from '../server/helpers.js';
import { baton, tempDir, writeConfig } from './support.js';

const FORMAT = 'baton.config/1';
// Nothing listens there: every refusal below comes before the server is asked anything.
const REMOTE = ['--url', 'http://127.0.0.1:9', '--token', 'btk.x'];

function fifo(dir: string, name: string): string {
  const path = join(dir, name);
  execFileSync('mkfifo', [path]);
  return path;
}

test('a config file that is a FIFO is refused, not waited on', { timeout: 10_000 }, async (t) => {
  const dir = tempDir(t);
  const file = fifo(dir, 'baton.config.json');
  const ran = await baton(['apply', file, ...REMOTE]);
  assert.equal(ran.code, 2, ran.err);
  assert.match(ran.err, new RegExp(`cannot read the config file ${file}: not a regular file \\(a FIFO\\)`));
});

test(
  'a config file larger than 1 MiB is refused by its size before it is read',
  { timeout: 10_000 },
  async (t) => {
    const dir = tempDir(t);
    const file = join(dir, 'big.json');
    writeFileSync(file, '');
    truncateSync(file, 64 * 1024 * 1024); // sparse: no disk used
    const ran = await baton(['apply', file, ...REMOTE]);
    assert.equal(ran.code, 2, ran.err);
    assert.match(ran.err, /cannot read the config file .*big\.json: larger than 1048576 bytes/);
  },
);

test(
  'a profile file, issuer pin or producer key file that is a FIFO is refused',
  { timeout: 20_000 },
  async (t) => {
    const dir = tempDir(t);
    const cases: [string, unknown, RegExp][] = [
      [
        'profile',
        { format: FORMAT, profiles: [{ file: 'profile.fifo' }] },
        /\$\.profiles\[0\]\.file: cannot read profile\.fifo: not a regular file \(a FIFO\)/,
      ],
      [
        'issuer',
        { format: FORMAT, issuers: [{ file: 'issuer.fifo' }] },
        /\$\.issuers\[0\]\.file: cannot read issuer\.fifo as JSON: not a regular file \(a FIFO\)/,
      ],
      [
        'producer',
        { format: FORMAT, producers: [{ producer: 'urn:example:p', keys: [{ file: 'key.fifo' }] }] },
        /cannot read key\.fifo: not a regular file \(a FIFO\)/,
      ],
    ];
    for (const name of ['profile.fifo', 'issuer.fifo', 'key.fifo']) fifo(dir, name);
    for (const [what, config, message] of cases) {
      const file = writeConfig(dir, config, `${what}.config.json`);
      const ran = await baton(['apply', file, ...REMOTE]);
      assert.equal(ran.code, 2, `${what}: ${ran.err}`);
      assert.match(ran.err, message, what);
    }
  },
);

test('a tokens file that is a FIFO is refused before any token is minted', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const dir = tempDir(t);
  fifo(dir, 'tokens.fifo');
  const config = {
    format: FORMAT,
    tokens: { file: 'tokens.fifo', create: [{ name: 'ci', role: 'operator' }] },
  };
  const file = writeConfig(dir, config);
  const before = await api.snapshot();
  const ran = await baton(['apply', file, '--url', api.url, '--token', api.admin]);
  assert.equal(ran.code, 2, ran.err);
  assert.match(ran.err, /cannot read the tokens file .*tokens\.fifo: not a regular file \(a FIFO\)/);
  assert.equal(await api.snapshot(), before, 'no token was minted');
});

test('readInputFile reads a regular file whole, up to the limit and not a byte more', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'f');
  writeFileSync(file, 'x'.repeat(100));
  assert.equal((await readInputFile(file, 100)).length, 100);
  await assert.rejects(readInputFile(file, 99), /larger than 99 bytes/);
});
