// Another writer on a system of record's database (lock-wait.test.ts): in a worker thread, with its
// own SQLite connection, it takes the write lock (BEGIN IMMEDIATE), says "locked", and holds the lock
// until the test has started its command (cell GO) and then either read its clock (cell READ) or
// waited `fallbackMs` without reading it. Just before COMMIT it sets cell RELEASED, which the test's
// clock reads as "the lease's time has passed": time went by while this connection held the lock.
// The fallback only keeps the test moving; what the command decides does not depend on its length.
// Not a test file itself.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

export const GO = 0;
export const READ = 1;
export const RELEASED = 2;

export interface LockHolderInput {
  dbPath: string;
  cells: SharedArrayBuffer;
  fallbackMs: number;
}

if (parentPort !== null) {
  const port = parentPort;
  const input = workerData as LockHolderInput;
  const cells = new Int32Array(input.cells);
  const db = new Database(input.dbPath, { timeout: 10_000 });
  db.exec('BEGIN IMMEDIATE');
  port.postMessage('locked');
  Atomics.wait(cells, GO, 0);
  Atomics.wait(cells, READ, 0, input.fallbackMs);
  Atomics.store(cells, RELEASED, 1);
  db.exec('COMMIT');
  db.close();
  port.postMessage('released');
}
