/**
 * `baton log verify|export` only read the store they inspect (docs/store.md, "Inspecting a
 * store"): a file that is not Baton's stays byte for byte as it was (no WAL conversion, no
 * schema_migrations), a read-only copy verifies, a running writer is not waited for, and a
 * PostgreSQL database without Baton's tables gains none.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { main } from '../../src/cli/baton.js';
import { captureIo, tempDir } from '../store/support.js';
import { postgresForTests, withClient } from '../support/postgres.js';

const pgDb = await postgresForTests();
const BIN = join(import.meta.dirname, '../../src/cli/main.js');

async function run(argv: string[]) {
  const io = captureIo();
  const code = await main(argv, io);
  return { code, out: io.out.join(''), err: io.err.join('') };
}

test('log verify on a SQLite file that is not Baton’s: typed refusal, the file unchanged', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'other.db');
  const other = new Database(path);
  other.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES (1)');
  other.close();
  const before = readFileSync(path);
  const r = await run(['log', 'verify', '--db', path]);
  assert.equal(r.code, 2, r.err);
  assert.equal(
    r.err,
    `error: usage: no Baton store in ${path} (it has no schema_migrations table; \`baton migrate\` creates one)\n`,
  );
  assert.deepEqual(readFileSync(path), before, 'byte-identical');
  assert.deepEqual(readdirSync(dir), ['other.db'], 'no -wal or -shm left');
  const after = new Database(path, { readonly: true });
  assert.equal(after.pragma('journal_mode', { simple: true }), 'delete');
  after.close();
});

test('log verify on a read-only copy of a store: OK, nothing written', async (t) => {
  const dir = tempDir(t);
  const source = join(dir, 'store.db');
  assert.equal((await run(['migrate', '--db', source])).code, 0);
  const copy = join(dir, 'copy.db');
  copyFileSync(source, copy);
  chmodSync(copy, 0o444);
  chmodSync(dir, 0o777); // the reader may create the -shm SQLite needs beside a WAL file
  const before = readFileSync(copy);
  // As root a mode bit stops nobody: the CLI then runs as `nobody`, for whom 0444 means it.
  const asOther = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  const r = spawnSync(process.execPath, [BIN, 'log', 'verify', '--db', copy], {
    ...asOther,
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'evidence log OK: 0 events in 0 subjects\n');
  assert.deepEqual(readFileSync(copy), before);
});

test('log verify on a WAL store in a folder it may not write: typed `unavailable`, no stack', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'store.db');
  assert.equal((await run(['migrate', '--db', path])).code, 0);
  chmodSync(path, 0o444);
  chmodSync(dir, 0o555);
  const asOther = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  let r;
  try {
    r = spawnSync(process.execPath, [BIN, 'log', 'verify', '--db', path], { ...asOther, encoding: 'utf8' });
  } finally {
    chmodSync(dir, 0o700); // removable again when the test ends
  }
  assert.equal(r.status, 1, r.stderr);
  assert.match(
    r.stderr,
    /^error: unavailable: SQLite cannot create the -wal or -shm file beside the database: .*\(SQLITE_READONLY_DIRECTORY\)\n$/,
  );
});

test('log verify beside a running writer: no wait for its lock (WAL readers are never blocked)', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'store.db');
  assert.equal((await run(['migrate', '--db', path])).code, 0);
  const writer = new Database(path);
  t.after(() => writer.close());
  writer.exec('BEGIN IMMEDIATE');
  const started = performance.now();
  const r = await run(['log', 'verify', '--db', path]);
  writer.exec('ROLLBACK');
  assert.equal(r.code, 0, r.err);
  assert.ok(performance.now() - started < 2000, 'not the 5 s busy budget');
});

if (pgDb !== undefined) {
  test('log verify --postgres on a database without Baton’s tables: typed refusal, no table created', async () => {
    const url = await pgDb.schema();
    const r = await run(['log', 'verify', '--postgres', url]);
    assert.equal(r.code, 2, r.err);
    assert.match(
      r.err,
      /^error: usage: no Baton store in the database at [^ ]+:\d+ \(it has no schema_migrations table; `baton migrate` creates one\)\n$/,
    );
    const tables = await withClient(url, (c) =>
      c.query<{ n: string }>('SELECT count(*) AS n FROM pg_tables WHERE schemaname = current_schema()'),
    );
    assert.equal(tables.rows[0]?.n, '0');
  });
}
