/**
 * A store engine that counts what passes through it (issue 16 §1, §2): statements sent through a
 * transaction's or a read's executor, write transactions, read-only snapshots, and on PostgreSQL
 * the round trips each implies (one per statement, plus the COMMIT: the engine pipelines BEGIN
 * with the first statement). Wraps a real engine; every call goes on to it unchanged.
 * Deferred statements (`Transaction.defer`, PostgreSQL after migration 016) are sent by the engine
 * as ONE `baton_batch` call with the next statement, or before the COMMIT when none follows: so a
 * statement after deferred ones counts once (it carries them), and a transaction that ends with
 * deferred ones unsent counts one statement more (the flush). Deferred ones are also counted apart.
 */
import type {
  DeferOptions,
  SqlExecutor,
  SqlValue,
  StoreEngine,
  Transaction,
} from '../../src/store/engine.js';

export interface StatementCounts {
  /** Statements sent, in write transactions and in reads. */
  statements: number;
  /** Write transactions (StoreEngine.transaction / migrationTransaction) that sent a statement. */
  transactions: number;
  /** Read-only snapshots (StoreEngine.read) that sent a statement. */
  reads: number;
  /** Statements deferred into `baton_batch` calls (each call is counted in `statements`). */
  deferred: number;
  /** Every statement's SQL text, in order (the first words only, for a readable failure). */
  readonly texts: string[];
}

export function zeroCounts(): StatementCounts {
  return { statements: 0, transactions: 0, reads: 0, deferred: 0, texts: [] };
}

const short = (sql: string): string => sql.replace(/\s+/g, ' ').trim().slice(0, 90);

/** A counted executor, and `end()`: what the engine sends after `fn` (the flush of deferred ones). */
function counted<E extends SqlExecutor>(
  inner: E,
  counts: StatementCounts,
  onFirst: (texts: string[]) => void,
): { ex: E; end: () => void } {
  let first = true;
  let waiting: string[] = [];
  const open = (): void => {
    if (first) onFirst(counts.texts);
    first = false;
  };
  const carried = (): string =>
    waiting.length === 0 ? '' : ` [+ ${waiting.length} deferred: ${waiting.join(' | ')}]`;
  const note = (sql: string): void => {
    open();
    counts.statements += 1;
    counts.texts.push(`${short(sql)}${carried()}`);
    waiting = [];
  };
  const end = (): void => {
    if (waiting.length === 0) return;
    counts.statements += 1;
    counts.texts.push(`SELECT baton_batch(?) -- before COMMIT${carried()}`);
    waiting = [];
  };
  const wrapped: SqlExecutor = {
    all: <R extends object>(sql: string, params?: readonly SqlValue[]) => {
      note(sql);
      return inner.all<R>(sql, params);
    },
    get: <R extends object>(sql: string, params?: readonly SqlValue[]) => {
      note(sql);
      return inner.get<R>(sql, params);
    },
    run: (sql: string, params?: readonly SqlValue[]) => {
      note(sql);
      return inner.run(sql, params);
    },
  };
  const t = inner as Partial<Transaction>;
  const { forUpdate, serverFunctions, deferrable, answersRowid } = t;
  if (forUpdate === undefined) return { ex: wrapped as E, end };
  const defer = t.defer?.bind(inner);
  const tx: Transaction = {
    ...wrapped,
    forUpdate,
    ...(serverFunctions !== undefined && { serverFunctions }),
    ...(deferrable !== undefined && { deferrable }),
    ...(answersRowid !== undefined && { answersRowid }),
    ...(defer !== undefined && {
      defer: (sql: string, params: readonly SqlValue[], options: DeferOptions) => {
        const write = defer(sql, params, options); // throws before anything is counted if it refuses
        open();
        counts.deferred += 1;
        waiting.push(short(sql).slice(0, 40));
        return write;
      },
    }),
  };
  return { ex: tx as unknown as E, end };
}

/** `engine`, counting into the returned `counts` (reset it by replacing its members). */
export function countingEngine(engine: StoreEngine): { engine: StoreEngine; counts: StatementCounts } {
  const counts = zeroCounts();
  const tx = <T>(t: Transaction, fn: (tx: Transaction) => Promise<T>): Promise<T> => {
    const c = counted(t, counts, (texts) => {
      counts.transactions += 1;
      texts.push('-- write transaction');
    });
    // The engine flushes what is still deferred once `fn` has resolved (postgres.ts #body).
    return fn(c.ex).then((value) => {
      c.end();
      return value;
    });
  };
  const wrapped: StoreEngine = {
    kind: engine.kind,
    transaction: (fn) => engine.transaction((t) => tx(t, fn)),
    read: (fn) =>
      engine.read((ex) =>
        fn(
          counted(ex, counts, (texts) => {
            counts.reads += 1;
            texts.push('-- read-only snapshot');
          }).ex,
        ),
      ),
    close: () => engine.close(),
    ...(engine.migrationTransaction !== undefined && {
      migrationTransaction: <T>(fn: (t: Transaction) => Promise<T>) =>
        (engine.migrationTransaction as NonNullable<StoreEngine['migrationTransaction']>)((t) => tx(t, fn)),
    }),
    ...(engine.commitStats !== undefined && { commitStats: () => engine.commitStats!() }),
    ...(engine.schemaApplied !== undefined && { schemaApplied: (v: number) => engine.schemaApplied!(v) }),
  };
  return { engine: wrapped, counts };
}

export function resetCounts(counts: StatementCounts): void {
  counts.statements = 0;
  counts.transactions = 0;
  counts.reads = 0;
  counts.deferred = 0;
  counts.texts.length = 0;
}
