/**
 * Operational failures of the store come out typed, in words an operator can act on (src/store/
 * errors.ts): a read-only SQLite database or PostgreSQL standby, a cancelled statement; and
 * `migrate` refuses another application's `schema_migrations` table, leaving it as it was.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isBatonError } from '../../src/core/errors.js';
import { migrate } from '../../src/store/migrations.js';
import { openPostgresEngine } from '../../src/store/postgres.js';
import { enginesUnderTest } from './engines.js';

const engines = await enginesUnderTest();

/** `url` whose connections also run `-c setting`. */
function withSetting(url: string, setting: string): string {
  const u = new URL(url);
  u.searchParams.set('options', [u.searchParams.get('options'), `-c ${setting}`].filter(Boolean).join(' '));
  return u.toString();
}

for (const e of engines) {
  test(`[${e.name}] migrate refuses a foreign schema_migrations table, touching nothing`, async (t) => {
    const store = await e.open(t);
    await store.tamper('CREATE TABLE schema_migrations (version TEXT NOT NULL PRIMARY KEY)');
    await store.tamper("INSERT INTO schema_migrations (version) VALUES ('20240101000000')");
    await assert.rejects(migrate(store.engine), (error: unknown) => {
      assert.ok(isBatonError(error, 'store_schema_mismatch'), String(error));
      assert.match(error.message, /schema_migrations table is not Baton's \(its columns: version\)/);
      return true;
    });
    assert.deepEqual(await store.tables(), ['schema_migrations']);
  });
}

const sqlite = engines.find((e) => e.kind === 'sqlite');
test('[sqlite] a write refused as read-only is `unavailable` with words, not internal', async (t) => {
  assert.ok(sqlite);
  const { engine } = await sqlite.open(t);
  await migrate(engine);
  const write = engine.transaction(async (tx) => {
    await tx.run('PRAGMA query_only = ON');
    try {
      return await tx.run("INSERT INTO schema_migrations VALUES (999, 'x', 'y', 0)");
    } finally {
      await tx.run('PRAGMA query_only = OFF');
    }
  });
  await assert.rejects(write, (error: unknown) => {
    assert.ok(isBatonError(error, 'unavailable'), String(error));
    assert.match(error.message, /cannot be written .* \(SQLITE_READONLY\)$/);
    return true;
  });
});

const postgres = engines.find((e) => e.kind === 'postgres');
if (postgres !== undefined) {
  test('[postgres] a read-only database (a standby after failover, 25006) is `unavailable`', async (t) => {
    const store = await postgres.open(t);
    await migrate(store.engine);
    const readOnly = openPostgresEngine(withSetting(store.location, 'default_transaction_read_only=on'));
    t.after(() => readOnly.close());
    await assert.rejects(
      readOnly.transaction((tx) => tx.run("INSERT INTO schema_migrations VALUES (999, 'x', 'y', 0)")),
      (error: unknown) => {
        assert.ok(isBatonError(error, 'unavailable'), String(error));
        assert.match(error.message, /accepts no writes .* \(25006\)$/);
        return true;
      },
    );
  });

  test('[postgres] a statement cancelled by statement_timeout (57014) is `unavailable`', async (t) => {
    const { engine } = await postgres.open(t);
    const slow = engine.read(async (tx) => {
      await tx.run('SET LOCAL statement_timeout = 50');
      return tx.get('SELECT pg_sleep(2) AS slept');
    });
    await assert.rejects(slow, (error: unknown) => {
      assert.ok(isBatonError(error, 'unavailable'), String(error));
      assert.match(error.message, /statement_timeout.* \(57014\)$/);
      return true;
    });
  });
}
