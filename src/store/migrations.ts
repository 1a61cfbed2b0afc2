/**
 * Numbered schema migrations (DESIGN.md §2: "run by `baton migrate` and at server start").
 * Each migration applies in its own transaction together with its `schema_migrations` row, so a
 * crash leaves either all of it or none. A database that records a migration this build does not
 * know was written by a newer Baton: it is refused rather than used with a schema we cannot read.
 * The digest of each `up` text is recorded and compared, so an edited released migration is
 * noticed instead of silently diverging between databases.
 */
import { BatonError, isBatonError } from '../core/errors.js';
import { digestBytes } from '../core/digest.js';
import type { EngineKind, SqlExecutor, StoreEngine, Transaction } from './engine.js';
import { migrations as registry } from './migrations/index.js';

export interface Migration {
  readonly id: number;
  readonly name: string;
  /** Portable SQL (see engine.ts); statements separated by `;`. */
  readonly up: string;
  /**
   * PostgreSQL's text, only where portable SQL cannot say it (an identity column, setting a
   * sequence); `up` is then SQLite's. Each database records the digest of the text it applied.
   */
  readonly postgres?: string;
}

/** The text of `m` that `engine` runs (DDL dialect is the one engine difference a migration may have). */
export function migrationText(m: Migration, kind: EngineKind): string {
  return kind === 'postgres' && m.postgres !== undefined ? m.postgres : m.up;
}

export interface MigrateResult {
  readonly applied: readonly Migration[];
  /** The highest migration id now recorded (0 for none). */
  readonly version: number;
}

interface AppliedRow {
  id: number;
  name: string;
  digest: string;
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  id BIGINT NOT NULL PRIMARY KEY,
  name TEXT NOT NULL,
  digest TEXT NOT NULL,
  applied_at BIGINT NOT NULL
)`;

/**
 * A SQLite `CREATE TRIGGER … BEGIN stmt; … END` body holds `;` of its own: the statement ends only
 * at the `;` after its END (migration 007's append-only triggers).
 */
function insideTriggerBody(current: string): boolean {
  return /^\s*CREATE\s+TRIGGER\b/i.test(current) && !/\bEND\s*$/i.test(current);
}

/**
 * Split a script on `;` outside quotes and `--` comments. Portable migrations hold plain DDL/DML,
 * no procedural bodies, so this is all the parsing they need.
 */
export function splitStatements(script: string): string[] {
  const out: string[] = [];
  let current = '';
  let quote: string | undefined;
  for (let i = 0; i < script.length; i++) {
    const c = script[i] ?? '';
    if (quote === '$$') {
      if (c === '$' && script[i + 1] === '$') {
        quote = undefined;
        current += '$$';
        i += 1;
        continue;
      }
    } else if (quote !== undefined) {
      if (c === quote) quote = undefined;
    } else if (c === '$' && script[i + 1] === '$') {
      // A PostgreSQL dollar-quoted function body (migration 012) holds `;` and quotes of its own.
      quote = '$$';
      current += '$$';
      i += 1;
      continue;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '-' && script[i + 1] === '-') {
      const end = script.indexOf('\n', i);
      i = end < 0 ? script.length : end;
      continue;
    } else if (c === ';' && !insideTriggerBody(current)) {
      out.push(current);
      current = '';
      continue;
    }
    current += c;
  }
  out.push(current);
  return out.map((s) => s.trim()).filter((s) => s.length > 0);
}

/** Refuse a registry with duplicate, unordered or malformed entries (a merge mistake). */
export function checkRegistry(list: readonly Migration[]): void {
  let last = 0;
  for (const m of list) {
    if (!Number.isSafeInteger(m.id) || m.id <= last) {
      throw new BatonError('internal', `migration ids must be increasing positive integers (at ${m.id})`);
    }
    if (!/^[a-z0-9_]+$/.test(m.name)) throw new BatonError('internal', `migration ${m.id} has a bad name`);
    last = m.id;
  }
}

/**
 * A transaction that no other process's migration runs beside (the engine's capability, so two
 * servers starting at once cannot both apply a migration or race on CREATE TABLE IF NOT EXISTS).
 */
function exclusive<T>(engine: StoreEngine, fn: (tx: Transaction) => Promise<T>): Promise<T> {
  return engine.migrationTransaction === undefined ? engine.transaction(fn) : engine.migrationTransaction(fn);
}

async function readApplied(tx: SqlExecutor): Promise<AppliedRow[]> {
  return tx.all<AppliedRow>('SELECT id, name, digest FROM schema_migrations ORDER BY id');
}

function checkKnown(applied: readonly AppliedRow[], list: readonly Migration[], kind: EngineKind): void {
  const known = new Map(list.map((m) => [m.id, m]));
  for (const row of applied) {
    const m = known.get(Number(row.id));
    if (m === undefined) {
      throw new BatonError(
        'store_schema_newer',
        `the database has migration ${row.id} (${row.name}) that this Baton does not know: it was written by a newer version`,
        { id: Number(row.id), name: row.name },
      );
    }
    if (row.digest !== digestBytes(migrationText(m, kind))) {
      throw new BatonError(
        'store_schema_mismatch',
        `migration ${m.id} (${m.name}) differs from the one applied to this database`,
        { id: m.id, name: m.name },
      );
    }
  }
}

/** The columns Baton's own `schema_migrations` has; another application's table lacks them. */
const BATON_COLUMNS: readonly string[] = ['id', 'name', 'digest'];

/** The columns of `schema_migrations` on the connection's search path; none when it is missing. */
async function migrationColumns(engine: StoreEngine): Promise<string[]> {
  const sql =
    engine.kind === 'postgres'
      ? "SELECT attname AS name FROM pg_attribute WHERE attrelid = to_regclass('schema_migrations') AND attnum > 0 AND NOT attisdropped"
      : "SELECT name FROM pragma_table_info('schema_migrations')";
  const rows = await engine.read((tx) => tx.all<{ name: string }>(sql));
  return rows.map((r) => r.name);
}

/**
 * Whether the database holds Baton's migration table (`baton`), none (`missing`), or a table of
 * that name another application owns (a Rails-style one with a `version` column): refused
 * `store_schema_mismatch`, since migrating beside it would mix two applications' schemas. Reads
 * only: an inspection command never writes to the store it looks at.
 */
export async function migrationsTable(engine: StoreEngine): Promise<'baton' | 'missing'> {
  const columns = await migrationColumns(engine);
  if (columns.length === 0) return 'missing';
  if (BATON_COLUMNS.every((c) => columns.includes(c))) return 'baton';
  throw new BatonError(
    'store_schema_mismatch',
    `the database's schema_migrations table is not Baton's (its columns: ${columns.join(', ')}): the database belongs to another application; give Baton a database (or schema) of its own`,
    { columns },
  );
}

/**
 * The migrations recorded in the database, checked against `list` (one this build does not know
 * or whose digest differs is refused); none if the table is missing. Reads only (`baton log`
 * inspects stores it must not change: a read-only file, or a database a running server writes).
 */
export async function appliedMigrations(
  engine: StoreEngine,
  list: readonly Migration[] = registry,
): Promise<number[]> {
  if ((await migrationsTable(engine)) === 'missing') return [];
  const applied = await engine.read(readApplied);
  checkKnown(applied, list, engine.kind);
  return applied.map((r) => Number(r.id));
}

/**
 * Run one migration's statements. The engine maps what it knows (busy, unavailable) to typed
 * errors; a statement the database itself refuses — an object the migration creates already
 * exists, with no `schema_migrations` row recording it — means the schema is not the one the
 * recorded migrations describe: `store_schema_mismatch`, naming the migration and the database's
 * words, never an `internal` with a driver's stack. The transaction rolls back.
 */
async function applyStatements(tx: Transaction, m: Migration, text: string): Promise<void> {
  for (const sql of splitStatements(text)) {
    try {
      await tx.run(sql);
    } catch (error) {
      if (isBatonError(error)) throw error;
      const said = error instanceof Error ? error.message : String(error);
      throw new BatonError(
        'store_schema_mismatch',
        `migration ${m.id} (${m.name}) cannot be applied: the database refused it (${said}); its schema is not what the recorded migrations describe (an object of this migration exists without its schema_migrations row?)`,
        { migration: m.id, name: m.name },
        { cause: error },
      );
    }
  }
}

/**
 * Apply every pending migration in id order, each in its own transaction. Safe to run again and
 * from several processes or servers at once: each transaction re-reads what is applied under the
 * engine's migration lock (SQLite's write lock, PostgreSQL's advisory lock). `onApplying` is told
 * of each migration about to run, inside its transaction (one over a large table can take minutes).
 */
export async function migrate(
  engine: StoreEngine,
  options: {
    list?: readonly Migration[];
    now?: () => number;
    onApplying?: (m: Migration) => void;
  } = {},
): Promise<MigrateResult> {
  const list = options.list ?? registry;
  const now = options.now ?? Date.now;
  checkRegistry(list);
  await migrationsTable(engine); // another application's table of that name is refused, untouched
  await exclusive(engine, (tx) => tx.run(CREATE_TABLE));
  const applied: Migration[] = [];
  for (const m of list) {
    const done = await exclusive(engine, async (tx) => {
      const rows = await readApplied(tx);
      checkKnown(rows, list, engine.kind);
      if (rows.some((r) => Number(r.id) === m.id)) return false;
      options.onApplying?.(m);
      const text = migrationText(m, engine.kind);
      await applyStatements(tx, m, text);
      await tx.run('INSERT INTO schema_migrations (id, name, digest, applied_at) VALUES (?, ?, ?, ?)', [
        m.id,
        m.name,
        digestBytes(text),
        now(),
      ]);
      return true;
    });
    if (done) applied.push(m);
  }
  const rows = await engine.read(readApplied);
  checkKnown(rows, list, engine.kind);
  const version = rows.reduce((max, r) => Math.max(max, Number(r.id)), 0);
  engine.schemaApplied?.(version);
  return { applied, version };
}
