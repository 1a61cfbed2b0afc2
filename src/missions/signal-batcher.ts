/**
 * Natural batching of verified lifecycle SETs that arrive together (issue 11 §8; A3.4 steps 5–7):
 * while one batch's transaction is in flight, arriving SETs wait; when it has ended, all of them
 * go in ONE `applyTakenSignals` transaction, in their order of arrival. Concurrent RFC 8935
 * pushes, which would each pay a transaction of their own on the single main thread (its view
 * read, its evidence heads, its savepoint, its share of a COMMIT), share one instead, as an RFC
 * 8936 poll answer does. No timer: a lone SET starts after one turn of the event loop (#gather).
 *
 * What each caller is told is its own SET's answer, and only after the COMMIT of the transaction
 * that applied it (a push is acknowledged only once durable, A3.4). The transaction decides the
 * batch exactly as one SET after another (a replayed `jti` is a duplicate or a conflict, a
 * version going backwards is ignored) and isolates failures: a SET that cannot be applied
 * rejects only its own caller, with its own error.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { BatonError } from '../core/errors.js';
import type { BatchedSignal, SignalAnswer } from './service.js';
import type { VerifiedMissionSignal } from './verified.js';

/** More turns of the event loop a batch waits while SETs keep arriving (src/store/sqlite.ts too). */
const MAX_GATHER_TURNS = 4;

/**
 * One turn of the event loop, and again while the last one brought more waiting work (`waiting()`
 * grew), at most MAX_GATHER_TURNS more; no timer (SignalBatcher's gather, below).
 */
export async function gatherArrivals(waiting: () => number): Promise<void> {
  let seen = waiting();
  await nextTurn();
  for (let turns = 0; turns < MAX_GATHER_TURNS && waiting() > seen; turns++) {
    seen = waiting();
    await nextTurn();
  }
}

export interface SignalBatcherOptions {
  /**
   * ONE transaction for the SETs `take()` answers once it has begun, one answer per SET in that
   * order: `MissionsService.applyTakenSignals`. Taking them only then lets every SET that arrived
   * while the engine gathered its group commit join this batch instead of waiting for the next.
   */
  readonly applyTaken: (take: () => readonly VerifiedMissionSignal[]) => Promise<readonly BatchedSignal[]>;
  /**
   * Run beside each batch, started with it (say, the stream's liveness, A3.5: its SETs are
   * verified), so that its own transaction shares the batch's COMMIT on SQLite; the batch's
   * callers are told once both have ended. Its failure is the answer of every caller whose SET
   * applied: they are rejected with its error, as a push whose liveness write failed was before
   * (the SET is committed; its redelivery answers duplicate).
   */
  readonly alongside?: () => Promise<void>;
  /** The most SETs one transaction takes (default 64); the rest wait for the next. */
  readonly maxBatch?: number;
}

/**
 * Batches applied since the batcher was made and the SETs they carried (benches, operations): one
 * transaction each, unless a batch failed and its SETs were applied alone.
 */
export interface SignalBatcherStats {
  readonly batches: number;
  readonly signals: number;
  readonly largestBatch: number;
}

/** `fn()`'s promise, or a rejected one if it threw before returning one (never throws itself). */
async function settle<T>(fn: () => Promise<T>): Promise<T> {
  return fn();
}

interface Waiting {
  readonly signal: VerifiedMissionSignal;
  readonly resolve: (answer: SignalAnswer) => void;
  readonly reject: (error: unknown) => void;
}

export class SignalBatcher {
  readonly #applyTaken: SignalBatcherOptions['applyTaken'];
  readonly #alongside: SignalBatcherOptions['alongside'];
  readonly #max: number;
  readonly #queue: Waiting[] = [];
  #busy = false;
  #stats = { batches: 0, signals: 0, largestBatch: 0 };

  constructor(o: SignalBatcherOptions) {
    const max = o.maxBatch ?? 64;
    if (!Number.isInteger(max) || max < 1)
      throw new BatonError('config_invalid', 'a signal batch holds at least one SET', { maxBatch: max });
    this.#applyTaken = o.applyTaken;
    this.#alongside = o.alongside;
    this.#max = max;
  }

  get stats(): SignalBatcherStats {
    return { ...this.#stats };
  }

  /** Apply `signal` with whatever else is waiting; its answer once its transaction committed. */
  apply(signal: VerifiedMissionSignal): Promise<SignalAnswer> {
    return new Promise<SignalAnswer>((resolve, reject) => {
      this.#queue.push({ signal, resolve, reject });
      if (!this.#busy) void this.#drain();
    });
  }

  /**
   * One batch at a time, oldest SETs first, until nobody waits. A batch after the first starts as
   * soon as the one before has ended: its SETs have already waited a transaction. Never rejects.
   */
  async #drain(): Promise<void> {
    this.#busy = true;
    try {
      await this.#gather();
      while (this.#queue.length > 0) {
        let batch: Waiting[] | undefined;
        let signals: VerifiedMissionSignal[] = [];
        // The same SETs however often it is asked (the engine may run the function again).
        const take = (): readonly VerifiedMissionSignal[] => {
          if (batch === undefined) {
            batch = this.#queue.splice(0, this.#max);
            signals = batch.map((w) => w.signal);
          }
          return signals;
        };
        const [applied, beside] = await Promise.allSettled([
          settle(() => this.#applyTaken(take)),
          settle(async () => this.#alongside?.()),
        ]);
        take(); // a batch that failed before it began still answers the SETs it stood for
        this.#answer(batch ?? [], applied, beside);
      }
    } finally {
      this.#busy = false;
    }
  }

  /**
   * Before a batch that starts from idle, let the event loop turn once, and again while the last
   * turn brought more SETs (at most MAX_GATHER_TURNS more), as the SQLite engine gathers its
   * group commit: concurrent pushes finish their verification over several turns, and the
   * engine's own gather cannot see them (they wait here, not in its queue). No timer: a lone push,
   * whose turn brings nobody, goes on after one turn. Measured at 16 concurrent pushes: without
   * it most batches held one SET (the first arrival), with it most held all sixteen.
   */
  #gather(): Promise<void> {
    return gatherArrivals(() => this.#queue.length);
  }

  #answer(
    batch: readonly Waiting[],
    applied: PromiseSettledResult<readonly BatchedSignal[]>,
    beside: PromiseSettledResult<void>,
  ): void {
    let answers: readonly BatchedSignal[];
    try {
      if (applied.status === 'rejected') throw applied.reason;
      answers = applied.value;
      if (answers.length !== batch.length)
        throw new BatonError('internal', 'a signal batch was answered for another number of SETs', {
          sets: batch.length,
          answers: answers.length,
        });
    } catch (error) {
      // Nothing says which SETs committed: every caller gets the error, none an answer.
      for (const w of batch) w.reject(error);
      return;
    }
    this.#count(batch.length);
    batch.forEach((w, i) => {
      const a = answers[i] as BatchedSignal;
      if (!a.ok) w.reject(a.error);
      else if (beside.status === 'rejected') w.reject(beside.reason);
      else w.resolve({ result: a.result, gap: a.gap, stopped: a.stopped });
    });
  }

  #count(size: number): void {
    this.#stats = {
      batches: this.#stats.batches + 1,
      signals: this.#stats.signals + size,
      largestBatch: Math.max(this.#stats.largestBatch, size),
    };
  }
}
