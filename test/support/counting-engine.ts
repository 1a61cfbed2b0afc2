/**
 * A store engine that counts what passes through it (issue 16 §1, §2): statements sent through a
 * transaction's or a read's executor, write transactions, read-only snapshots, and on PostgreSQL
 * the round trips each implies (one per statement, plus the COMMIT: the engine pipelines BEGIN
 * with the first statement). Wraps a real engine; every call goes on to it unchanged.
 */
import type { SqlExecutor, SqlValue, StoreEngine, Transaction } from '../../src/store/engine.js';

export interface StatementCounts {
  /** Statements sent, in write transactions and in reads. */
  statements: number;
  /** Write transactions (StoreEngine.transaction / migrationTransaction) that sent a statement. */
  transactions: number;
  /** Read-only snapshots (StoreEngine.read) that sent a statement. */
  reads: number;
  /** Every statement's SQL text, in order (the first words only, for a readable failure). */
  readonly texts: string[];
}

export function zeroCounts(): StatementCounts {
  return { statements: 0, transactions: 0, reads: 0, texts: [] };
}

function counted<E extends SqlExecutor>(
  inner: E,
  counts: StatementCounts,
  onFirst: (texts: string[]) => void,
): E {
  let first = true;
  const note = (sql: string): void => {
    if (first) onFirst(counts.texts);
    first = false;
    counts.statements += 1;
    counts.texts.push(sql.replace(/\s+/g, ' ').trim().slice(0, 90));
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
  const { forUpdate, serverFunctions } = inner as Partial<Transaction>;
  if (forUpdate === undefined) return wrapped as E;
  return { ...wrapped, forUpdate, ...(serverFunctions !== undefined && { serverFunctions }) } as unknown as E;
}

/** `engine`, counting into the returned `counts` (reset it by replacing its members). */
export function countingEngine(engine: StoreEngine): { engine: StoreEngine; counts: StatementCounts } {
  const counts = zeroCounts();
  const tx = (tx: Transaction): Transaction =>
    counted(tx, counts, (texts) => {
      counts.transactions += 1;
      texts.push('-- write transaction');
    });
  const wrapped: StoreEngine = {
    kind: engine.kind,
    transaction: (fn) => engine.transaction((t) => fn(tx(t))),
    read: (fn) =>
      engine.read((ex) =>
        fn(
          counted(ex, counts, (texts) => {
            counts.reads += 1;
            texts.push('-- read-only snapshot');
          }),
        ),
      ),
    close: () => engine.close(),
    ...(engine.migrationTransaction !== undefined && {
      migrationTransaction: <T>(fn: (t: Transaction) => Promise<T>) =>
        (engine.migrationTransaction as NonNullable<StoreEngine['migrationTransaction']>)((t) => fn(tx(t))),
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
  counts.texts.length = 0;
}
