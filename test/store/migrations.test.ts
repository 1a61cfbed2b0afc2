import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { isBatonError } from '../../src/core/errors.js';
import { checkRegistry, migrate, splitStatements, type Migration } from '../../src/store/migrations.js';
import { migrations } from '../../src/store/migrations/index.js';
import { OPEN_STRIPES } from '../../src/store/occurrences-limits.js';
import { runMigrate } from '../../src/cli/commands/migrate.js';
import { enginesUnderTest } from './engines.js';
import { captureIo, tempDir } from './support.js';

const engines = await enginesUnderTest();

test('the registry is ordered and starts with the evidence log', () => {
  checkRegistry(migrations);
  assert.equal(migrations[0]?.id, 1);
  assert.equal(migrations[0]?.name, 'evidence_log');
});

for (const e of engines) {
  test(`[${e.name}] migrate applies every pending migration once, and again is a no-op`, async (t) => {
    const store = await e.open(t);
    const { engine } = store;
    const first = await migrate(engine);
    assert.deepEqual(
      first.applied.map((m) => m.id),
      migrations.map((m) => m.id),
    );
    assert.equal(first.version, migrations.at(-1)?.id);
    const before = await store.tables();
    for (const name of ['aoc_open_stripes', 'evidence_events', 'evidence_heads', 'schema_migrations']) {
      assert.ok(before.includes(name), name);
    }
    const second = await migrate(engine);
    assert.deepEqual(second.applied, []);
    assert.equal(second.version, first.version);
    assert.deepEqual(await store.tables(), before);
    assert.ok(!before.includes('evidence_counter'), 'migration 4 dropped the global counter row');
    const stripes = await engine.read((tx) =>
      tx.get<{ n: number; open: number }>(
        'SELECT COUNT(*) AS n, SUM(pending + in_flight) AS open FROM aoc_open_stripes',
      ),
    );
    assert.deepEqual(stripes, { n: OPEN_STRIPES, open: 0 }, 'the stripe rows were inserted exactly once');
  });

  test(`[${e.name}] several servers migrating one store at once apply each migration exactly once`, async (t) => {
    const store = await e.open(t);
    const servers = [store.engine, store.another(), store.another(), store.another()];
    const results = await Promise.all(servers.map((engine) => migrate(engine)));
    const applied = results.flatMap((r) => r.applied.map((m) => m.id)).sort((a, b) => a - b);
    assert.deepEqual(
      applied,
      migrations.map((m) => m.id),
    );
    for (const r of results) assert.equal(r.version, migrations.at(-1)?.id);
    const rows = await store.engine.read((tx) =>
      tx.all<{ id: number }>('SELECT id FROM schema_migrations ORDER BY id'),
    );
    assert.deepEqual(
      rows.map((r) => r.id),
      migrations.map((m) => m.id),
    );
    t.diagnostic(`checked ${servers.length} concurrent migrations of ${migrations.length} migration(s)`);
  });

  test(`[${e.name}] a later migration appended to the list applies alone`, async (t) => {
    const store = await e.open(t);
    await migrate(store.engine);
    const extra: Migration = {
      id: 900,
      name: 'extra',
      up: 'CREATE TABLE extra (id BIGINT NOT NULL PRIMARY KEY)',
    };
    const result = await migrate(store.engine, { list: [...migrations, extra] });
    assert.deepEqual(
      result.applied.map((m) => m.id),
      [900],
    );
    assert.ok((await store.tables()).includes('extra'));
  });

  test(`[${e.name}] a failing migration leaves neither its tables nor its record`, async (t) => {
    const store = await e.open(t);
    const bad: Migration = {
      id: 901,
      name: 'bad',
      up: 'CREATE TABLE half (id BIGINT NOT NULL PRIMARY KEY); INSERT INTO nowhere (x) VALUES (1)',
    };
    await assert.rejects(migrate(store.engine, { list: [...migrations, bad] }));
    assert.ok(!(await store.tables()).includes('half'));
    const ids = await store.engine.read((tx) =>
      tx.all<{ id: number }>('SELECT id FROM schema_migrations ORDER BY id'),
    );
    assert.deepEqual(
      ids.map((r) => r.id),
      migrations.map((m) => m.id),
    );
  });

  test(`[${e.name}] a migration whose objects exist without its record is store_schema_mismatch naming it, not internal`, async (t) => {
    const store = await e.open(t);
    await migrate(store.engine);
    // Migration 33 creates a table; its record deleted, the table is still there.
    await store.tamper('DELETE FROM schema_migrations WHERE id = 33');
    await assert.rejects(
      migrate(store.engine),
      (err) =>
        isBatonError(err, 'store_schema_mismatch') &&
        err.details['migration'] === 33 &&
        /migration 33 \(mission_issuer_unpins\) cannot be applied/.test(err.message) &&
        /already exists/.test(err.message),
    );
    const ids = await store.engine.read((tx) => tx.all<{ id: number }>('SELECT id FROM schema_migrations'));
    assert.equal(ids.length, migrations.length - 1, 'nothing recorded');
    if (e.kind === 'sqlite') {
      const io = captureIo();
      assert.equal(await runMigrate(['--db', store.location], io), 1);
      assert.match(io.err.join(''), /store_schema_mismatch: migration 33/);
      assert.doesNotMatch(io.err.join(''), /internal|\n\s+at /, 'no stack');
    }
  });

  test(`[${e.name}] a database with a migration this code does not know is refused`, async (t) => {
    const store = await e.open(t);
    await migrate(store.engine);
    await store.tamper(
      "INSERT INTO schema_migrations (id, name, digest, applied_at) VALUES (999, 'future', 'x', 0)",
    );
    await assert.rejects(
      migrate(store.engine),
      (err) =>
        isBatonError(err, 'store_schema_newer') && err.details['id'] === 999 && /newer/.test(err.message),
    );
    if (e.kind === 'sqlite') {
      const io = captureIo();
      assert.equal(await runMigrate(['--db', store.location], io), 1);
      assert.match(io.err.join(''), /store_schema_newer.*999/);
    }
  });

  test(`[${e.name}] an applied migration whose text changed is refused`, async (t) => {
    const { engine } = await e.open(t);
    await migrate(engine);
    const [first, ...rest] = migrations;
    assert.ok(first);
    const edited = { ...first, up: `${first.up};\nCREATE TABLE sneaky (id BIGINT)` };
    await assert.rejects(migrate(engine, { list: [edited, ...rest] }), (err) =>
      isBatonError(err, 'store_schema_mismatch'),
    );
  });
}

test('a malformed registry is refused before anything runs', () => {
  const m = (id: number, name = 'x'): Migration => ({ id, name, up: 'SELECT 1' });
  const bad = [[m(2), m(1)], [m(1), m(1)], [m(0)], [m(1.5)], [m(1, 'Bad Name')]];
  for (const list of bad)
    assert.throws(
      () => checkRegistry(list),
      (e) => isBatonError(e, 'internal'),
    );
});

test('splitStatements splits on ; outside quotes and comments', () => {
  const parts = splitStatements(
    "CREATE TABLE a (x TEXT DEFAULT 'a;b');\n-- a comment; with a semicolon\nINSERT INTO \"we;ird\" VALUES ('it''s; fine');;  \n",
  );
  assert.deepEqual(parts, [
    "CREATE TABLE a (x TEXT DEFAULT 'a;b')",
    "INSERT INTO \"we;ird\" VALUES ('it''s; fine')",
  ]);
});

test('[sqlite] baton migrate: creates and migrates, then reports the schema current; bad options exit 2', async (t) => {
  const path = join(tempDir(t), 'cli.db');
  const io = captureIo();
  assert.equal(await runMigrate(['--db', path], io), 0);
  assert.match(io.out.join(''), new RegExp(`applied ${migrations.length} migration\\(s\\): 1 evidence_log`));
  const again = captureIo();
  assert.equal(await runMigrate(['--db', path], again), 0);
  assert.ok(again.out.join('').includes(`schema is current (version ${migrations.at(-1)?.id})`));
  const bad = captureIo();
  assert.equal(await runMigrate(['--nope'], bad), 2);
  assert.match(bad.err.join(''), /^error: usage:/);
  assert.equal(await runMigrate(['extra', '--db', path], captureIo()), 2);
});
