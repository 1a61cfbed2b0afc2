/**
 * One better-sqlite3 connection as the SQLite engine uses it (src/store/sqlite.ts), shared by the
 * engine's own thread and by the writer thread (src/store/sqlite-writer-worker.ts), so that both
 * open, configure and run statements in exactly one way.
 */
import Database from 'better-sqlite3';
import { BatonError } from '../core/errors.js';
import type { SqlValue } from './engine.js';
import { isBusyDriverError, mapDriverError, unreadableDatabase } from './errors.js';

export type Db = Database.Database;
type Statement = Database.Statement<unknown[], unknown>;

// One synchronous busy wait never blocks the calling thread longer than this.
export const BUSY_SLICE_MS = 20;

export interface ConnectionOptions {
  busyTimeoutMs?: number;
  fileMustExist?: boolean;
}

/** Run `fn`, a driver error mapped (DESIGN.md §2). */
export function call<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw mapDriverError(error);
  }
}

/**
 * Prepared statements by SQL text. A hit costs one Map lookup (no reordering): when full, the
 * oldest-prepared statement is evicted, which for Baton's fixed set of statement texts is rare.
 */
export class StatementCache {
  readonly #db: Db;
  readonly #max: number;
  readonly #map = new Map<string, Statement>();

  constructor(db: Db, max: number) {
    this.#db = db;
    this.#max = Math.max(1, max);
  }

  get(sql: string): Statement {
    const hit = this.#map.get(sql);
    if (hit !== undefined) return hit;
    const stmt = this.#db.prepare(sql);
    if (this.#map.size >= this.#max) {
      const oldest = this.#map.keys().next();
      if (oldest.done !== true) this.#map.delete(oldest.value);
    }
    this.#map.set(sql, stmt);
    return stmt;
  }

  /** Run a statement that returns no rows (BEGIN, SAVEPOINT, COMMIT…), errors mapped. */
  exec(sql: string): void {
    call(() => this.get(sql).run());
  }
}

/**
 * Statements on one connection, run at once; a driver error is thrown as it is (the caller maps
 * it). The engine's executors run on one of these: the connection itself, or the writer thread.
 */
export interface StatementRunner {
  all(sql: string, params: readonly SqlValue[]): unknown[];
  get(sql: string, params: readonly SqlValue[]): unknown;
  /** Changes, and the last inserted rowid. */
  run(sql: string, params: readonly SqlValue[]): RunAnswer;
  exec(sql: string): void;
}

/** `[changes, lastInsertRowid]`: an array, which the writer thread's messages copy cheaply. */
export type RunAnswer = readonly [changes: number, lastRowid: number];

function runAnswer(r: Database.RunResult): RunAnswer {
  return [r.changes, Number(r.lastInsertRowid)];
}

/** A StatementRunner on a connection of this thread. */
export function localRunner(cache: StatementCache): StatementRunner {
  return {
    all: (sql, params) => cache.get(sql).all(...params),
    get: (sql, params) => cache.get(sql).get(...params),
    run: (sql, params) => runAnswer(cache.get(sql).run(...params)),
    exec: (sql) => cache.exec(sql),
  };
}

export function openConnection(path: string, readonly: boolean, options: ConnectionOptions): Db {
  try {
    return new Database(path, {
      readonly,
      fileMustExist: readonly || options.fileMustExist === true,
      timeout: readonly ? (options.busyTimeoutMs ?? 5000) : BUSY_SLICE_MS,
    });
  } catch (cause) {
    if (isBusyDriverError(cause) || unreadableDatabase(cause) !== undefined) {
      throw mapDriverError(cause, path);
    }
    // The path and the driver's reason (a missing folder, permissions), never anything secret.
    const why = cause instanceof Error ? `: ${cause.message}` : '';
    throw new BatonError('unavailable', `cannot open the SQLite database ${path}${why}`, { path }, { cause });
  }
}

/**
 * WAL mode and the writer's pragmas. The first pragma is where SQLite first reads the file: one
 * that is not a database (or a damaged one) is refused here as `store_corrupt` naming `path`,
 * before anything is written to it.
 */
export function configureWriter(db: Db, path?: string): void {
  try {
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal' && mode !== 'memory') {
      throw new BatonError('unavailable', `SQLite refused WAL mode (journal_mode=${String(mode)})`);
    }
    // FULL: WAL is fsynced at every commit, so a commit survives power loss (docs/store.md).
    db.pragma('synchronous = FULL');
    // macOS: a plain fsync does not flush the drive's cache; F_FULLFSYNC does (no-op elsewhere).
    db.pragma('fullfsync = ON');
    db.pragma('foreign_keys = ON');
    // Group commit runs each transaction in a savepoint, whose sub-journal (the pages it changed,
    // to undo them) would otherwise spill to a temporary file: keep it in memory. Temporary data
    // only; the WAL and the database file, hence durability, are untouched.
    db.pragma('temp_store = MEMORY');
  } catch (error) {
    throw mapDriverError(error, path);
  }
}

/** Open the write connection, configured; closed again when configuring fails. */
export function openWriter(path: string, options: ConnectionOptions): Db {
  const db = openConnection(path, false, options);
  try {
    configureWriter(db, path);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/**
 * One attempt at `BEGIN IMMEDIATE`: false while another process holds the write lock and
 * `deadline` (performance.now()) has not passed; past it, `store_busy`. Callers wait between
 * attempts in their own way (a timer on the engine's thread, a blocking wait on the writer's).
 */
export function tryBeginImmediate(cache: StatementCache, deadline: number): boolean {
  try {
    cache.get('BEGIN IMMEDIATE').run();
    return true;
  } catch (error) {
    if (!isBusyDriverError(error) || performance.now() >= deadline) throw mapDriverError(error);
    return false;
  }
}

/** The wait before the next attempt: doubling from 1 ms, at most 50 ms, never past the deadline. */
export function busyDelay(attempt: number, deadline: number): number {
  return Math.max(0, Math.min(2 ** Math.min(attempt, 6), 50, deadline - performance.now()));
}
