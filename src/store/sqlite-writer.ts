/**
 * The SQLite engine's write connection, where it lives (docs/store.md, "The writer thread"):
 * - `inline`: on the engine's own thread. Every COMMIT's fsync blocks its event loop.
 * - `thread`: owned by a worker thread (issue 16 §3). Transaction functions still run on the
 *   engine's thread, statement by statement, but BEGIN IMMEDIATE's lock wait and COMMIT's fsync
 *   happen on the worker while the event loop serves requests.
 * Either way the engine drives it the same way (group commit, savepoints, `synchronous = FULL`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { BatonError } from '../core/errors.js';
import {
  busyDelay,
  localRunner,
  openWriter,
  StatementCache,
  tryBeginImmediate,
  type Db,
  type StatementRunner,
} from './sqlite-connection.js';
import { ThreadWriter } from './sqlite-writer-thread.js';

export type SqliteWriterMode = 'inline' | 'thread';

export const SQLITE_WRITER_MODES: readonly SqliteWriterMode[] = ['inline', 'thread'];

export interface WriterConnection {
  readonly runner: StatementRunner;
  /** The connection itself when it is on this thread (an in-memory database's reads use it). */
  readonly local: { readonly db: Db; readonly cache: StatementCache } | undefined;
  inTransaction(): boolean;
  /** BEGIN IMMEDIATE, waiting for another process's lock up to `busyTimeoutMs`, then `store_busy`. */
  begin(busyTimeoutMs: number): Promise<void>;
  /** COMMIT; `undefined` when it already happened (inline: synchronously). */
  commit(): Promise<void> | undefined;
  close(): Promise<void>;
}

export interface WriterOptions {
  readonly mode: SqliteWriterMode;
  readonly busyTimeoutMs: number;
  readonly fileMustExist: boolean;
  readonly statementCacheSize: number;
  readonly onStop?: (error: BatonError) => void;
}

function inlineWriter(path: string, options: WriterOptions): WriterConnection {
  const db = openWriter(path, options);
  const cache = new StatementCache(db, options.statementCacheSize);
  return {
    runner: localRunner(cache),
    local: { db, cache },
    inTransaction: () => db.inTransaction,
    async begin(busyTimeoutMs) {
      // Waiting is a timer, never a blocking busy_timeout: this event loop keeps serving.
      const deadline = performance.now() + busyTimeoutMs;
      for (let attempt = 0; !tryBeginImmediate(cache, deadline); attempt++) {
        await sleep(busyDelay(attempt, deadline));
      }
    },
    commit() {
      cache.exec('COMMIT');
      return undefined;
    },
    close() {
      db.close();
      return Promise.resolve();
    },
  };
}

function threadWriter(path: string, options: WriterOptions): WriterConnection {
  if (path === ':memory:' || path === '') {
    // An in-memory database exists only on its one connection: nothing else could read it.
    throw new BatonError('usage', 'the SQLite writer thread needs a database file, not :memory:');
  }
  const writer = new ThreadWriter(path, options);
  return {
    runner: writer,
    local: undefined,
    inTransaction: () => writer.inTransaction,
    begin: (busyTimeoutMs) => writer.begin(busyTimeoutMs),
    commit: () => writer.commit(),
    close: () => writer.close(),
  };
}

export function openWriterConnection(path: string, options: WriterOptions): WriterConnection {
  return options.mode === 'thread' ? threadWriter(path, options) : inlineWriter(path, options);
}
