/**
 * The transactional store port (DESIGN.md §2). Every query is written once, as one SQL text that
 * both engines accept, with `?` placeholders (the PostgreSQL engine rewrites them to `$n`).
 * Portable SQL only: TEXT, BIGINT (SQLite gives it INTEGER affinity), no BLOB/BYTEA (bytes are
 * stored as base64url or JCS text), `INSERT … ON CONFLICT … DO NOTHING`, `RETURNING`.
 * Engine differences are capabilities, never `if (postgres)` branches in callers.
 */
import type { CheckpointStats } from './sqlite-checkpointer.js';

export type SqlValue = string | number | bigint | null;

/** `n` placeholders for an `IN (…)` list or a VALUES row: `?, ?, ?`. */
export const marks = (n: number): string => Array<string>(n).fill('?').join(', ');

export interface SqlExecutor {
  all<R extends object>(sql: string, params?: readonly SqlValue[]): Promise<R[]>;
  get<R extends object>(sql: string, params?: readonly SqlValue[]): Promise<R | undefined>;
  run(sql: string, params?: readonly SqlValue[]): Promise<RunResult>;
}

export interface RunResult {
  readonly changes: number;
  /**
   * Where the transaction has `answersRowid`: the rowid of the last row an INSERT added. Absent
   * elsewhere (PostgreSQL: an INSERT says what it assigned with RETURNING).
   */
  readonly lastRowid?: number;
}

export interface Transaction extends SqlExecutor {
  /**
   * Suffix for a SELECT that must lock the rows it reads until commit: ` FOR UPDATE` on
   * PostgreSQL, empty on SQLite (whose write transactions already hold the one writer lock).
   */
  readonly forUpdate: string;
  /**
   * The database provides Baton's server-side functions (PostgreSQL after migration 012): a
   * transition's statements may go as one function call, one round trip (docs/store.md).
   */
  readonly serverFunctions?: boolean;
  /**
   * `defer` is available (PostgreSQL after migration 016, outside a re-run): a write whose answer
   * the caller only checks may wait and leave with the next statement or before COMMIT, in one
   * server-side call (docs/store.md "One round trip per transition"). When it is false, callers
   * send each statement as before.
   */
  readonly deferrable?: boolean;
  /**
   * `run` answers `lastRowid` (SQLite): one multi-row INSERT into a rowid table, under the one
   * writer lock, gives its rows consecutive rowids in VALUES order (each max(rowid) + 1), so a
   * caller knows every row's rowid without RETURNING, whose result table costs SQLite more than
   * the insert itself (docs/store.md "Evidence without RETURNING").
   */
  readonly answersRowid?: boolean;
  /**
   * Send `sql` later, in order, in this transaction. If it then changes another number of rows
   * than `options.expect`, nothing of the transaction commits and the engine runs `fn` again with
   * `deferrable` false, so the caller meets the condition statement by statement and answers it
   * as it always has. `options.rows` receives a SELECT's rows when it has run; what it throws
   * fails the transaction.
   */
  defer?(sql: string, params: readonly SqlValue[], options: DeferOptions): DeferredWrite;
  /**
   * Whether a deferred statement with exactly this text leaves by the key of a static branch of
   * the database's `baton_batch_static` (PostgreSQL after migration 022; docs/store.md "Static
   * writes in the one call"): a caller that could send either of two texts sends this one only
   * where it is not the slow, dynamic way.
   */
  sendsStatic?(sql: string): boolean;
}

/**
 * A deferred statement while it waits: the same guard and expected count, other parameters, and
 * where the caller gives one, another text that stands for it (docs/store.md "One row version per
 * transition"). `amend` answers false, changing nothing, once the statement has left (the caller
 * then sends its own statement as before).
 */
export interface DeferredWrite {
  amend(params: readonly SqlValue[], sql?: string): boolean;
}

export interface DeferOptions {
  readonly expect?: number;
  readonly rows?: (rows: readonly object[]) => void;
  /**
   * Positions of parameters that are JSON texts Baton itself serialized and that the statement
   * PARSES (an evidence run for `baton_append_known`): the PostgreSQL batch carries each as a JSON
   * value instead of escaping it again inside a JSON string (docs/store.md "JSON parameters as
   * JSON"). Never a value stored as text: `baton_batch_static` reads its items as `jsonb`, whose
   * `->>` gives the same value in jsonb's own layout, not the same bytes. A text that is not JSON
   * fails the whole batch (fail closed).
   */
  readonly jsonParams?: readonly number[];
}

export type EngineKind = 'sqlite' | 'postgres';

export interface StoreEngine {
  readonly kind: EngineKind;
  /**
   * Run `fn` inside one serializable write transaction: commit when it resolves, roll back
   * when it throws (and rethrow). Nothing outside `fn` may decide what it writes, and `fn` acts
   * only through `tx`: PostgreSQL re-runs it after a serialization failure or deadlock.
   */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  /** A read-only snapshot (no locks taken). */
  read<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /**
   * A write transaction that also excludes every other migration transaction on the same
   * database, from any process, and sees what they committed (`migrate` from several servers at
   * once). PostgreSQL: READ COMMITTED under `pg_advisory_xact_lock`. Absent where `transaction`
   * already excludes all other writers (SQLite's one writer lock): callers fall back to it.
   */
  migrationTransaction?<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  /**
   * How transactions shared COMMITs since the engine opened. Present where the engine batches
   * them itself (SQLite's group commit); PostgreSQL's own group commit is inside the server.
   */
  commitStats?(): CommitStats;
  /**
   * Told by `migrate` which migration the database has reached, so the engine may use what the
   * schema provides (PostgreSQL: migration 012's functions, `Transaction.serverFunctions`).
   */
  schemaApplied?(version: number): void;
  close(): Promise<void>;
}

export interface CommitStats {
  /** Physical COMMITs that succeeded. */
  readonly commits: number;
  /** Logical transactions committed by them. */
  readonly transactions: number;
  /** Logical transactions whose function threw (rolled back, alone). */
  readonly rolledBack: number;
  /** The most transactions one COMMIT carried. */
  readonly largestBatch: number;
  /** Milliseconds transactions waited, queued, before their function started (summed). */
  readonly waitMs?: number;
  /** Milliseconds in COMMIT (summed; with the inline SQLite writer, the event loop's too). */
  readonly commitMs?: number;
  /** SQLite's WAL checkpoints on a thread of their own (docs/store.md); absent elsewhere. */
  readonly checkpoints?: CheckpointStats;
}

/**
 * Defer `sql` where `tx` defers statements (`Transaction.deferrable`) and answer the waiting
 * statement; answer undefined, having sent nothing, where it does not (the caller then runs the
 * statement itself).
 */
export function deferred(
  tx: Transaction,
  sql: string,
  params: readonly SqlValue[],
  options: DeferOptions = {},
): DeferredWrite | undefined {
  if (tx.deferrable !== true || tx.defer === undefined) return undefined;
  return tx.defer(sql, params, options);
}
