/**
 * The engines the store contract suite runs against (DESIGN.md §2: "One contract test suite runs
 * against both engines"): SQLite always, PostgreSQL when test/support/postgres.ts finds a server.
 * Call `enginesUnderTest()` once at the top level of a test file, then
 * `for (const e of engines) test(`[${e.name}] …`, …)`.
 */
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import Database from 'better-sqlite3';
import type { EngineKind, SqlValue, StoreEngine } from '../../src/store/engine.js';
import { openSqliteEngine } from '../../src/store/sqlite.js';
import type { SqliteWriterMode } from '../../src/store/sqlite-writer.js';
import { openPostgresEngine, type PostgresEngineOptions } from '../../src/store/postgres.js';
import { toPostgresPlaceholders } from '../../src/store/postgres-sql.js';
import { postgresForTests, withClient, type PostgresTestDatabase } from '../support/postgres.js';
import { DROP_EVIDENCE_GUARD, tempDir } from './support.js';

export interface EngineOptions {
  /** How long a writer waits for another's lock before `store_busy`. */
  busyTimeoutMs?: number;
  /** Refuse a nested transaction or read (the engines' default follows BATON_STORE_NESTING_CHECK). */
  nestingCheck?: boolean;
}

export interface StoreUnderTest {
  readonly engine: StoreEngine;
  /** The file path (SQLite) or URL (PostgreSQL) of the store. */
  readonly location: string;
  /** Another engine on the same store, as a second process or server opens it; closed at the end. */
  another(options?: EngineOptions): StoreEngine;
  /**
   * Change the store behind Baton's back, as someone with database access could; rows changed.
   * A statement on the evidence log first drops its append-only guard (migration 031), as they can.
   */
  tamper(sql: string, params?: readonly SqlValue[]): Promise<number>;
  /** The store's table names, sorted. */
  tables(): Promise<string[]>;
}

export interface EngineUnderTest {
  readonly kind: EngineKind;
  /** For test names: `sqlite`, `postgres`, `postgres serializable`. */
  readonly name: string;
  /** A fresh, empty store for one test; every engine opened on it is closed when the test ends. */
  open(t: TestContext, options?: EngineOptions): Promise<StoreUnderTest>;
}

const EVIDENCE = /\bevidence_events\b/i;

function closing(t: TestContext, engine: StoreEngine): StoreEngine {
  t.after(() => engine.close());
  return engine;
}

function sqliteWith(name: string, writer: SqliteWriterMode): EngineUnderTest {
  return {
    kind: 'sqlite',
    name,
    open(t, options = {}) {
      const path = join(tempDir(t), 'baton.db');
      const another = (o: EngineOptions = options): StoreEngine =>
        closing(t, openSqliteEngine(path, { ...o, writer }));
      return Promise.resolve({
        engine: another(options),
        location: path,
        another,
        tamper(sql, params = []) {
          const raw = new Database(path);
          try {
            if (EVIDENCE.test(sql)) raw.exec(DROP_EVIDENCE_GUARD.sqlite.join(';\n'));
            return Promise.resolve(raw.prepare(sql).run(...params).changes);
          } finally {
            raw.close();
          }
        },
        async tables() {
          const raw = new Database(path, { readonly: true });
          try {
            const rows = raw
              .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
              .all() as { name: string }[];
            return Promise.resolve(rows.map((r) => r.name));
          } finally {
            raw.close();
          }
        },
      });
    },
  };
}

const sqlite = sqliteWith('sqlite', 'inline');

/** SQLite with its write connection on a worker thread (docs/store.md, "The writer thread"). */
export const sqliteThreadUnderTest = sqliteWith('sqlite writer thread', 'thread');

export function postgresUnderTest(
  db: PostgresTestDatabase,
  name: string,
  base: PostgresEngineOptions = {},
): EngineUnderTest {
  return {
    kind: 'postgres',
    name,
    async open(t, options = {}) {
      const url = await db.schema();
      const another = (o: EngineOptions = options): StoreEngine =>
        closing(t, openPostgresEngine(url, { ...base, ...o }));
      return {
        engine: another(options),
        location: url,
        another,
        tamper: (sql, params = []) =>
          withClient(url, async (c) => {
            if (EVIDENCE.test(sql)) await c.query(DROP_EVIDENCE_GUARD.postgres.join(';\n'));
            return (await c.query(toPostgresPlaceholders(sql).text, [...params])).rowCount ?? 0;
          }),
        tables: () =>
          withClient(url, async (c) => {
            const { rows } = await c.query<{ name: string }>(
              'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1',
            );
            return rows.map((r) => r.name);
          }),
      };
    },
  };
}

/** SQLite, and PostgreSQL (default options) when reachable. */
export async function enginesUnderTest(): Promise<EngineUnderTest[]> {
  const db = await postgresForTests();
  return db === undefined ? [sqlite] : [sqlite, postgresUnderTest(db, 'postgres')];
}

export { sqlite as sqliteUnderTest };
