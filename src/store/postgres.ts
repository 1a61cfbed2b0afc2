/**
 * The PostgreSQL engine of the store port (DESIGN.md §2, §10) over `pg` with a pool: several
 * `baton serve` processes share one database, and correctness comes from the database (row locks,
 * unique indexes), never from process memory (docs/store.md, "PostgreSQL"). Engine-specific here:
 * - Write transactions are READ COMMITTED by default: every row a decision depends on is locked
 *   (`tx.forUpdate`, or the UPDATE itself), so writers queue on row locks and each statement after
 *   a wait sees the latest commit; uniqueness is the unique indexes' job (DESIGN.md §10).
 *   `isolation: 'serializable'` is the option for callers that cannot be audited for that.
 * - A deadlock (40P01) or serialization failure (40001) re-runs the whole transaction function, a
 *   bounded number of times with jittered backoff, then `store_busy`. `fn` may therefore run more
 *   than once: it must act only through `tx`.
 * - `synchronous_commit = on` in every write transaction whatever the server default: a commit
 *   that returned is in the WAL on disk, as SQLite's `synchronous = FULL` guarantees.
 * - `lock_timeout` = `busyTimeoutMs`: a statement waiting for a row lock gives up with
 *   `store_busy`, as SQLite's writer does.
 * - A failed statement aborts a PostgreSQL transaction (SQLite only undoes the statement): the
 *   engine refuses to go on or commit after one, so the difference is loud, never silent.
 * - `read()` is `REPEATABLE READ READ ONLY`: one snapshot for every statement of `fn`.
 * - Migrations run under a transaction-level advisory lock (`migrationTransaction`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { BatonError, isBatonError } from '../core/errors.js';
import type {
  DeferOptions,
  DeferredWrite,
  RunResult,
  SqlExecutor,
  SqlValue,
  StoreEngine,
  Transaction,
} from './engine.js';
import { mapDriverError, unstorableText } from './errors.js';
import { NestingGuard, nestingCheckFromEnv } from './nesting-guard.js';
import {
  decodeBatch,
  DEFERRED_MISMATCH,
  encodeBatch,
  type DeferredStatement,
  type Final,
  type StaticRegistry,
} from './postgres-batch.js';
import { STATIC_STATEMENTS } from './migrations/022_static_transition_writes.js';
import { STATIC_STATEMENTS_024 } from './migrations/024_one_stripe_write.js';
import { OpenReads } from './postgres-reads.js';
import { engineTypes, StatementTexts } from './postgres-sql.js';

/** How long an unused pooled connection stays open unless told otherwise (`idleTimeoutMs`). */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

export interface PostgresEngineOptions {
  /** Pooled connections (default 10). A transaction or read holds one until it ends. */
  maxConnections?: number;
  /** How long to wait for a connection, new or from a full pool, before `unavailable` (default 5000). */
  connectionTimeoutMs?: number;
  /**
   * How long an unused pooled connection stays open, in ms (default 60000; 0: until `close`). A new
   * connection pays PostgreSQL's first-use work again — its backend compiles the transition
   * functions and plans their statements — so a short timeout (`pg`'s own default is 10000) makes
   * the first transactions after every pause slow (docs/store.md, "PostgreSQL").
   */
  idleTimeoutMs?: number;
  /**
   * How long a statement of a transaction or read may go unanswered, in ms, before the engine
   * gives up on its connection (default 30000; 0: no limit). A server or network that vanished
   * without closing the socket would otherwise hang the request, and hold its pooled connection,
   * forever. On that timeout the connection is destroyed, never returned to the pool, and the
   * caller gets `unavailable`; after a COMMIT was sent, saying its outcome is unknown. Migrations
   * have no limit (one may wait minutes for another server's, or run long over a large table).
   */
  queryTimeoutMs?: number;
  /** How long a statement waits for a lock before `store_busy` (`lock_timeout`, default 5000). */
  busyTimeoutMs?: number;
  /** Runs of a transaction that keeps meeting serialization failures or deadlocks (default 10). */
  maxAttempts?: number;
  /** How long a migration waits for another server's migration to finish (default 300000). */
  migrationLockTimeoutMs?: number;
  /**
   * Isolation of write transactions (default 'read committed'; docs/store.md, "PostgreSQL").
   * 'read committed': a transaction waits for the row locks it needs (`tx.forUpdate`, UPDATE) and
   * then sees the latest commit, so writers of one row (an authority budget) queue instead of
   * failing; correct for callers that lock every row a write depends on, as the port requires.
   * 'serializable': also correct for a caller that forgets a lock, but every pair of concurrent
   * writers of one row conflicts, and the loser re-runs (measured: ~8 runs per append at 100
   * concurrent appends, 4 in 10 ending `store_busy`).
   */
  isolation?: 'read committed' | 'serializable';
  /** Told of an error on an idle pooled connection (the pool has already dropped it). */
  onIdleError?: (error: Error) => void;
  /** As SqliteEngineOptions.nestingCheck: refuse a nested transaction or read (`internal`). */
  nestingCheck?: boolean;
}

/**
 * The key of the advisory lock that migrations take (pg_advisory_xact_lock): the bytes of
 * "batonmig". Advisory locks are per database, so only servers sharing one database wait.
 */
export const MIGRATION_LOCK_KEY = 0x626174_6f6e6d6967n;

// SQLSTATEs after which the transaction was rolled back by the server and may simply run again.
const RETRY_CODES: ReadonlySet<string> = new Set(['40001', '40P01']);
// The connection, not the statement, failed (class 08, shutdown, too many connections).
const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);

const BACKOFF_BASE_MS = 4;
const BACKOFF_CAP_MS = 250;

function sqlState(error: unknown): string | undefined {
  return error instanceof pg.DatabaseError ? error.code : undefined;
}

const isRetryable = (error: unknown): boolean => RETRY_CODES.has(sqlState(error) ?? '');

/** Default `queryTimeoutMs`. */
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

/** How long the TCP keepalive waits on an idle socket before its first probe (ms). */
const KEEPALIVE_DELAY_MS = 10_000;

/** `pg`'s own error when a statement went unanswered past its `query_timeout`. */
const isQueryTimeout = (error: unknown): boolean =>
  error instanceof Error && error.message === 'Query read timeout';

/** A raw `pg` error as a Baton error where Baton has a meaning for it (DESIGN.md §2). */
function mapPgError(error: unknown): unknown {
  if (isBatonError(error)) return error;
  if (isQueryTimeout(error)) {
    return new BatonError(
      'unavailable',
      'PostgreSQL did not answer within the query timeout (queryTimeoutMs): the connection was closed; is the server or the network to it down?',
      {},
      { cause: error },
    );
  }
  const code = sqlState(error);
  if (code === undefined || UNAVAILABLE_CODES.has(code)) {
    // Not a server answer to the statement: the connection broke (or never came up).
    return new BatonError('unavailable', 'the PostgreSQL connection failed', {}, { cause: error });
  }
  return mapDriverError(error);
}

/** Full jitter: a random wait up to an exponentially growing ceiling, so retries spread out. */
function backoffMs(attempt: number): number {
  return Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt);
}

/**
 * Thrown inside one attempt when the server rolled the transaction back and it may run again;
 * `stepwise`: because a deferred statement met another state (BTN10), so the next run sends
 * each statement as it comes (`Transaction.deferrable` false).
 */
class RetryableAbort extends Error {
  constructor(
    readonly driverError: unknown,
    readonly stepwise = false,
  ) {
    super('retryable transaction abort');
  }
}

/** What a statement answers: a plain one's result, or a batched one's (postgres-batch.ts). */
interface Answer {
  readonly rows: unknown[];
  readonly rowCount: number | null;
}

const BATCH_SQL = 'SELECT baton_batch(?) AS out';
/** Migration 022's: the same call, the hot statements by key as static SQL (postgres-batch.ts). */
const BATCH_STATIC_SQL = 'SELECT baton_batch_static(?) AS out';

/** Refusals raised inside `baton_batch` by the functions it ran (evidence-log.ts words them so). */
const BATCH_REFUSALS: Readonly<Record<string, readonly [string, string]>> = {
  BTN01: ['store_corrupt', 'the evidence chain already has events at these positions'],
  BTN02: ['store_corrupt', 'the evidence head moved during an append'],
  [DEFERRED_MISMATCH]: ['conflict', 'a deferred statement met another state; the transaction runs again'],
  // Migration 022's baton_batch_static met a key it does not hold: a mismatch between this build and the schema.
  BTN11: ['internal', 'baton_batch_static does not know a static statement this server sent'],
};

function mapBatchError(error: unknown): unknown {
  const known = BATCH_REFUSALS[sqlState(error) ?? ''];
  if (known === undefined) return mapPgError(error);
  return new BatonError(known[0] as 'conflict' | 'internal', known[1], {}, { cause: error });
}

/** One pooled connection for one transaction; remembers whether the connection itself failed. */
class Session {
  /** Set when the connection (not a statement) failed: it is closed, never reused. */
  broken: unknown;
  /** Set when a read-only snapshot ended without its COMMIT (postgres-reads.ts). */
  leaveOpen = false;
  #sent = false;
  readonly client: pg.PoolClient;
  /** `query_timeout` of each statement (0: none); on it, `pg` destroys the pipelined connection. */
  readonly #timeoutMs: number;
  readonly #onError = (error: Error): void => void (this.broken ??= error);

  constructor(client: pg.PoolClient, timeoutMs: number) {
    this.client = client;
    this.#timeoutMs = timeoutMs;
    // Without a listener, a connection error while the client is checked out would crash the process.
    client.on('error', this.#onError);
  }

  async query(
    statement: string | { readonly text: string; readonly name?: string },
    values?: SqlValue[],
  ): Promise<pg.QueryResult> {
    this.#sent = true;
    const config: pg.QueryConfig & { query_timeout?: number } =
      typeof statement === 'string'
        ? { text: statement, values }
        : { text: statement.text, name: statement.name, values };
    if (this.#timeoutMs > 0) config.query_timeout = this.#timeoutMs;
    try {
      return await this.client.query(config);
    } catch (error) {
      if (sqlState(error) === undefined) this.broken ??= error;
      throw error;
    }
  }

  /** Whether nothing was sent on the connection in this session. */
  get unused(): boolean {
    return !this.#sent;
  }

  /** Roll back; a failure to (a lost connection) only marks the session broken: the server aborts it. */
  async rollback(): Promise<void> {
    await this.query('ROLLBACK').catch((error: unknown) => void (this.broken ??= error));
  }

  /**
   * Run `send` with the socket corked: every message it writes leaves in one `writev`. On this
   * kind of machine a loopback write costs ~0.1 ms of CPU (docs/scale.md), so a BEGIN sent alone
   * costs as much as a statement.
   */
  corked<T>(send: () => T): T {
    const stream = this.client.connection.stream;
    stream.cork();
    try {
      return send();
    } finally {
      stream.uncork();
    }
  }

  release(): void {
    this.client.removeListener('error', this.#onError);
    this.client.release(this.broken === undefined ? undefined : true);
  }
}

/** A statement that only reads: harmless had it run outside the transaction (see `#send`). */
const READ_ONLY = /^\s*SELECT\b/i;

/**
 * Statements on one pooled connection, valid only while its transaction is open. The transaction
 * starts lazily: its BEGIN leaves with the first statement, in one write and one round trip (the
 * connection is in `pg`'s pipeline mode), when that statement only reads. A write never leaves
 * before the server has accepted the BEGIN: had the BEGIN failed, it would run on its own.
 */
class PgExecutor implements Transaction {
  readonly forUpdate = ' FOR UPDATE';
  #open = true;
  /** The first statement failure: the server aborted the transaction there. */
  failure: unknown;
  readonly #session: Session;
  readonly #texts: StatementTexts;
  /** The BEGIN (and settings) not sent yet; undefined once sent. */
  #begin: string | undefined;
  /** Settles when the server has answered the BEGIN (set when the BEGIN is sent). */
  #began: Promise<unknown> = Promise.resolve();
  #beginAccepted = false;

  readonly serverFunctions: boolean;
  readonly deferrable: boolean;
  /** Migration 022's (or 024's) static statements: hot deferred ones go by key (postgres-batch.ts). */
  readonly #statics: StaticRegistry | undefined;
  /** Statements deferred since the last one sent (postgres-batch.ts). */
  #deferred: DeferredStatement[] = [];

  constructor(session: Session, texts: StatementTexts, begin: string, schema: Schema, deferrable: boolean) {
    this.#session = session;
    this.#texts = texts;
    this.#begin = begin;
    this.serverFunctions = schema.functions;
    this.deferrable = deferrable;
    this.#statics = schema.statics;
  }

  #usable(): void {
    if (!this.#open) throw new BatonError('internal', 'statement issued after its transaction ended');
    if (this.failure !== undefined) {
      throw new BatonError(
        'internal',
        'statement issued after a failed one: PostgreSQL aborts the whole transaction on a failure (use ON CONFLICT DO NOTHING for an expected conflict)',
        {},
        { cause: this.failure },
      );
    }
  }

  sendsStatic(sql: string): boolean {
    return this.#statics?.has(sql) === true;
  }

  defer(sql: string, params: readonly SqlValue[], options: DeferOptions): DeferredWrite {
    if (!this.deferrable)
      throw new BatonError('internal', 'defer() on a transaction that sends each statement');
    this.#usable();
    const refused = unstorableText(params);
    if (refused !== undefined) throw refused; // before anything is queued: the transaction stays usable
    let item: DeferredStatement = { sql, params: [...params], options };
    this.#deferred.push(item);
    return {
      amend: (next, text) => {
        const at = this.#deferred.indexOf(item);
        if (at < 0) return false; // it has left (or the transaction failed): nothing to amend
        const bad = unstorableText(next);
        if (bad !== undefined) throw bad;
        item = { sql: text ?? item.sql, params: [...next], options };
        this.#deferred[at] = item;
        return true;
      },
    };
  }

  /** Send what is deferred (before COMMIT): one `baton_batch` call, or nothing. */
  async flush(): Promise<void> {
    if (this.#deferred.length === 0) return;
    this.#usable();
    await this.#batch(undefined);
  }

  /** The deferred statements, then `final` if any, as one call; answers `final`. */
  async #batch(final: Final | undefined): Promise<Answer> {
    const deferred = this.#deferred;
    this.#deferred = [];
    const stmt = this.#texts.get(this.#statics !== undefined ? BATCH_STATIC_SQL : BATCH_SQL, 1);
    const arg = encodeBatch(deferred, final, this.#statics);
    let result: pg.QueryResult;
    try {
      // It writes: never sent with the BEGIN before the server accepted it (see #send).
      result = await this.#send(false, () => this.#session.query(stmt, [arg]));
    } catch (error) {
      this.failure ??= error;
      throw mapBatchError(error);
    }
    const row = result.rows[0] as { out?: string } | undefined;
    const out = decodeBatch(row?.out, deferred.length + (final === undefined ? 0 : 1));
    try {
      deferred.forEach((d, i) => {
        const r = out[i];
        d.options.rows?.(Array.isArray(r) ? r : []);
      });
    } catch (error) {
      // Baton refused what the database answered (an evidence hash): never committed, whatever `fn` does.
      this.failure ??= error;
      throw error;
    }
    const last = final === undefined ? 0 : out[deferred.length];
    return Array.isArray(last) ? { rows: last, rowCount: last.length } : { rows: [], rowCount: last ?? 0 };
  }

  /**
   * Whether what is still deferred may leave in one write with the COMMIT: the BEGIN went out and
   * no deferred statement has an answer Baton must check before committing (`options.rows`).
   */
  get commitsWithDeferred(): boolean {
    return (
      this.#begin === undefined &&
      this.#deferred.length > 0 &&
      this.#deferred.every((d) => d.options.rows === undefined)
    );
  }

  /**
   * The deferred statements' `baton_batch` call and the COMMIT, in one write (the connection is
   * pipelined): a failed batch aborts the transaction, so the server answers that COMMIT with
   * ROLLBACK and nothing of it is committed. Records the batch's failure, if any, as `failure`,
   * and answers the COMMIT's outcome.
   */
  async commitDeferred(): Promise<{ commit: PromiseSettledResult<pg.QueryResult> }> {
    const deferred = this.#deferred;
    this.#deferred = [];
    const stmt = this.#texts.get(this.#statics !== undefined ? BATCH_STATIC_SQL : BATCH_SQL, 1);
    const arg = encodeBatch(deferred, undefined, this.#statics);
    // A write never leaves before the server accepted the BEGIN (see #send).
    if (!this.#beginAccepted) await this.#began;
    let batch: Promise<pg.QueryResult> | undefined;
    const commit = this.#session.corked(() => {
      batch = this.#session.query(stmt, [arg]);
      return this.#session.query('COMMIT');
    });
    const [b, c] = await Promise.allSettled([batch, commit]);
    // Its answer is not read: no deferred statement here wants one (`commitsWithDeferred`), and
    // each expected row count was enforced inside the call, before the COMMIT (BTN10).
    if (b.status === 'rejected') this.failure ??= b.reason;
    return { commit: c };
  }

  /** Whether the BEGIN went out: if not, there is nothing to commit or roll back. */
  get started(): boolean {
    return this.#begin === undefined;
  }

  end(): void {
    this.#open = false;
  }

  async #query(sql: string, params: readonly SqlValue[], rows: boolean): Promise<Answer> {
    this.#usable();
    const refused = unstorableText(params);
    if (refused !== undefined) throw refused; // before sending: the transaction stays usable
    // Deferred statements leave with this one, in one call, in the order they were issued.
    if (this.#deferred.length > 0) return this.#batch({ sql, params, rows });
    const stmt = this.#texts.get(sql, params.length);
    try {
      return await this.#send(READ_ONLY.test(sql), () =>
        this.#session.query(stmt, params.length === 0 ? undefined : [...params]),
      );
    } catch (error) {
      this.failure ??= error;
      throw mapPgError(error);
    }
  }

  /**
   * The first statement sends the BEGIN, and goes out with it when it only reads. Every other
   * statement waits until the server has accepted the BEGIN, so that statements run in the order
   * they were issued (a read issued after a write must see it) and no write runs outside the
   * transaction.
   */
  async #send(reads: boolean, run: () => Promise<pg.QueryResult>): Promise<pg.QueryResult> {
    const begin = this.#begin;
    if (begin === undefined) {
      if (!this.#beginAccepted) await this.#began;
      return run();
    }
    let pending: Promise<pg.QueryResult> | undefined;
    const began = this.#session.corked(() => {
      const sent = this.#session.query(begin);
      if (reads) pending = run();
      return sent;
    });
    // Set before anything can await: a concurrent statement must wait for this BEGIN.
    this.#began = began;
    this.#begin = undefined;
    began.then(
      () => void (this.#beginAccepted = true),
      () => undefined, // whoever awaits `#began` sees the failure
    );
    if (pending === undefined) {
      await began;
      return run();
    }
    const [b, result] = await Promise.allSettled([began, pending]);
    if (b.status === 'rejected') throw b.reason;
    if (result.status === 'rejected') throw result.reason;
    return result.value;
  }

  async all<R extends object>(sql: string, params: readonly SqlValue[] = []): Promise<R[]> {
    return (await this.#query(sql, params, true)).rows as R[];
  }

  async get<R extends object>(sql: string, params: readonly SqlValue[] = []): Promise<R | undefined> {
    return (await this.#query(sql, params, true)).rows[0] as R | undefined;
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<RunResult> {
    return { changes: (await this.#query(sql, params, false)).rowCount ?? 0 };
  }
}

/** What the schema provides, as `migrate` told the engine (`schemaApplied`). */
interface Schema {
  /** Migration 012's functions (`Transaction.serverFunctions`). */
  readonly functions: boolean;
  /** Migration 016's `baton_batch`: write transactions may defer statements. */
  readonly batch: boolean;
  /** `baton_batch_static`'s statements (migration 022, one more after 024), else undefined. */
  readonly statics: StaticRegistry | undefined;
}

/** How one kind of transaction starts: its BEGIN and settings, sent as one round trip. */
interface Mode {
  readonly begin: string;
  /** Whether a serialization failure or deadlock re-runs `fn`. */
  readonly retry: boolean;
  /** Whether its statements may be deferred (write transactions after migration 016). */
  readonly defers?: boolean;
  /** A read-only snapshot: its COMMIT may leave with the connection's next BEGIN (postgres-reads.ts). */
  readonly lazyCommit?: boolean;
  /** Each statement's `query_timeout` in ms (0: none). */
  readonly timeoutMs: number;
}

class PostgresEngine implements StoreEngine {
  readonly kind = 'postgres' as const;
  readonly #pool: pg.Pool;
  readonly #texts = new StatementTexts(512);
  readonly #maxAttempts: number;
  /** The pool's size, and how long a caller waits for one of its connections. */
  readonly #max: number;
  readonly #connectWaitMs: number;
  readonly #write: Mode;
  readonly #read: Mode;
  readonly #migration: Mode;
  // Refuses a nested transaction or read as SQLite does, where the check is on.
  readonly #nesting: NestingGuard;
  readonly #running = new Set<Promise<unknown>>();
  readonly #reads = new OpenReads();
  #closed = false;
  #schema: Schema = { functions: false, batch: false, statics: undefined };

  constructor(url: string, options: PostgresEngineOptions) {
    this.#maxAttempts = Math.max(1, options.maxAttempts ?? 10);
    this.#max = options.maxConnections ?? 10;
    this.#connectWaitMs = options.connectionTimeoutMs ?? 5000;
    const timeoutMs = Math.max(0, Math.trunc(options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS));
    this.#nesting = new NestingGuard(options.nestingCheck ?? nestingCheckFromEnv());
    const lock = `SET LOCAL lock_timeout = ${Math.max(1, Math.trunc(options.busyTimeoutMs ?? 5000))}`;
    const durable = 'SET LOCAL synchronous_commit = on';
    const level = options.isolation === 'serializable' ? 'SERIALIZABLE' : 'READ COMMITTED';
    this.#write = {
      begin: `BEGIN ISOLATION LEVEL ${level}; ${durable}; ${lock}`,
      retry: true,
      defers: true,
      timeoutMs,
    };
    this.#read = {
      begin: `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; ${lock}`,
      retry: false,
      lazyCommit: true,
      timeoutMs,
    };
    // READ COMMITTED: each statement after the lock sees what an earlier migration committed (a
    // SERIALIZABLE snapshot would be taken by the lock statement itself, before the wait).
    const wait = Math.max(1, Math.trunc(options.migrationLockTimeoutMs ?? 300_000));
    this.#migration = {
      begin: `BEGIN ISOLATION LEVEL READ COMMITTED; ${durable}; SET LOCAL lock_timeout = ${wait}; SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY}); ${lock}`,
      retry: true,
      timeoutMs: 0,
    };
    this.#pool = new pg.Pool({
      connectionString: url,
      max: this.#max,
      connectionTimeoutMillis: this.#connectWaitMs,
      // Probes an idle socket, so a peer that vanished without a word is noticed (the OS then
      // fails the socket) instead of holding a pooled connection forever.
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
      idleTimeoutMillis: Math.max(0, options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS),
      application_name: 'baton',
      types: engineTypes(),
      // Queries leave without waiting for the previous answer (PgExecutor: BEGIN with the first read).
      pipeline: true,
    });
    // Without a listener an idle connection's error (a server restart) would crash the process.
    this.#pool.on('error', (error) => options.onIdleError?.(error));
  }

  /** Checked synchronously in the caller's async context, before anything starts. */
  #unusable(): BatonError | undefined {
    if (this.#closed) return new BatonError('unavailable', 'the store is closed');
    if (this.#nesting.inside()) {
      return new BatonError(
        'internal',
        'store transaction or read opened inside another (it would wait for itself on SQLite)',
      );
    }
    return undefined;
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#running.add(work);
    const forget = (): void => void this.#running.delete(work);
    work.then(forget, forget);
    return work;
  }

  async #connect(): Promise<pg.PoolClient> {
    // Every pooled connection busy: this caller waits for one to come back, not for the server.
    const full = this.#pool.totalCount >= this.#max && this.#pool.idleCount === 0;
    try {
      return await this.#pool.connect();
    } catch (cause) {
      if (full) {
        throw new BatonError(
          'unavailable',
          `no pooled PostgreSQL connection came free within ${this.#connectWaitMs} ms: all ${this.#max} are in use (a larger --pool, or fewer concurrent requests)`,
          { poolSize: this.#max },
          { cause },
        );
      }
      // Never the URL in the message: it may hold a password.
      throw new BatonError('unavailable', 'cannot connect to PostgreSQL', {}, { cause });
    }
  }

  /** Run `fn` once in one transaction on one pooled connection. */
  async #attempt<T>(mode: Mode, fn: (tx: PgExecutor) => Promise<T>, stepwise: boolean): Promise<T> {
    const session = new Session(await this.#connect(), mode.timeoutMs);
    // The previous read on this connection left its snapshot open: its COMMIT leads this BEGIN.
    const ending = this.#reads.take(session.client);
    try {
      return await this.#body(
        session,
        ending ? { ...mode, begin: `COMMIT; ${mode.begin}` } : mode,
        fn,
        stepwise,
      );
    } finally {
      // Nothing was sent (the COMMIT neither), or this read's own snapshot ends later.
      const open = (ending && session.unused) || session.leaveOpen;
      if (open && session.broken === undefined) this.#reads.leaveOpen(session.client);
      session.release();
    }
  }

  async #body<T>(
    session: Session,
    mode: Mode,
    fn: (tx: PgExecutor) => Promise<T>,
    stepwise: boolean,
  ): Promise<T> {
    const defers = mode.defers === true && this.#schema.batch && !stepwise;
    const ex = new PgExecutor(session, this.#texts, mode.begin, this.#schema, defers);
    let outcome: { value: T } | { error: unknown };
    let withCommit = false;
    try {
      outcome = { value: await this.#nesting.run(() => fn(ex)) };
      // What is still deferred leaves before the COMMIT, or with it when nothing of it needs
      // checking first; a failure there is the outcome.
      withCommit = ex.commitsWithDeferred;
      if (!withCommit) await ex.flush();
    } catch (error) {
      outcome = { error };
    }
    ex.end();
    if (!ex.started) {
      // `fn` sent nothing: there is no transaction to end.
      if ('error' in outcome) throw outcome.error;
      return outcome.value;
    }
    if (withCommit && !('error' in outcome)) {
      const { commit } = await ex.commitDeferred();
      // No answer from the server (a lost connection): it may have run both, so the COMMIT's
      // outcome is unknown, and said so.
      if (ex.failure === undefined || sqlState(ex.failure) === undefined) {
        this.#committed(commit, mode);
        if (ex.failure === undefined) return outcome.value;
      }
      // The batch failed: the server rolled the transaction back (its COMMIT answered ROLLBACK).
      outcome = { error: mapBatchError(ex.failure) };
    }
    if ('error' in outcome || ex.failure !== undefined) {
      if (!withCommit) await session.rollback();
      // A serialization failure anywhere in the attempt re-runs it, even if `fn` turned it into
      // another error: what `fn` decided rested on a snapshot that could not commit.
      if (mode.retry && isRetryable(ex.failure)) throw new RetryableAbort(ex.failure);
      // A deferred statement met another state: run `fn` again statement by statement, where the
      // caller meets that state and answers it as it always has (whatever `fn` made of it here).
      if (defers && sqlState(ex.failure) === DEFERRED_MISMATCH) throw new RetryableAbort(ex.failure, true);
      if ('error' in outcome) throw outcome.error;
      throw new BatonError(
        'internal',
        'the transaction function went on after a failed statement: PostgreSQL aborted the transaction and nothing was committed',
        {},
        { cause: mapPgError(ex.failure) },
      );
    }
    if (mode.lazyCommit === true && session.broken === undefined) {
      session.leaveOpen = true;
      return outcome.value;
    }
    await this.#commit(session, mode);
    return outcome.value;
  }

  async #commit(session: Session, mode: Mode): Promise<void> {
    const [result] = await Promise.allSettled([session.query('COMMIT')]);
    this.#committed(result, mode);
  }

  /** What the server answered a COMMIT: returns if it committed, else throws what that means. */
  #committed(answer: PromiseSettledResult<pg.QueryResult>, mode: Mode): void {
    if (answer.status === 'rejected') {
      const error: unknown = answer.reason;
      if (mode.retry && isRetryable(error)) throw new RetryableAbort(error);
      if (sqlState(error) !== undefined) throw mapPgError(error);
      // Never reported as committed, nor as rolled back: the server may have done either.
      const why = isQueryTimeout(error)
        ? 'PostgreSQL did not answer the COMMIT within the query timeout (queryTimeoutMs; the connection was closed)'
        : 'the PostgreSQL connection failed during COMMIT';
      throw new BatonError(
        'unavailable',
        `${why}: whether the transaction committed is unknown`,
        { outcome: 'unknown' },
        { cause: error },
      );
    }
    // PostgreSQL answers COMMIT of an aborted transaction with ROLLBACK, not with an error.
    if (answer.value.command !== 'COMMIT') {
      throw new BatonError(
        'internal',
        `PostgreSQL answered COMMIT with ${answer.value.command}: nothing was committed`,
      );
    }
  }

  async #run<T>(mode: Mode, fn: (tx: PgExecutor) => Promise<T>): Promise<T> {
    let stepwise = false;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#attempt(mode, fn, stepwise);
      } catch (error) {
        if (!(error instanceof RetryableAbort)) throw error;
        if (error.stepwise) {
          // Not a meeting with a concurrent transaction: no backoff, and it happens once.
          stepwise = true;
          attempt -= 1;
          continue;
        }
        if (attempt >= this.#maxAttempts) {
          throw new BatonError(
            'store_busy',
            `the store is busy: the transaction met concurrent ones ${attempt} time(s) (serialization failure or deadlock)`,
            { attempts: attempt },
            { cause: mapPgError(error.driverError) },
          );
        }
        await sleep(backoffMs(attempt));
      }
    }
  }

  #start<T>(mode: Mode, fn: (tx: PgExecutor) => Promise<T>): Promise<T> {
    const refused = this.#unusable();
    if (refused !== undefined) return Promise.reject(refused);
    return this.#track(this.#run(mode, fn));
  }

  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.#start(this.#write, fn);
  }

  schemaApplied(version: number): void {
    this.#schema = {
      functions: version >= 12,
      batch: version >= 16,
      statics: version >= 24 ? STATIC_STATEMENTS_024 : version >= 22 ? STATIC_STATEMENTS : undefined,
    };
  }

  read<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.#start(this.#read, fn);
  }

  migrationTransaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.#start(this.#migration, fn);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // Work already started finishes first (as on SQLite); pg's pool would strand queued waiters.
    await Promise.allSettled([...this.#running]);
    this.#reads.close();
    await this.#pool.end();
  }
}

/**
 * Open a PostgreSQL store at `url` (`postgres://user[:password]@host[:port]/database[?…]`; libpq
 * parameters such as `sslmode` or `options` go in the query). Connects lazily: an unreachable
 * server shows as `unavailable` on the first transaction or read.
 */
export function openPostgresEngine(url: string, options: PostgresEngineOptions = {}): StoreEngine {
  return new PostgresEngine(url, options);
}
