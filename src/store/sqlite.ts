/**
 * The SQLite engine of the store port (DESIGN.md §2) over better-sqlite3, which is synchronous and
 * has one connection per handle. Everything engine-specific lives here:
 * - WAL with `synchronous = FULL`: a committed provider entry must survive power loss, and in WAL
 *   mode NORMAL may lose the last commits on power failure (docs/store.md, "Durability").
 * - One writer connection. Logical transactions run strictly one after another (`fn` is async and
 *   would otherwise interleave on the one connection), but concurrent ones share one physical
 *   `BEGIN IMMEDIATE … COMMIT` — GROUP COMMIT (docs/store.md, "Group commit"): each runs in its
 *   own SAVEPOINT, a throw rolls back only its savepoint, and every caller of the batch is told
 *   "committed" only after the one COMMIT (and its fsync) returned; a failed COMMIT rejects them all.
 * - Waiting for another process's write lock is asynchronous (short busy_timeout slices, retried
 *   with a timer up to `busyTimeoutMs`), so a waiting process keeps serving its event loop; past
 *   the budget the callers get `store_busy`.
 * - `read()` uses a second, read-only connection holding a deferred transaction: one consistent
 *   WAL snapshot that never blocks the writer.
 * - With the inline writer, WAL checkpoints run on a thread of their own between the writer's
 *   COMMITs, not inside them (sqlite-checkpointer.ts, docs/store.md "Checkpoints off the request
 *   path"): the copy and its fsync no longer stall the event loop every few dozen transactions.
 * - `writer: 'thread'` puts the write connection on a worker thread (sqlite-writer.ts, issue 16 §3):
 *   the transaction functions still run here, in the same order and batches, but BEGIN's lock wait
 *   and COMMIT's fsync happen on the thread while this event loop serves others.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { BatonError, isBatonError } from '../core/errors.js';
import type { CommitStats, RunResult, SqlExecutor, SqlValue, StoreEngine, Transaction } from './engine.js';
import { mapDriverError, unstorableText } from './errors.js';
import { NestingGuard, nestingCheckFromEnv } from './nesting-guard.js';
import {
  localRunner,
  openConnection,
  StatementCache,
  type Db,
  type StatementRunner,
} from './sqlite-connection.js';
import { WalCheckpointer, type CheckpointStats } from './sqlite-checkpointer.js';
import { openWriterConnection, type SqliteWriterMode, type WriterConnection } from './sqlite-writer.js';

export interface SqliteEngineOptions {
  /** How long a transaction waits for another process's write lock before `store_busy` (default 5000). */
  busyTimeoutMs?: number;
  /** Refuse to create the database file (CLI commands that only inspect one). */
  fileMustExist?: boolean;
  /** Prepared statements kept per connection (default 256). */
  statementCacheSize?: number;
  /** Group commit: at most this many transactions share one COMMIT (default 64; 1 disables batching). */
  maxBatchTransactions?: number;
  /** Group commit: no transaction joins a batch that has been running this long (ms, default 8). */
  maxBatchMs?: number;
  /**
   * Where the write connection lives (docs/store.md, "The writer thread"): `inline` on this thread,
   * `thread` on a worker thread, so COMMIT's fsync never blocks this event loop (default inline).
   */
  writer?: SqliteWriterMode;
  /**
   * Inline writer on a file: `thread` (default) runs WAL checkpoints on a thread of their own,
   * `sqlite` leaves them to SQLite, inside the COMMIT that crosses 1000 frames (docs/store.md).
   */
  checkpoints?: 'thread' | 'sqlite';
  /** `writer: 'thread'`: told once if the thread stops unexpectedly (the engine then refuses everything). */
  onWriterStop?: (error: BatonError) => void;
  /**
   * Refuse a transaction or read opened inside another (`internal`) instead of deadlocking;
   * default `BATON_STORE_NESTING_CHECK=1` (src/store/nesting-guard.ts says why it is off otherwise).
   */
  nestingCheck?: boolean;
}

/** What the engine has done since it was opened (group commit and checkpoints are observable through it). */
export interface SqliteEngineStats extends CommitStats {
  readonly waitMs: number;
  readonly commitMs: number;
  /** The checkpoint thread's work; absent where SQLite checkpoints by itself (docs/store.md). */
  readonly checkpoints?: CheckpointStats;
}

export interface SqliteStoreEngine extends StoreEngine {
  readonly kind: 'sqlite';
  stats(): SqliteEngineStats;
}

// At most this many COMMITs in one turn of the event loop before the next batch waits for a turn.
const MAX_COMMITS_PER_TURN = 4;
// A batch started from I/O waits at most this many more turns while transactions keep arriving.
const MAX_GATHER_TURNS = 4;

/** A promise chain: each task starts after the previous one settled, so two never interleave. */
/** One task at a time, in order (a connection's reads; the read-only engine's). */
export class SerialQueue {
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

/** A driver error as a rejected promise, mapped (DESIGN.md §2), naming the file when known. */
function rejection<T>(error: unknown, path?: string): Promise<T> {
  return new Promise<T>(() => {
    throw mapDriverError(error, path);
  });
}

/**
 * Statements on one connection, valid only while its transaction or read is open. The driver is
 * synchronous: each statement runs at once and its settled result is wrapped in a promise (the
 * port is asynchronous for PostgreSQL), with no extra closure or executor per statement.
 */
export class SqliteExecutor implements Transaction {
  readonly forUpdate = '';
  readonly answersRowid = true;
  #open = true;
  readonly #runner: StatementRunner;
  readonly #path: string | undefined;

  /** `path`: the file named in mapped errors (the read-only engine's). */
  constructor(runner: StatementRunner, path?: string) {
    this.#runner = runner;
    this.#path = path;
  }

  end(): void {
    this.#open = false;
  }

  #check(params: readonly SqlValue[]): StatementRunner {
    if (!this.#open) throw new BatonError('internal', 'statement issued after its transaction ended');
    const refused = unstorableText(params);
    if (refused !== undefined) throw refused;
    return this.#runner;
  }

  all<R extends object>(sql: string, params: readonly SqlValue[] = []): Promise<R[]> {
    try {
      return Promise.resolve(this.#check(params).all(sql, params) as R[]);
    } catch (error) {
      return rejection(error, this.#path);
    }
  }

  get<R extends object>(sql: string, params: readonly SqlValue[] = []): Promise<R | undefined> {
    try {
      return Promise.resolve(this.#check(params).get(sql, params) as R | undefined);
    } catch (error) {
      return rejection(error, this.#path);
    }
  }

  run(sql: string, params: readonly SqlValue[] = []): Promise<RunResult> {
    try {
      const [changes, lastRowid] = this.#check(params).run(sql, params);
      return Promise.resolve({ changes, lastRowid });
    } catch (error) {
      return rejection(error, this.#path);
    }
  }
}

/** The read-only connection (or, for an in-memory database, the writer's own). */
interface ReadConn {
  db: Db;
  cache: StatementCache;
  runner: StatementRunner;
  queue: SerialQueue;
}

/** A logical transaction waiting for (or running in) a batch. */
interface Queued {
  readonly fn: (tx: Transaction) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** performance.now() when it was queued. */
  readonly at: number;
}

type Outcome = { readonly value: unknown } | { readonly error: unknown };

interface Member {
  readonly q: Queued;
  readonly outcome: Outcome;
}

class SqliteEngine implements SqliteStoreEngine {
  readonly kind = 'sqlite' as const;
  readonly #writer: WriterConnection;
  readonly #writerQueue = new SerialQueue();
  readonly #reader: ReadConn;
  readonly #checkpointer: WalCheckpointer | undefined;
  readonly #busyTimeoutMs: number;
  readonly #maxBatch: number;
  readonly #maxBatchMs: number;
  // Refuses a nested transaction or read (it would deadlock), where the check is on.
  readonly #nesting: NestingGuard;
  /** Logical transactions not yet taken into a batch, oldest first. */
  readonly #pending: Queued[] = [];
  #scheduled = false;
  /** Event loop turns seen since open (counted only around COMMITs), and the turn of the last one. */
  #turn = 0;
  #committedInTurn = -1;
  /** COMMITs in the turn `#committedInTurn`: bounded, so the event loop always moves on. */
  #commitsInTurn = 0;
  #turnArmed = false;
  #closed = false;
  readonly #stats = { commits: 0, transactions: 0, rolledBack: 0, largestBatch: 0, waitMs: 0, commitMs: 0 };

  constructor(path: string, options: SqliteEngineOptions) {
    this.#busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    this.#maxBatch = Math.max(1, Math.trunc(options.maxBatchTransactions ?? 64));
    this.#maxBatchMs = Math.max(0, options.maxBatchMs ?? 8);
    this.#nesting = new NestingGuard(options.nestingCheck ?? nestingCheckFromEnv());
    const size = options.statementCacheSize ?? 256;
    this.#writer = openWriterConnection(path, {
      mode: options.writer ?? 'inline',
      busyTimeoutMs: this.#busyTimeoutMs,
      fileMustExist: options.fileMustExist === true,
      statementCacheSize: size,
      ...(options.onWriterStop !== undefined && { onStop: options.onWriterStop }),
    });
    // An in-memory database exists only on its own connection: reads share the writer's queue.
    const local = this.#writer.local;
    if (local !== undefined && (path === ':memory:' || path === '' || local.db.memory)) {
      this.#reader = { ...local, runner: localRunner(local.cache), queue: this.#writerQueue };
      this.#checkpointer = undefined;
      return;
    }
    const own = local !== undefined && options.checkpoints !== 'sqlite';
    this.#checkpointer = own ? new WalCheckpointer(path, local.db) : undefined;
    const rdb = openReadConnection(path, options, this.#writer);
    const cache = new StatementCache(rdb, size);
    this.#reader = { db: rdb, cache, runner: localRunner(cache), queue: new SerialQueue() };
  }

  stats(): SqliteEngineStats {
    const checkpoints = this.#checkpointer?.stats();
    return { ...this.#stats, ...(checkpoints !== undefined && { checkpoints }) };
  }

  commitStats(): CommitStats {
    return this.stats();
  }

  /** Checked synchronously in the caller's async context, before anything is queued. */
  #unusable(): BatonError | undefined {
    if (this.#closed) return new BatonError('unavailable', 'the store is closed');
    if (this.#nesting.inside()) {
      return new BatonError(
        'internal',
        'store transaction or read opened inside another (it would wait for itself)',
      );
    }
    return undefined;
  }

  /** Roll back the writer's open transaction (SQLite rolls back by itself after some errors). */
  #rollbackWriter(): void {
    if (this.#writer.inTransaction()) this.#writer.runner.exec('ROLLBACK');
  }

  /** Run one `fn` on a fresh executor, marked so that a nested transaction or read is refused. */
  async #runFn(runner: StatementRunner, fn: (tx: SqliteExecutor) => Promise<unknown>): Promise<Outcome> {
    const ex = new SqliteExecutor(runner);
    try {
      return { value: await this.#nesting.run(() => fn(ex)) };
    } catch (error) {
      return { error };
    } finally {
      ex.end();
    }
  }

  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    const refused = this.#unusable();
    if (refused !== undefined) return Promise.reject(refused);
    return new Promise<T>((resolve, reject) => {
      const at = performance.now();
      this.#pending.push({ fn, resolve: resolve as (value: unknown) => void, reject, at });
      if (!this.#scheduled) this.#schedule();
    });
  }

  /**
   * Queue one batch on the writer. A transaction that arrives from outside (an I/O callback: an
   * HTTP request, a timer) waits for the event loop to turn once (and a few times more while
   * others keep arriving: #gather), so that the others queue theirs and share this batch's COMMIT
   * instead of each paying an fsync of its own. A transaction queued by a caller that the last COMMIT just resolved, in the same turn,
   * starts at once: the other callers that COMMIT resolved run in the same turn too and join the
   * batch while it runs, and a lone caller does not pay for a turn of the event loop per
   * transaction.
   */
  #schedule(): void {
    this.#scheduled = true;
    // Callers that go straight on from one COMMIT to their next transaction would otherwise keep
    // the work in promise callbacks forever: timers, I/O and worker messages would never run.
    const sameTurn = this.#turn === this.#committedInTurn && this.#commitsInTurn < MAX_COMMITS_PER_TURN;
    void this.#writerQueue.run(async () => {
      // The WAL due to restart: this batch waits for the checkpoint thread, the event loop does not.
      const hold = this.#checkpointer?.beforeBatch();
      if (hold !== undefined) await hold;
      if (!sameTurn) await this.#gather();
      try {
        await this.#batch(); // never throws
      } finally {
        this.#scheduled = false;
        if (this.#pending.length > 0) this.#schedule();
      }
    });
  }

  /**
   * Let the event loop turn before a batch that I/O started, and again while the last turn brought
   * more transactions (at most MAX_GATHER_TURNS more): HTTP requests arrive over several turns,
   * and each one that joins saves an fsync (measured over HTTP at 16 executors: 1.8 → 3.0
   * transactions per COMMIT). A lone caller, whose turn brings nobody, waits one turn as before.
   */
  async #gather(): Promise<void> {
    let seen = this.#pending.length;
    await nextTurn();
    for (let turns = 0; turns < MAX_GATHER_TURNS && this.#pending.length > seen; turns++) {
      seen = this.#pending.length;
      await nextTurn();
    }
  }

  /** Take the next transactions off the queue while the batch is within its bounds. */
  #next(members: number, started: number): Queued | undefined {
    if (members >= this.#maxBatch) return undefined;
    if (members > 0 && performance.now() - started >= this.#maxBatchMs) return undefined;
    return this.#pending.shift();
  }

  /**
   * One physical transaction carrying one or more logical ones, run strictly one after another.
   * A failure of the first one rolls back the whole (still empty) physical transaction; a failure
   * of a later one rolls back its savepoint only. Successful ones are resolved only after COMMIT.
   * A refused one is told only after the COMMIT too: its decision may rest on what earlier
   * members wrote, so if that COMMIT fails it gets the COMMIT's error like everyone else.
   * Never throws: every member taken off the queue is settled exactly once.
   */
  async #batch(): Promise<void> {
    const done: Member[] = [];
    let current: Queued | undefined;
    let open = false;
    let started = performance.now();
    try {
      for (;;) {
        current = this.#next(done.length, started);
        if (current === undefined) break;
        if (!open) {
          await this.#writer.begin(this.#busyTimeoutMs);
          open = true;
          if (done.length === 0) started = performance.now(); // the bound counts work, not waiting
        }
        const result = await this.#member(
          current,
          done.some((d) => 'value' in d.outcome),
        );
        if (result === 'alone')
          open = false; // rolled back and already told
        else done.push({ q: current, outcome: result });
      }
      if (open) await this.#commit(done);
    } catch (error) {
      // The physical transaction is gone (SQLite rolled it back after an I/O error or a full
      // disk) or could not start (another process held the lock past the budget): nothing of
      // this batch was committed, so nobody in it is told otherwise.
      const rollback = this.#rollbackQuietly();
      const waiting = isBatonError(error, 'store_busy') ? this.#pending.splice(0) : [];
      for (const q of [...done.map((d) => d.q), ...(current ? [current] : []), ...waiting]) {
        q.reject(rollback ?? error);
      }
    }
  }

  /** Roll back whatever is open; an error doing so is returned (the batch's callers get it). */
  #rollbackQuietly(): unknown {
    try {
      this.#rollbackWriter();
      return undefined;
    } catch (error) {
      return error;
    }
  }

  /**
   * Run one member. `nested`: earlier members' work must survive a failure of this one, so it
   * runs in a savepoint. Returns its outcome, or 'alone' when it failed as the only member of the
   * physical transaction (rolled back and rejected at once: it saw committed state only). Throws
   * when the physical transaction did not survive it.
   */
  async #member(q: Queued, nested: boolean): Promise<Outcome | 'alone'> {
    const { runner } = this.#writer;
    this.#stats.waitMs += performance.now() - q.at;
    if (nested) runner.exec('SAVEPOINT batch_member');
    const outcome = await this.#runFn(runner, q.fn);
    if ('error' in outcome) this.#stats.rolledBack += 1;
    if (!this.#writer.inTransaction()) {
      if ('error' in outcome) q.reject(outcome.error);
      else q.reject(new BatonError('internal', 'a transaction function ended its own transaction'));
      throw new BatonError(
        'unavailable',
        'the transaction batch was rolled back before its COMMIT (an I/O error or a full disk): nothing in it was committed',
        {},
        { cause: 'error' in outcome ? outcome.error : undefined },
      );
    }
    if ('value' in outcome) {
      if (nested) runner.exec('RELEASE batch_member');
      return outcome;
    }
    if (nested) {
      runner.exec('ROLLBACK TO batch_member');
      runner.exec('RELEASE batch_member');
      return outcome;
    }
    runner.exec('ROLLBACK');
    q.reject(outcome.error);
    return 'alone';
  }

  /**
   * COMMIT once for the whole batch, then tell every member; a failed COMMIT fails them all. With
   * the writer thread the fsync happens there: this event loop serves requests meanwhile, and the
   * transactions they queue wait for the next batch (the writer is still in this one).
   */
  async #commit(done: readonly Member[]): Promise<void> {
    const t0 = performance.now();
    try {
      await this.#writer.commit();
      this.#stats.commitMs += performance.now() - t0;
    } catch (error) {
      const rollback = this.#rollbackQuietly();
      for (const d of done) d.q.reject(rollback ?? error);
      return;
    }
    this.#noteTurn();
    this.#checkpointer?.afterCommit();
    const committed = done.filter((d) => 'value' in d.outcome).length;
    this.#stats.commits += 1;
    this.#stats.transactions += committed;
    this.#stats.largestBatch = Math.max(this.#stats.largestBatch, committed);
    for (const { q, outcome } of done) {
      if ('value' in outcome) q.resolve(outcome.value);
      else q.reject(outcome.error);
    }
  }

  /** Remember that a COMMIT happened in this turn of the event loop; the next turn moves on. */
  #noteTurn(): void {
    this.#commitsInTurn = this.#committedInTurn === this.#turn ? this.#commitsInTurn + 1 : 1;
    this.#committedInTurn = this.#turn;
    if (this.#turnArmed) return;
    this.#turnArmed = true;
    setImmediate(() => {
      this.#turnArmed = false;
      this.#turn += 1;
    });
  }

  read<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const refused = this.#unusable();
    if (refused !== undefined) return Promise.reject(refused);
    const conn = this.#reader;
    return conn.queue.run(async () => {
      conn.cache.exec('BEGIN DEFERRED');
      const outcome = await this.#runFn(conn.runner, fn);
      try {
        // A read has nothing to commit.
        if (conn.db.inTransaction) conn.cache.exec('ROLLBACK');
      } catch (error) {
        if ('value' in outcome) throw error;
      }
      if ('error' in outcome) throw outcome.error;
      return outcome.value as T;
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // Transactions already queued still run; each batch may queue the next one.
    while (this.#scheduled || this.#pending.length > 0) await this.#writerQueue.drain();
    await this.#reader.queue.drain();
    // Before the writer: the last connection to close checkpoints and removes the WAL.
    await this.#checkpointer?.close();
    if (this.#reader.db !== this.#writer.local?.db) this.#reader.db.close();
    await this.#writer.close();
  }
}

/** The read-only connection; when it cannot open, the writer (maybe a thread) is closed again. */
function openReadConnection(path: string, options: SqliteEngineOptions, writer: WriterConnection): Db {
  try {
    return openConnection(path, true, options);
  } catch (error) {
    void writer.close();
    throw error;
  }
}

/** Open (creating unless `fileMustExist`) a SQLite store at `path`; `:memory:` is allowed for tests. */
export function openSqliteEngine(path: string, options: SqliteEngineOptions = {}): SqliteStoreEngine {
  return new SqliteEngine(path, options);
}
