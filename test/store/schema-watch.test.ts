/**
 * A long-running server whose shared store a newer Baton migrated stops reading and writing it
 * (src/store/schema-watch.ts; docs/operations.md "Upgrading a shared PostgreSQL store"): once a
 * watch read finds a migration this build does not know, every transaction and read is refused
 * with `unavailable` and `details.newer`, and nothing more is written.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatonError } from '../../src/core/errors.js';
import { migrate } from '../../src/store/migrations.js';
import { appliedMigrations, watchSchema } from '../../src/store/schema-watch.js';
import { waitUntil } from '../support/wait.js';
import { enginesUnderTest } from './engines.js';

const engines = await enginesUnderTest();

const FUTURE =
  "INSERT INTO schema_migrations (id, name, digest, applied_at) VALUES (9999, 'from_a_newer_baton', 'x', 0)";

const LINEAGE =
  'INSERT INTO aoc_lineages (id, generation, created_at, updated_at, version) VALUES (?, 1, 0, 0, 1)';

function isSuperseded(error: unknown): boolean {
  return (
    error instanceof BatonError &&
    error.code === 'unavailable' &&
    JSON.stringify(error.details) === JSON.stringify({ newer: [9999] })
  );
}

for (const e of engines) {
  test(`[${e.name}] schema watch: a newer migration turns every later read and write into a refusal`, async (t) => {
    const store = await e.open(t);
    await migrate(store.engine);
    const { engine, superseded } = watchSchema(store.another(), 10);
    t.after(() => engine.close());
    await engine.transaction((tx) => tx.run(LINEAGE, ['before']));

    let refusal: BatonError | undefined;
    void superseded.then((r) => (refusal = r));
    await store.tamper(FUTURE);
    // The watch's timer does not hold the process open (a server's listener does): poll for it.
    await waitUntil('the watch to find the newer migration', () => refusal !== undefined);
    assert.ok(refusal !== undefined);
    assert.ok(isSuperseded(refusal), `the refusal names the newer migration: ${refusal.message}`);
    assert.match(refusal.message, /migrated by a newer Baton \(migration 9999\)/);

    await assert.rejects(
      engine.transaction((tx) => tx.run(LINEAGE, ['after'])),
      isSuperseded,
    );
    await assert.rejects(
      engine.read((ex) => ex.all('SELECT 1 AS one')),
      isSuperseded,
    );
    // Nothing was written after the refusal; the other engine still reads the store.
    const ids = await store.engine.read((ex) =>
      ex.all<{ id: string }>("SELECT id FROM aoc_lineages WHERE id IN ('before', 'after') ORDER BY id"),
    );
    assert.deepEqual(
      ids.map((r) => r.id),
      ['before'],
    );
    assert.deepEqual((await store.engine.read(appliedMigrations)).newer, [9999]);
  });

  test(`[${e.name}] schema watch: a store this build knows is never refused`, async (t) => {
    const store = await e.open(t);
    await migrate(store.engine);
    const { engine, superseded } = watchSchema(store.another(), 5);
    t.after(() => engine.close());
    let settled = false;
    void superseded.then(() => (settled = true));
    // Several watch reads happen while these transactions run; none finds anything newer.
    for (let i = 0; i < 20; i += 1) {
      await engine.transaction((tx) => tx.get('SELECT 1 AS one'));
      await new Promise((r) => setTimeout(r, 2));
    }
    assert.equal(settled, false);
    assert.deepEqual((await engine.read(appliedMigrations)).newer, []);
  });
}
