/**
 * The commands that read a set-up store and never set one up (`harness`, `observe export|metrics`,
 * `report`, like `reconcile`, `log` and `tokens list`) refuse a missing SQLite file before opening
 * it: a mistyped `--db` leaves no database, WAL, shared-memory or domain key file behind.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../src/cli/baton.js';
import { openBaton } from '../../src/server/open.js';
import { captureIo, tempDir } from '../store/support.js';

async function run(argv: string[]) {
  const io = captureIo();
  const code = await main(argv, io);
  return { code, out: io.out.join(''), err: io.err.join('') };
}

const COMMANDS: readonly (readonly string[])[] = [
  ['harness', 'list'],
  ['harness', 'session', 'some-session'],
  ['observe', 'export'],
  ['observe', 'metrics'],
  ['report'],
  ['reconcile'],
  ['log', 'verify'],
  ['tokens', 'list'],
];

test('read-only commands on a missing --db: usage "no database at PATH", nothing created', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'typo2.db');
  for (const argv of COMMANDS) {
    const what = argv.join(' ');
    const r = await run([...argv, '--db', db]);
    assert.equal(r.code, 2, `${what}: ${r.err}`);
    assert.equal(r.err, `error: usage: no database at ${db}\n`, what);
    assert.deepEqual(readdirSync(dir), [], `${what}: no database, -wal, -shm or domain key created`);
  }
});

test('openBaton with createDomainKey false refuses a missing SQLite file before opening it', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'missing.db');
  await assert.rejects(openBaton({ kind: 'sqlite', path: db }, { createDomainKey: false }), {
    code: 'usage',
    message: `no database at ${db}`,
  });
  assert.deepEqual(readdirSync(dir), []);
  // Setting one up (the default) still creates the file and its domain key.
  const opened = await openBaton({ kind: 'sqlite', path: db });
  await opened.close();
  assert.ok(readdirSync(dir).includes('missing.db'));
  assert.ok(readdirSync(dir).includes('missing.db.domain-key.pem'));
});
