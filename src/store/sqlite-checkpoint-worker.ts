/**
 * The WAL checkpoint thread (docs/store.md, "Checkpoints off the request path"; issue 16): its own
 * connection to the database file, which copies committed WAL frames back into the database when
 * the engine asks (`PRAGMA wal_checkpoint(PASSIVE)`: it never takes the write lock and never waits
 * for a reader), so the copy and the database file's fsync block this thread, never the engine's
 * event loop. It decides nothing: when to run and when the WAL may restart is the engine's
 * (sqlite-checkpointer.ts).
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

export interface CheckpointWorkerData {
  readonly path: string;
}

/** What one pass did: SQLite's own counters, in WAL frames, and how long it took. */
export interface CheckpointReply {
  /** The WAL's frames (since its last restart) when the pass ran. */
  readonly log: number;
  /** How many of them are now in the database file. */
  readonly checkpointed: number;
  readonly ms: number;
  readonly error?: string;
}

interface CheckpointRow {
  readonly busy: number;
  readonly log: number;
  readonly checkpointed: number;
}

function open(path: string): Database.Database {
  const db = new Database(path, { fileMustExist: true, timeout: 0 });
  // The pass fsyncs the database file before SQLite may restart the WAL over the frames it copied:
  // a restart with those pages still in the page cache could lose them to a power failure.
  db.pragma('synchronous = FULL');
  db.pragma('fullfsync = ON');
  // This connection never writes; it must not start SQLite's own checkpoints either.
  db.pragma('wal_autocheckpoint = 0');
  return db;
}

function pass(db: Database.Database): CheckpointReply {
  const t0 = performance.now();
  const rows = db.pragma('wal_checkpoint(PASSIVE)') as CheckpointRow[];
  const row = rows[0];
  return { log: row?.log ?? 0, checkpointed: row?.checkpointed ?? 0, ms: performance.now() - t0 };
}

const port = parentPort;
const init = workerData as CheckpointWorkerData | undefined;
if (port !== null && init !== undefined) {
  const db = open(init.path);
  port.on('message', (message: 'pass' | 'close') => {
    if (message === 'close') {
      db.close();
      port.close();
      return;
    }
    try {
      port.postMessage(pass(db));
    } catch (error) {
      // A failed pass loses nothing (the frames stay in the WAL); the engine falls back to SQLite's.
      const reply: CheckpointReply = { log: 0, checkpointed: 0, ms: 0, error: String(error) };
      port.postMessage(reply);
    }
  });
}
