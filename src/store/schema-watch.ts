/**
 * A long-running server on a shared store that a newer Baton migrated (a rolling upgrade) cannot
 * read or write that schema safely (migrations.ts refuses it at open). `watchSchema` re-reads
 * `schema_migrations` every few seconds; from the read that finds a migration this build does
 * not know, the engine it returns refuses every transaction and read (`unavailable`, with
 * `details.newer`), and `superseded` settles so `baton serve` stops (docs/operations.md,
 * "Upgrading a shared PostgreSQL store"). A transaction that began before that read may still
 * commit: the watch narrows the window to one interval, it does not close it.
 */
import { BatonError } from '../core/errors.js';
import type { SqlExecutor, StoreEngine, Transaction } from './engine.js';
import { migrations } from './migrations/index.js';

const KNOWN: ReadonlySet<number> = new Set(migrations.map((m) => m.id));

/** How often `baton serve` looks (one small read). */
export const SCHEMA_WATCH_EVERY_MS = 2_000;

export interface AppliedMigrations {
  readonly applied: readonly number[];
  /** Applied ids this build does not know: a newer Baton wrote them. */
  readonly newer: readonly number[];
}

export async function appliedMigrations(ex: SqlExecutor): Promise<AppliedMigrations> {
  const rows = await ex.all<{ id: number | string }>('SELECT id FROM schema_migrations');
  const applied = rows.map((r) => Number(r.id));
  return { applied, newer: applied.filter((id) => !KNOWN.has(id)) };
}

/** What every read, write and probe of a superseded store answers. */
export function supersededError(newer: readonly number[]): BatonError {
  return new BatonError(
    'unavailable',
    `the store was migrated by a newer Baton (migration ${newer.join(', ')}): this server no longer reads or writes it; stop it and run the new version`,
    { newer: [...newer] },
  );
}

export interface WatchedEngine {
  readonly engine: StoreEngine;
  /** Settles (never rejects) with the refusal when a newer migration was found. */
  readonly superseded: Promise<BatonError>;
}

/**
 * `inner`, guarded: calls start refusing once a watch read found a newer migration. The watch's
 * own failures (the store briefly unreachable) are left to the requests that meet them; it tries
 * again at the next interval. Closing the returned engine stops the watch.
 */
export function watchSchema(inner: StoreEngine, everyMs = SCHEMA_WATCH_EVERY_MS): WatchedEngine {
  let refusal: BatonError | undefined;
  let tell: (error: BatonError) => void = () => undefined;
  const superseded = new Promise<BatonError>((resolve) => (tell = resolve));
  let busy = false;
  const look = async (): Promise<void> => {
    if (busy || refusal !== undefined) return;
    busy = true;
    try {
      const { newer } = await inner.read(appliedMigrations);
      if (newer.length > 0) {
        refusal = supersededError(newer);
        tell(refusal);
      }
    } catch {
      // Unreachable now: the requests meet the same failure with their own error; look again later.
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void look(), everyMs);
  timer.unref();
  const guard = <T>(run: () => Promise<T>): Promise<T> =>
    refusal === undefined ? run() : Promise.reject(refusal);
  const migrationTransaction = inner.migrationTransaction?.bind(inner);
  const engine: StoreEngine = {
    kind: inner.kind,
    transaction: <T>(fn: (tx: Transaction) => Promise<T>) => guard(() => inner.transaction(fn)),
    read: <T>(fn: (tx: SqlExecutor) => Promise<T>) => guard(() => inner.read(fn)),
    // Optional capabilities stay absent where the inner engine lacks them (callers test for them).
    ...(migrationTransaction !== undefined && {
      migrationTransaction: <T>(fn: (tx: Transaction) => Promise<T>) => guard(() => migrationTransaction(fn)),
    }),
    ...(inner.commitStats !== undefined && { commitStats: inner.commitStats.bind(inner) }),
    ...(inner.schemaApplied !== undefined && { schemaApplied: inner.schemaApplied.bind(inner) }),
    close: () => {
      clearInterval(timer);
      return inner.close();
    },
  };
  return { engine, superseded };
}
