/**
 * The SQLite writer thread (docs/store.md, "The writer thread"; issue 16 §3): it owns the write
 * connection, so the fsync of every COMMIT (`synchronous = FULL`) blocks this thread, never the
 * engine's event loop. It runs what the engine asks, one request at a time, and nothing else: the
 * transactions themselves, their order and group commit are decided by the engine (sqlite.ts).
 * The loop is synchronous and blocks in Atomics.wait between requests: this thread has nothing
 * else to do, and waking it must cost microseconds, not a turn of an event loop.
 */
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { BatonError } from '../core/errors.js';
import {
  busyDelay,
  localRunner,
  openWriter,
  StatementCache,
  tryBeginImmediate,
  type Db,
} from './sqlite-connection.js';
import {
  CTL,
  isAsyncRequest,
  toWire,
  type WriterData,
  type WriterReply,
  type WriterRequest,
} from './sqlite-writer-protocol.js';

// Between the statements of one transaction the next request follows within microseconds: look
// for it this many times before sleeping in the kernel (a futex wake costs far more).
const SPIN = 2000;

interface Ports {
  readonly requests: MessagePort;
  readonly syncReplies: MessagePort;
  readonly asyncReplies: MessagePort;
}

function sleepSync(ctl: Int32Array, ms: number): void {
  // Waits on a slot nobody notifies: a plain blocking sleep of this thread.
  if (ms > 0) Atomics.wait(ctl, CTL.stopped, 0, ms);
}

class Writer {
  readonly #db: Db;
  readonly #cache: StatementCache;
  readonly #run;
  readonly #ctl: Int32Array;

  constructor(data: WriterData, ctl: Int32Array) {
    this.#ctl = ctl;
    this.#db = openWriter(data.path, {
      busyTimeoutMs: data.busyTimeoutMs,
      fileMustExist: data.fileMustExist,
    });
    this.#cache = new StatementCache(this.#db, data.statementCacheSize);
    this.#run = localRunner(this.#cache);
  }

  get inTransaction(): boolean {
    return this.#db.inTransaction;
  }

  handle(request: WriterRequest): unknown {
    switch (request.op) {
      case 'all':
        return this.#run.all(request.sql, request.params);
      case 'get':
        return this.#run.get(request.sql, request.params);
      case 'run':
        return this.#run.run(request.sql, request.params);
      case 'exec':
        return this.#run.exec(request.sql);
      case 'begin':
        return this.#begin(request.busyTimeoutMs);
      case 'commit':
        return this.#cache.exec('COMMIT');
      case 'close':
        return this.#close();
    }
  }

  #begin(busyTimeoutMs: number): void {
    const deadline = performance.now() + busyTimeoutMs;
    for (let attempt = 0; !tryBeginImmediate(this.#cache, deadline); attempt++) {
      sleepSync(this.#ctl, busyDelay(attempt, deadline));
    }
  }

  #close(): void {
    if (this.#db.inTransaction) this.#cache.exec('ROLLBACK');
    this.#db.close();
  }
}

function waitForRequest(ctl: Int32Array, seen: number): number {
  for (let spins = 0; ; spins++) {
    const now = Atomics.load(ctl, CTL.request);
    if (now !== seen) return now;
    if (spins >= SPIN) Atomics.wait(ctl, CTL.request, seen, 1000);
  }
}

function answer(ports: Ports, ctl: Int32Array, request: WriterRequest, reply: WriterReply): void {
  if (isAsyncRequest(request)) {
    ports.asyncReplies.postMessage(reply);
    return;
  }
  ports.syncReplies.postMessage(reply);
  Atomics.store(ctl, CTL.reply, reply.seq);
  Atomics.notify(ctl, CTL.reply);
}

function serve(data: WriterData, ports: Ports): void {
  const ctl = new Int32Array(data.ctl);
  let writer: Writer;
  try {
    writer = new Writer(data, ctl);
  } catch (error) {
    answer(ports, ctl, { op: 'exec', sql: '' }, { seq: 1, inTransaction: false, error: toWire(error) });
    return;
  }
  answer(ports, ctl, { op: 'exec', sql: '' }, { seq: 1, inTransaction: false });
  // Nothing was requested before the open was answered: the engine waits for that answer first.
  for (let seen = 0; ;) {
    seen = waitForRequest(ctl, seen);
    const message = receiveMessageOnPort(ports.requests);
    if (message === undefined)
      throw new BatonError('internal', 'writer thread: a request without its message');
    const request = message.message as WriterRequest;
    let reply: WriterReply;
    try {
      const value = writer.handle(request);
      reply = { seq: seen, inTransaction: request.op !== 'close' && writer.inTransaction, value };
    } catch (error) {
      reply = {
        seq: seen,
        inTransaction: request.op !== 'close' && writer.inTransaction,
        error: toWire(error),
      };
    }
    answer(ports, ctl, request, reply);
    if (request.op === 'close') return;
  }
}

const init = (parentPort === null ? undefined : workerData) as (WriterData & Ports) | undefined;
if (init !== undefined) {
  try {
    serve(init, init);
  } catch (error) {
    // Why the loop ended, for the engine to say (it cannot see this thread's 'error' event while
    // it waits): the answer to no request.
    init.syncReplies.postMessage({ seq: -1, inTransaction: false, error: toWire(error) });
    throw error;
  } finally {
    // However the loop ended, a waiting engine must not wait forever (sqlite-writer-thread.ts).
    const ctl = new Int32Array(init.ctl);
    Atomics.store(ctl, CTL.stopped, 1);
    Atomics.notify(ctl, CTL.reply);
  }
}
