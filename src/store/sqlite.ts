/**
 * The SQLite engine of the store port (DESIGN.md §2) over better-sqlite3, which is synchronous and
 * has one connection per handle. Everything engine-specific lives here:
 * - WAL with `synchronous = FULL`: a committed provider entry must survive power loss, and in WAL
 *   mode NORMAL may lose the last commits on power failure (docs/store.md, "Durability").
 * - One writer connection; transactions are `BEGIN IMMEDIATE` … `COMMIT`, serialized in-process by
 *   a promise queue because `fn` is async and would otherwise interleave on the one connection.
 * - Waiting for another process's write lock is asynchronous (short busy_timeout slices, retried
 *   with a timer up to `busyTimeoutMs`), so a waiting process keeps serving its event loop; past
 *   the budget the caller gets `store_busy`.
 * - `read()` uses a second, read-only connection holding a deferred transaction: one consistent
 *   WAL snapshot that never blocks the writer.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { BatonError } from '../core/errors.js';
import type { SqlExecutor, SqlValue, StoreEngine, Transaction } from './engine.js';
import { isBusyDriverError, mapDriverError } from './errors.js';

export interface SqliteEngineOptions {
  /** How long a transaction waits for another process's write lock before `store_busy` (default 5000). */
  busyTimeoutMs?: number;
  /** Refuse to create the database file (CLI commands that only inspect one). */
  fileMustExist?: boolean;
  /** Prepared statements kept per connection (default 256). */
  statementCacheSize?: number;
}

type Db = Database.Database;
type Statement = Database.Statement<unknown[], unknown>;

// One synchronous busy wait never blocks the event loop longer than this.
const BUSY_SLICE_MS = 20;

/** Prepared statements by SQL text, least recently used evicted first (Map keeps insertion order). */
class StatementCache {
  readonly #db: Db;
  readonly #max: number;
  readonly #map = new Map<string, Statement>();

  constructor(db: Db, max: number) {
    this.#db = db;
    this.#max = max;
  }

  get(sql: string): Statement {
    let stmt = this.#map.get(sql);
    if (stmt !== undefined) {
      this.#map.delete(sql);
    } else {
      stmt = this.#db.prepare(sql);
      const oldest = this.#map.keys().next();
      if (this.#map.size >= this.#max && oldest.done !== true) this.#map.delete(oldest.value);
    }
    this.#map.set(sql, stmt);
    return stmt;
  }
}

/** A promise chain: each task starts after the previous one settled, so two never interleave. */
class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(task);
    this.#tail = result.catch(() => undefined);
    return result;
  }

  drain(): Promise<unknown> {
    return this.#tail;
  }
}

/** A synchronous driver call as a promise, with its error mapped (DESIGN.md §2). */
function settle<T>(fn: () => T): Promise<T> {
  return new Promise<T>((resolve) => resolve(call(fn)));
}

function call<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw mapDriverError(error);
  }
}

/** Statements on one connection, valid only while its transaction or read is open. */
class SqliteExecutor implements Transaction {
  readonly forUpdate = '';
  #open = true;
  readonly #cache: StatementCache;

  constructor(cache: StatementCache) {
    this.#cache = cache;
  }

  end(): void {
    this.#open = false;
  }

  #stmt(sql: string): Statement {
    if (!this.#open) throw new BatonError('internal', 'statement issued after its transaction ended');
    return this.#cache.get(sql);
  }

  all<R extends object>(sql: string, params: readonly SqlValue[] = []): Promise<R[]> {
    return settle(() => this.#stmt(sql).all(...params) as R[]);
  }

  get<R extends object>(sql: string, params: readonly SqlValue[] = []): Promise<R | undefined> {
    return settle(() => this.#stmt(sql).get(...params) as R | undefined);
  }

  run(sql: string, params: readonly SqlValue[] = []): Promise<{ changes: number }> {
    return settle(() => ({ changes: this.#stmt(sql).run(...params).changes }));
  }
}

interface Conn {
  db: Db;
  cache: StatementCache;
  queue: SerialQueue;
}

function openConnection(path: string, readonly: boolean, options: SqliteEngineOptions): Db {
  try {
    return new Database(path, {
      readonly,
      fileMustExist: readonly || options.fileMustExist === true,
      timeout: readonly ? (options.busyTimeoutMs ?? 5000) : BUSY_SLICE_MS,
    });
  } catch (cause) {
    if (isBusyDriverError(cause)) throw mapDriverError(cause);
    throw new BatonError('unavailable', 'cannot open the SQLite database', { path }, { cause });
  }
}

function configureWriter(db: Db): void {
  call(() => {
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal' && mode !== 'memory') {
      throw new BatonError('unavailable', `SQLite refused WAL mode (journal_mode=${String(mode)})`);
    }
    // FULL: WAL is fsynced at every commit, so a commit survives power loss (docs/store.md).
    db.pragma('synchronous = FULL');
    // macOS: a plain fsync does not flush the drive's cache; F_FULLFSYNC does (no-op elsewhere).
    db.pragma('fullfsync = ON');
    db.pragma('foreign_keys = ON');
  });
}

class SqliteEngine implements StoreEngine {
  readonly kind = 'sqlite' as const;
  readonly #writer: Conn;
  readonly #reader: Conn;
  readonly #busyTimeoutMs: number;
  // Marks the async context of a running transaction, to refuse a nested one (it would deadlock).
  readonly #inside = new AsyncLocalStorage<{ active: boolean }>();
  #closed = false;

  constructor(path: string, options: SqliteEngineOptions) {
    this.#busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    const size = options.statementCacheSize ?? 256;
    const db = openConnection(path, false, options);
    try {
      configureWriter(db);
    } catch (error) {
      db.close();
      throw error;
    }
    this.#writer = { db, cache: new StatementCache(db, size), queue: new SerialQueue() };
    // An in-memory database exists only on its own connection: reads share the writer's queue.
    const memory = path === ':memory:' || path === '' || db.memory;
    const rdb = memory ? db : openConnection(path, true, options);
    this.#reader = memory
      ? this.#writer
      : { db: rdb, cache: new StatementCache(rdb, size), queue: new SerialQueue() };
  }

  /** Checked synchronously in the caller's async context, before anything is queued. */
  #unusable(): BatonError | undefined {
    if (this.#closed) return new BatonError('unavailable', 'the store is closed');
    if (this.#inside.getStore()?.active === true) {
      return new BatonError(
        'internal',
        'store transaction or read opened inside another (it would wait for itself)',
      );
    }
    return undefined;
  }

  async #beginImmediate(): Promise<void> {
    const begin = this.#writer.cache.get('BEGIN IMMEDIATE');
    const deadline = performance.now() + this.#busyTimeoutMs;
    for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
      try {
        begin.run();
        return;
      } catch (error) {
        const left = deadline - performance.now();
        if (!isBusyDriverError(error) || left <= 0) throw mapDriverError(error);
        await sleep(Math.min(delay, left));
      }
    }
  }

  #rollback(conn: Conn): void {
    // SQLite rolls back by itself after some errors (SQLITE_FULL, SQLITE_IOERR…).
    if (conn.db.inTransaction) call(() => conn.cache.get('ROLLBACK').run());
  }

  async #scoped<T>(
    conn: Conn,
    begin: () => Promise<void>,
    fn: (ex: SqliteExecutor) => Promise<T>,
  ): Promise<T> {
    await begin();
    const ex = new SqliteExecutor(conn.cache);
    const marker = { active: true };
    let result: T;
    try {
      result = await this.#inside.run(marker, () => fn(ex));
    } catch (error) {
      marker.active = false;
      ex.end();
      this.#rollback(conn);
      throw error;
    }
    marker.active = false;
    ex.end();
    try {
      call(() => conn.cache.get('COMMIT').run());
    } catch (error) {
      this.#rollback(conn);
      throw error;
    }
    return result;
  }

  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    const refused = this.#unusable();
    if (refused !== undefined) return Promise.reject(refused);
    return this.#writer.queue.run(() => this.#scoped(this.#writer, () => this.#beginImmediate(), fn));
  }

  read<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const refused = this.#unusable();
    if (refused !== undefined) return Promise.reject(refused);
    const begin = (): Promise<void> => settle(() => void this.#reader.cache.get('BEGIN DEFERRED').run());
    return this.#reader.queue.run(() => this.#scoped(this.#reader, begin, fn));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([this.#writer.queue.drain(), this.#reader.queue.drain()]);
    if (this.#reader !== this.#writer) this.#reader.db.close();
    this.#writer.db.close();
  }
}

/** Open (creating unless `fileMustExist`) a SQLite store at `path`; `:memory:` is allowed for tests. */
export function openSqliteEngine(path: string, options: SqliteEngineOptions = {}): StoreEngine {
  return new SqliteEngine(path, options);
}
