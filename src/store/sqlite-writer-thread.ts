/**
 * The engine's side of the SQLite writer thread (docs/store.md, "The writer thread"; issue 16 §3).
 * The thread owns the write connection; this object stands in for it on the engine's thread:
 * statements are sent and answered synchronously (the transaction functions run here and await
 * them, as on a local connection), BEGIN IMMEDIATE and COMMIT asynchronously, so that a lock wait or
 * the COMMIT's fsync never blocks this event loop.
 *
 * Fail closed: once the thread stopped unexpectedly (an error, an exit), every request still
 * waiting and every later one gets `unavailable`, and `onStop` is told once (serve exits non-zero).
 * A COMMIT in flight when the thread died has an unknown outcome, exactly as when a whole process
 * dies in COMMIT: SQLite applies all of it or none of it, and its callers were told neither.
 */
import { receiveMessageOnPort, MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { BatonError } from '../core/errors.js';
import type { SqlValue } from './engine.js';
import type { RunAnswer, StatementRunner } from './sqlite-connection.js';
import {
  CTL,
  CTL_SLOTS,
  fromWire,
  type WriterData,
  type WriterReply,
  type WriterRequest,
} from './sqlite-writer-protocol.js';

// A statement's answer usually comes within microseconds: look for it this many times before
// sleeping in the kernel.
const SPIN = 1000;
// A synchronous answer later than this means the thread is gone without a word (terminated).
const SYNC_LIMIT_MS = 120_000;
// The thread must have opened the database by then.
const OPEN_LIMIT_MS = 30_000;

export interface ThreadWriterOptions {
  readonly busyTimeoutMs: number;
  readonly fileMustExist: boolean;
  readonly statementCacheSize: number;
  /** Told once when the thread stopped without being closed (the engine is unusable from then). */
  readonly onStop?: (error: BatonError) => void;
}

interface Pending {
  readonly seq: number;
  readonly resolve: (reply: WriterReply) => void;
  readonly reject: (error: BatonError) => void;
}

function workerUrl(): URL {
  return new URL('./sqlite-writer-worker.js', import.meta.url);
}

/** The writer threads of this process that have not stopped (what a test or a probe can reach). */
export const liveWriterThreads = new Set<ThreadWriter>();

export class ThreadWriter implements StatementRunner {
  readonly #worker: Worker;
  readonly #ctl: Int32Array;
  readonly #requests: MessagePort;
  readonly #syncReplies: MessagePort;
  readonly #asyncReplies: MessagePort;
  readonly #onStop: ((error: BatonError) => void) | undefined;
  #seq = 1;
  #inTransaction = false;
  #pending: Pending | undefined;
  #stopped: BatonError | undefined;
  #closing = false;

  /** Start the thread and wait (blocking, as opening a local connection does) until it opened `path`. */
  constructor(path: string, options: ThreadWriterOptions) {
    this.#onStop = options.onStop;
    const ctl = new SharedArrayBuffer(CTL_SLOTS * Int32Array.BYTES_PER_ELEMENT);
    this.#ctl = new Int32Array(ctl);
    const requests = new MessageChannel();
    const syncReplies = new MessageChannel();
    const asyncReplies = new MessageChannel();
    this.#requests = requests.port1;
    this.#syncReplies = syncReplies.port1;
    this.#asyncReplies = asyncReplies.port1;
    const data: WriterData = {
      path,
      busyTimeoutMs: options.busyTimeoutMs,
      fileMustExist: options.fileMustExist,
      statementCacheSize: options.statementCacheSize,
      ctl,
    };
    const ports = {
      requests: requests.port2,
      syncReplies: syncReplies.port2,
      asyncReplies: asyncReplies.port2,
    };
    this.#worker = new Worker(workerUrl(), {
      workerData: { ...data, ...ports },
      transferList: [ports.requests, ports.syncReplies, ports.asyncReplies],
      // The thread runs this module only: none of the parent's options (`-e CODE` would run CODE).
      execArgv: [],
    });
    this.#worker.unref();
    this.#asyncReplies.on('message', (reply: WriterReply) => this.#settle(reply));
    this.#asyncReplies.unref(); // after on(), which refs it: idle, the thread keeps nobody alive
    this.#worker.on('error', (error) => this.#stop(`it failed: ${error.message}`));
    this.#worker.on('exit', (code) => this.#stop(`it exited with code ${code}`));
    try {
      this.#await(1, 0, OPEN_LIMIT_MS);
      liveWriterThreads.add(this);
    } catch (error) {
      this.#closing = true;
      void this.#worker.terminate();
      throw error;
    }
  }

  get inTransaction(): boolean {
    return this.#inTransaction;
  }

  all(sql: string, params: readonly SqlValue[]): unknown[] {
    return this.#sync({ op: 'all', sql, params }) as unknown[];
  }

  get(sql: string, params: readonly SqlValue[]): unknown {
    return this.#sync({ op: 'get', sql, params });
  }

  run(sql: string, params: readonly SqlValue[]): RunAnswer {
    return this.#sync({ op: 'run', sql, params }) as RunAnswer;
  }

  exec(sql: string): void {
    this.#sync({ op: 'exec', sql });
  }

  /** BEGIN IMMEDIATE; a lock held by another process is waited for on the thread, up to the budget. */
  async begin(busyTimeoutMs: number): Promise<void> {
    await this.#async({ op: 'begin', busyTimeoutMs });
  }

  /** COMMIT: its fsync happens on the thread while this event loop goes on. */
  async commit(): Promise<void> {
    await this.#async({ op: 'commit' });
  }

  /**
   * End the thread at once, as a crash would: no ROLLBACK, no close; SQLite discards what was not
   * committed. What fails closed then is tested through this (test/store/writer-thread.test.ts).
   */
  async kill(): Promise<void> {
    await this.#worker.terminate();
  }

  /** Roll back what is open, close the connection and end the thread. */
  async close(): Promise<void> {
    if (this.#stopped !== undefined || this.#closing) return;
    this.#closing = true;
    try {
      await this.#async({ op: 'close' });
    } finally {
      await this.#worker.terminate();
    }
  }

  #usable(): void {
    if (this.#stopped !== undefined) throw this.#stopped;
    if (this.#pending !== undefined) {
      throw new BatonError('internal', 'a request to the SQLite writer thread while another is in flight');
    }
  }

  #post(request: WriterRequest): number {
    this.#usable();
    this.#seq += 1;
    this.#requests.postMessage(request);
    Atomics.store(this.#ctl, CTL.request, this.#seq);
    Atomics.notify(this.#ctl, CTL.request);
    return this.#seq;
  }

  #sync(request: WriterRequest): unknown {
    const before = Atomics.load(this.#ctl, CTL.reply);
    return this.#unwrap(this.#await(this.#post(request), before, SYNC_LIMIT_MS));
  }

  /** Block until the synchronous reply `seq` came; the thread's stop or silence is `unavailable`. */
  #await(seq: number, before: number, limitMs: number): WriterReply {
    // The spin reads only the shared slot (a clock read per turn would cost more than the wait).
    for (let spins = 0; spins < SPIN && Atomics.load(this.#ctl, CTL.reply) !== seq; spins++);
    const deadline = performance.now() + limitMs;
    while (Atomics.load(this.#ctl, CTL.reply) !== seq) {
      if (Atomics.load(this.#ctl, CTL.stopped) === 1) throw this.#stop(this.#lastWords());
      if (performance.now() > deadline) throw this.#stop(`no answer within ${limitMs} ms`);
      Atomics.wait(this.#ctl, CTL.reply, before, 50);
    }
    const message = receiveMessageOnPort(this.#syncReplies);
    if (message === undefined) throw this.#stop('its answer was lost');
    const reply = message.message as WriterReply;
    if (seq === 1 && reply.error !== undefined) throw fromWire(reply.error);
    return reply;
  }

  /** What the thread said when its loop ended by an error (see sqlite-writer-worker.ts). */
  #lastWords(): string {
    const words = receiveMessageOnPort(this.#syncReplies)?.message as WriterReply | undefined;
    return words?.error === undefined ? 'it stopped answering' : `it failed: ${words.error.message}`;
  }

  #async(request: WriterRequest): Promise<WriterReply> {
    return new Promise<WriterReply>((resolve, reject) => {
      const seq = this.#post(request);
      this.#pending = { seq, resolve, reject };
      this.#asyncReplies.ref(); // an answer still due keeps the process alive
    }).then((reply) => this.#unwrap(reply) as WriterReply);
  }

  #settle(reply: WriterReply): void {
    const pending = this.#pending;
    if (pending === undefined || pending.seq !== reply.seq) {
      this.#stop(`it answered request ${reply.seq}, which was not asked`);
      return;
    }
    this.#pending = undefined;
    this.#asyncReplies.unref();
    pending.resolve(reply);
  }

  #unwrap(reply: WriterReply): unknown {
    this.#inTransaction = reply.inTransaction;
    if (reply.error !== undefined) throw fromWire(reply.error);
    return reply.value;
  }

  /** The thread is gone: fail what waits, refuse what comes, tell the owner once. */
  #stop(why: string): BatonError {
    if (this.#stopped !== undefined) return this.#stopped;
    const error = new BatonError(
      'unavailable',
      `the SQLite writer thread stopped (${why}): nothing it had not committed is applied`,
    );
    this.#stopped = error;
    this.#inTransaction = false;
    liveWriterThreads.delete(this);
    const pending = this.#pending;
    this.#pending = undefined;
    this.#asyncReplies.close();
    if (this.#closing) {
      // Asked to close, it did (its loop ends only after closing the connection); the 'exit'
      // event may simply have overtaken the answer.
      pending?.resolve({ seq: pending.seq, inTransaction: false });
      return error;
    }
    pending?.reject(error);
    this.#onStop?.(error);
    return error;
  }
}
