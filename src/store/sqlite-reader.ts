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
import type { SqlExecutor, SqlValue, StoreEngine, Transaction } from './engine.js';
import { mapDriverError } from './errors.js';
import { localRunner, openConnection, StatementCache, type StatementRunner } from './sqlite-connection.js';

/** Statements of one read, each mapped (DESIGN.md §2); a write is refused by SQLite itself. */
class ReadExecutor implements SqlExecutor {
  constructor(
    readonly runner: StatementRunner,
    readonly path: string,
  ) {}

  #call<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve) => {
      try {
        resolve(fn());
      } catch (error) {
        throw mapDriverError(error, this.path);
      }
    });
  }

  all<R extends object>(sql: string, params: readonly SqlValue[] = []): Promise<R[]> {
    return this.#call(() => this.runner.all(sql, params) as R[]);
  }

  get<R extends object>(sql: string, params: readonly SqlValue[] = []): Promise<R | undefined> {
    return this.#call(() => this.runner.get(sql, params) as R | undefined);
  }

  run(sql: string, params: readonly SqlValue[] = []): Promise<{ changes: number }> {
    return this.#call(() => ({ changes: this.runner.run(sql, params)[0] }));
  }
}

class SqliteReader implements StoreEngine {
  readonly kind = 'sqlite' as const;
  readonly #path: string;
  readonly #cache: StatementCache;
  readonly #db: ReturnType<typeof openConnection>;
  #tail: Promise<unknown> = Promise.resolve();
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
    const result = this.#tail.then(() => this.#snapshot(fn));
    this.#tail = result.catch(() => undefined);
    return result;
  }

  async #snapshot<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    this.#cache.exec('BEGIN DEFERRED');
    try {
      return await fn(new ReadExecutor(localRunner(this.#cache), this.#path));
    } finally {
      if (this.#db.inTransaction) this.#cache.exec('ROLLBACK');
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#tail;
    this.#db.close();
  }
}

/** Open an existing SQLite store read-only (`fileMustExist`); nothing is written to it, ever. */
export function openSqliteReader(path: string, options: { busyTimeoutMs?: number } = {}): StoreEngine {
  return new SqliteReader(path, options.busyTimeoutMs ?? 5000);
}
