/**
 * A `--db` that is not a SQLite database (a JSON file, random bytes) is refused typed —
 * `store_corrupt`, naming the path, no stack — by every command that opens a store, and the file is
 * left exactly as it was (no WAL or shared-memory file beside it, no domain key).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { main } from '../../src/cli/baton.js';
import { isBatonError } from '../../src/core/errors.js';
import { mapDriverError } from '../../src/store/errors.js';
import { captureIo, tempDir } from '../store/support.js';

const root = process.env['BATON_REPO_ROOT'] ?? process.cwd();

async function run(argv: string[]) {
  const io = captureIo();
  const code = await main(argv, io);
  return { code, out: io.out.join(''), err: io.err.join('') };
}

/** argv before --db: every command that opens a store exits 1 on a corrupt one (docs/cli.md "Exit codes"). */
const COMMANDS: ReadonlyArray<readonly string[]> = [
  ['tokens', 'list'],
  ['tokens', 'create', '--role', 'admin'],
  ['migrate'],
  ['log', 'verify'],
  ['reconcile'],
  ['harness', 'list'],
  ['report'],
  ['observe', 'export'],
  ['observe', 'metrics'],
  ['serve', '--port', '0'],
];

for (const [kind, fill] of [
  ['a JSON file', (path: string) => copyFileSync(join(root, 'examples', 'baton.config.json'), path)],
  ['random bytes', (path: string) => writeFileSync(path, randomBytes(8192))],
] as const) {
  test(`--db naming ${kind}: store_corrupt naming the path, no stack, the file untouched`, async (t) => {
    const dir = tempDir(t);
    const db = join(dir, 'not-a.db');
    fill(db);
    const before = readFileSync(db);
    for (const argv of COMMANDS) {
      const r = await run([...argv, '--db', db]);
      const what = argv.join(' ');
      assert.equal(r.code, 1, `${what}: ${r.err}`);
      assert.equal(r.out, '', what);
      assert.equal(
        r.err,
        `error: store_corrupt: ${db} is not a SQLite database (file is not a database)\n`,
        what,
      );
      assert.doesNotMatch(r.err, /^\s+at /m, `${what}: no stack`);
      assert.deepEqual(readFileSync(db), before, `${what}: the file is unchanged`);
      assert.deepEqual(readdirSync(dir), ['not-a.db'], `${what}: nothing created beside it`);
    }
  });
}

test('SQLITE_NOTADB and SQLITE_CORRUPT map to store_corrupt, naming the file when known', () => {
  const notADb = mapDriverError(new Database.SqliteError('file is not a database', 'SQLITE_NOTADB'), 'x.db');
  assert.ok(isBatonError(notADb, 'store_corrupt'));
  assert.equal(notADb.message, 'x.db is not a SQLite database (file is not a database)');
  assert.deepEqual(notADb.details, { path: 'x.db' });
  const corrupt = mapDriverError(
    new Database.SqliteError('database disk image is malformed', 'SQLITE_CORRUPT'),
  );
  assert.ok(isBatonError(corrupt, 'store_corrupt'));
  assert.equal(corrupt.message, 'the store’s SQLite database is damaged (database disk image is malformed)');
  const vtab = mapDriverError(new Database.SqliteError('malformed', 'SQLITE_CORRUPT_VTAB'), 'y.db');
  assert.ok(isBatonError(vtab, 'store_corrupt'));
  assert.equal(vtab.message, 'y.db is a damaged SQLite database (malformed)');
  const other = new Database.SqliteError('datatype mismatch', 'SQLITE_MISMATCH');
  assert.equal(mapDriverError(other), other, 'anything else is returned as it is');
});
