/**
 * The seeded stores of bench/console-list.bench.ts, kept across runs: a SQLite file and a
 * PostgreSQL database (with its domain key file) in BENCH_DIR (default: the system temp folder).
 * BENCH_FRESH=1 seeds again. Opened through openBaton, as `baton serve` opens them.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { systemClock } from '../src/core/clock.js';
import { openBaton, type StoreChoice } from '../src/server/open.js';
import { createToken } from '../src/server/tokens.js';
import type { SqlValue } from '../src/store/engine.js';
import { configure, isSeeded, seed, type BulkWriter } from './console-list-seed.js';

export const DIR = process.env['BENCH_DIR'] ?? join(tmpdir(), 'baton-console-list');
const FRESH = process.env['BENCH_FRESH'] === '1';
const PG_NAME = 'baton_bench_console_list';

export interface Seeded {
  readonly choice: StoreChoice;
  /** `baton serve` arguments for this store. */
  readonly serveArgs: readonly string[];
  /** A fresh operator token for this run. */
  readonly token: string;
  /** When the last seeded occurrence was created (Unix ms). */
  readonly newest: number;
}

function values(n: number, width: number, base = 0): string {
  const rows: string[] = [];
  for (let r = 0; r < n; r++) {
    const cells = Array.from({ length: width }, (_, c) => `$${base + r * width + c + 1}`);
    rows.push(`(${cells.join(', ')})`);
  }
  return rows.join(', ');
}

function sqliteWriter(db: Database.Database): BulkWriter {
  const cache = new Map<string, Database.Statement>();
  return {
    insert: (table, columns, rows) => {
      const key = `${table}/${rows.length}`;
      let st = cache.get(key);
      if (st === undefined) {
        const row = `(${columns.map(() => '?').join(', ')})`;
        st = db.prepare(
          `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${rows.map(() => row).join(', ')}`,
        );
        cache.set(key, st);
      }
      st.run(...rows.flat());
      return Promise.resolve();
    },
    exec: (sql, params = []) => {
      db.prepare(sql).run(...params);
      return Promise.resolve();
    },
  };
}

function postgresWriter(client: pg.Client): BulkWriter {
  const q = (sql: string, params: SqlValue[]): Promise<unknown> => client.query(sql, params);
  return {
    insert: async (table, columns, rows) => {
      await q(
        `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${values(rows.length, columns.length)}`,
        rows.flat(),
      );
    },
    exec: async (sql, params = []) => {
      let i = 0;
      await q(
        sql.replace(/\?/g, () => `$${++i}`),
        params,
      );
    },
  };
}

async function newestCreated(choice: StoreChoice): Promise<{ newest: number; token: string }> {
  const b = await openBaton(choice);
  try {
    const r = await b.engine.read((ex) =>
      ex.get<{ m: number | string }>('SELECT MAX(created_at) AS m FROM aoc_occurrences'),
    );
    const t = await createToken(
      b.engine,
      { role: 'operator', name: 'console-bench' },
      { clock: systemClock, actor: 'bench' },
    );
    return { newest: Number(r?.m ?? 0), token: t.token };
  } finally {
    await b.close();
  }
}

/** Seed (or reuse) the store, then hand it over closed, with `write` doing the bulk part. */
async function prepare(
  label: string,
  choice: StoreChoice,
  n: number,
  bulk: (w: (wr: BulkWriter) => Promise<void>) => Promise<void>,
): Promise<void> {
  const b = await openBaton(choice);
  let tpl;
  try {
    if (await isSeeded(b.engine, n)) {
      console.log(`  ${label}: reusing the seeded store (BENCH_FRESH=1 seeds again)`);
      return;
    }
    tpl = await configure(b.service, b.engine);
  } finally {
    await b.close();
  }
  const now = Date.now();
  await bulk(async (w) => {
    const ms = await seed(label, w, tpl, n, now);
    console.log(`  ${label}: seeded ${n} occurrences in ${(ms / 1000).toFixed(1)} s`);
  });
}

export async function seededSqlite(n: number): Promise<Seeded> {
  mkdirSync(DIR, { recursive: true });
  const path = join(DIR, `console-list-${n}.db`);
  if (FRESH) for (const s of ['', '-wal', '-shm', '.domain-key.pem']) rmSync(path + s, { force: true });
  const choice: StoreChoice = { kind: 'sqlite', path };
  await prepare('sqlite', choice, n, async (run) => {
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF'); // seeding is set-up, not measured; the server opens it as always
    try {
      await run(sqliteWriter(db));
    } finally {
      db.close();
    }
  });
  return { choice, serveArgs: ['--db', path], ...(await newestCreated(choice)) };
}

async function admin(url: string, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

export async function seededPostgres(serverUrl: string, n: number): Promise<Seeded> {
  mkdirSync(DIR, { recursive: true });
  const keyFile = join(DIR, `console-list-${n}-pg.domain-key.pem`);
  const u = new URL(serverUrl);
  u.pathname = `/${PG_NAME}_${n}`;
  const url = u.toString();
  // The database and its domain key go together: one without the other is seeded again.
  if (FRESH || !existsSync(keyFile)) {
    await admin(serverUrl, `DROP DATABASE IF EXISTS ${PG_NAME}_${n}`);
    rmSync(keyFile, { force: true });
  }
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  const exists = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [`${PG_NAME}_${n}`]);
  await c.end();
  if (exists.rowCount === 0) {
    await admin(
      serverUrl,
      `CREATE DATABASE ${PG_NAME}_${n} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`,
    );
  }
  const choice: StoreChoice = { kind: 'postgres', url, domainKeyFile: keyFile };
  await prepare('postgres', choice, n, async (run) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query('SET synchronous_commit = off'); // set-up, not measured
      await run(postgresWriter(client));
      await client.query('ANALYZE aoc_occurrences'); // what autovacuum would do after a bulk load
    } finally {
      await client.end();
    }
  });
  return {
    choice,
    serveArgs: ['--postgres', url, '--domain-key', keyFile],
    ...(await newestCreated(choice)),
  };
}
