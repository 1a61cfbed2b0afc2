/**
 * WAL checkpoints off the request path for the inline writer (docs/store.md, "Checkpoints off the
 * request path"; issue 16, p99 per call). Why: SQLite's automatic checkpoint runs inside the
 * COMMIT that takes the WAL past 1000 frames, on the writer's thread — with the inline writer the
 * server's event loop — copying pages into the database file and fsyncing it while every request
 * in the process waits: a stall of milliseconds every few dozen transactions, which is the tail.
 *
 * How:
 * - every PASS_EVERY_COMMITS commits a thread (sqlite-checkpoint-worker.ts) runs a PASSIVE
 *   checkpoint on a connection of its own, beside the writer (PASSIVE takes no write lock);
 * - SQLite restarts the WAL from its beginning only at a write transaction that finds every frame
 *   already copied, which never happens while the writer keeps writing beside the thread. So once
 *   the WAL holds RESTART_FRAMES, the engine holds its next batch (not the event loop) while the
 *   thread runs one more pass — the few frames since its last one — and the write after it
 *   restarts the WAL. The WAL stays near RESTART_FRAMES plus one pass's worth;
 * - the writer's own automatic checkpoint stays on, raised to BACKSTOP_FRAMES: the bound on the
 *   WAL should the thread ever fall behind (a reader pinning old frames bounds SQLite's own
 *   checkpoint in the same way); if the thread fails, the writer goes back to SQLite's default,
 *   as if nothing had been moved.
 * Durability is untouched: every COMMIT is still fsynced in the WAL (`synchronous = FULL`); a
 * checkpoint only copies committed frames, fsyncs the database file before the WAL may restart,
 * and a crash at any point recovers from the WAL as before.
 */
import { Worker } from 'node:worker_threads';
import type { Db } from './sqlite-connection.js';
import type { CheckpointReply } from './sqlite-checkpoint-worker.js';

/** Commits between two passes of the thread (a pass costs the database file an fsync). */
const PASS_EVERY_COMMITS = 16;
/** WAL frames past which the engine holds one batch for the pass that lets the WAL restart. */
export const RESTART_FRAMES = 1000;
/** The writer's own automatic checkpoint, kept as the bound (SQLite's default is 1000). */
export const BACKSTOP_FRAMES = 10_000;
const SQLITE_DEFAULT_FRAMES = 1000;

export interface CheckpointStats {
  /** Passes the thread ran, and their time on the thread (ms). */
  readonly passes: number;
  readonly passMs: number;
  /** Batches held for a restart pass, the time they were held (ms), and the frames those passes copied. */
  readonly holds: number;
  readonly holdMs: number;
  readonly heldFrames: number;
  /** WAL restarts seen (a pass found fewer frames than the one before). */
  readonly restarts: number;
  /** The most frames a pass found in the WAL. */
  readonly largestWal: number;
  /** The thread failed: SQLite's own checkpoint (1000 frames, in COMMIT) is back. */
  readonly fellBack: boolean;
}

/** The checkpointers of this process whose thread runs (what a test can reach to kill one). */
export const liveCheckpointers = new Set<WalCheckpointer>();

export class WalCheckpointer {
  readonly #path: string;
  readonly #writer: Db;
  #worker: Worker | undefined;
  #commits = 0;
  #inFlight: ((reply: CheckpointReply) => void) | undefined;
  #restartDue = false;
  #lastLog = 0;
  #lastCheckpointed = 0;
  #closed = false;
  #exited = false;
  #stats = {
    passes: 0,
    passMs: 0,
    holds: 0,
    holdMs: 0,
    heldFrames: 0,
    restarts: 0,
    largestWal: 0,
    fellBack: false,
  };

  constructor(path: string, writer: Db) {
    this.#path = path;
    this.#writer = writer;
    writer.pragma(`wal_autocheckpoint = ${BACKSTOP_FRAMES}`);
  }

  stats(): CheckpointStats {
    return { ...this.#stats };
  }

  /** After every COMMIT (synchronous, cheap): now and then, a pass on the thread. */
  afterCommit(): void {
    if (this.#stats.fellBack || this.#closed) return;
    this.#commits += 1;
    if (this.#inFlight !== undefined || this.#restartDue || this.#commits < PASS_EVERY_COMMITS) return;
    void this.#pass(false);
  }

  /**
   * Before a batch (the writer between transactions): when the WAL is due to restart, the promise
   * of the pass that copies what is left; the batch waits for it, the event loop does not.
   */
  beforeBatch(): Promise<void> | undefined {
    if (!this.#restartDue || this.#inFlight !== undefined || this.#stats.fellBack) return undefined;
    this.#restartDue = false;
    const t0 = performance.now();
    return this.#pass(true).then(() => {
      this.#stats.holds += 1;
      this.#stats.holdMs += performance.now() - t0;
    });
  }

  /** End the thread at once, as a crash of it would (tests: the engine must fall back). */
  async kill(): Promise<void> {
    await this.#worker?.terminate();
  }

  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    liveCheckpointers.delete(this);
    if (worker === undefined || this.#exited) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref(); // until it has closed its connection and ended
    worker.postMessage('close');
    await exited;
  }

  #pass(restart: boolean): Promise<void> {
    this.#commits = 0;
    const worker = this.#worker ?? this.#start();
    return new Promise<void>((resolve) => {
      this.#inFlight = (reply) => {
        this.#inFlight = undefined;
        if (!this.#closed) worker.unref(); // closing, it stays referenced until it ended
        this.#note(reply, restart);
        resolve();
      };
      worker.ref(); // a pass still due keeps the process alive (a batch may wait for it)
      worker.postMessage('pass');
    });
  }

  #note(reply: CheckpointReply, restart: boolean): void {
    if (reply.error !== undefined) {
      if (!this.#closed) this.#fallBack();
      return;
    }
    const s = this.#stats;
    s.passes += 1;
    s.passMs += reply.ms;
    const restarted = reply.log < this.#lastLog;
    if (restarted) s.restarts += 1;
    if (restart) s.heldFrames += reply.checkpointed - (restarted ? 0 : this.#lastCheckpointed);
    this.#lastLog = reply.log;
    this.#lastCheckpointed = reply.checkpointed;
    s.largestWal = Math.max(s.largestWal, reply.log);
    // Even a pass that copied every frame it saw ran beside the writer, which went on writing: only
    // a pass while the writer waits leaves nothing to copy. After one, the next waits for its
    // commits again: a reader pinning old frames must not hold every batch.
    this.#restartDue = !restart && reply.log >= RESTART_FRAMES;
  }

  #start(): Worker {
    const worker = new Worker(new URL('./sqlite-checkpoint-worker.js', import.meta.url), {
      workerData: { path: this.#path },
      // The thread runs this compiled module only, none of the parent's options. From TypeScript
      // sources (tsx) it is absent: the thread fails to start and the engine falls back.
      execArgv: [],
    });
    worker.unref();
    worker.on('message', (reply: CheckpointReply) => this.#inFlight?.(reply));
    worker.on('error', () => this.#fallBack());
    worker.on('exit', () => {
      this.#exited = true;
      if (!this.#closed) this.#fallBack();
      this.#inFlight?.({ log: 0, checkpointed: 0, ms: 0, error: 'the checkpoint thread exited' });
    });
    this.#worker = worker;
    liveCheckpointers.add(this);
    return worker;
  }

  /** The thread is gone or failing: SQLite's own checkpoint in COMMIT again, nothing lost. */
  #fallBack(): void {
    if (this.#stats.fellBack) return;
    this.#stats.fellBack = true;
    liveCheckpointers.delete(this);
    this.#restartDue = false;
    if (this.#writer.open) this.#writer.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_FRAMES}`);
  }
}
