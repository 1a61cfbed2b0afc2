/**
 * A SQLite store opened to be looked at, never changed (`baton log verify|export`): one
 * connection with `query_only` on and no writer, so none of the writer's pragmas runs
 * (journal_mode = WAL would convert a file that is not Baton's) and no write lock is ever taken
 * (a running server's writer is never waited for). Each read is a deferred transaction, one
 * snapshot. The file is opened read-write where it may be (SQLite falls back to read-only for a
 * read-only file), only so that closing it tidies the -wal and -shm files away as a writer's close
 * does; a read-only connection would leave them behind.
 */
import { BatonError } from '../core/errors.js';
import type { SqlExecutor, StoreEngine, Transaction } from './engine.js';
import { mapDriverError } from './errors.js';
import { SerialQueue, SqliteExecutor } from './sqlite.js';
import { localRunner, openConnection, StatementCache } from './sqlite-connection.js';

class SqliteReader implements StoreEngine {
  readonly kind = 'sqlite' as const;
  readonly #path: string;
  readonly #cache: StatementCache;
  readonly #db: ReturnType<typeof openConnection>;
  readonly #queue = new SerialQueue();
  #closed = false;

  constructor(path: string, busyTimeoutMs: number) {
    this.#path = path;
    this.#db = openConnection(path, false, { fileMustExist: true });
    try {
      // Every statement that would write is refused by SQLite itself (SQLITE_READONLY).
      this.#db.pragma('query_only = ON');
      this.#db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(busyTimeoutMs))}`);
    } catch (error) {
      this.#db.close();
      throw mapDriverError(error, path);
    }
    this.#cache = new StatementCache(this.#db, 64);
  }

  transaction<T>(_fn: (tx: Transaction) => Promise<T>): Promise<T> {
    return Promise.reject(new BatonError('internal', 'a write on a store opened read-only'));
  }

  read<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new BatonError('unavailable', 'the store is closed'));
    return this.#queue.run(() => this.#snapshot(fn));
  }

  async #snapshot<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    this.#cache.exec('BEGIN DEFERRED');
    const ex = new SqliteExecutor(localRunner(this.#cache), this.#path);
    try {
      return await fn(ex);
    } finally {
      ex.end();
      if (this.#db.inTransaction) this.#cache.exec('ROLLBACK');
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#queue.drain();
    this.#db.close();
  }
}

/** Open an existing SQLite store read-only (`fileMustExist`); nothing is written to it, ever. */
export function openSqliteReader(path: string, options: { busyTimeoutMs?: number } = {}): StoreEngine {
  return new SqliteReader(path, options.busyTimeoutMs ?? 5000);
}
