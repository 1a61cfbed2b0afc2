/**
 * Read-only snapshots whose COMMIT leaves with the connection's next BEGIN (issue 16 §2, docs/store.md
 * "One write per transition"). A `REPEATABLE READ READ ONLY` transaction's COMMIT decides nothing:
 * it only ends the snapshot. Sent on its own it is one more socket write and round trip per read
 * (on this kind of machine a loopback write costs ~0.1–0.2 ms of CPU, docs/scale.md), so the engine
 * returns the read's answer at once and releases the connection with the snapshot still open; the
 * next transaction on that connection sends `COMMIT; BEGIN …` as one message. A connection nobody
 * takes within IDLE_MS gets its COMMIT on its own, so no snapshot stays open longer than that
 * (it would hold back VACUUM and a migration's ACCESS EXCLUSIVE lock).
 */
import type pg from 'pg';

const IDLE_MS = 5;

export class OpenReads {
  /** Idle pooled connections whose read-only transaction is not ended yet. */
  readonly #open = new Set<pg.PoolClient>();
  #timer: NodeJS.Timeout | undefined;

  /** The read on `client` answered and it goes back to the pool with its COMMIT unsent. */
  leaveOpen(client: pg.PoolClient): void {
    this.#open.add(client);
    this.#timer ??= setTimeout(() => this.#flush(), IDLE_MS).unref();
  }

  /** `client` was just checked out: whether its next message must start with the COMMIT. */
  take(client: pg.PoolClient): boolean {
    return this.#open.delete(client);
  }

  /** End every snapshot still open on an idle connection (pipelined: a later BEGIN queues behind). */
  #flush(): void {
    this.#timer = undefined;
    for (const client of this.#open) {
      // A failure means the connection is gone, which ends the snapshot as surely.
      client.query('COMMIT').catch(() => undefined);
    }
    this.#open.clear();
  }

  /** Before the pool closes its connections. */
  close(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#flush();
  }
}
