/**
 * Domain-wide pending and in-flight limits without a hot row (AOC-REQ-006, AOC-CASE-012;
 * docs/store.md, "Domain-wide limits"). The domain's open counts are split over OPEN_STRIPES rows
 * of `aoc_open_stripes`; stripe i may count at most its share of a limit L:
 *   cap(L, i) = floor(L / S) + (i < L mod S ? 1 : 0)      (the shares sum to exactly L)
 * A new pending (or in-flight) occurrence takes one unit in a stripe that is below its share, with a
 * compare-and-set UPDATE that holds that one stripe row until commit. So:
 * - safety: the committed domain count, the sum over stripes, never exceeds L (each stripe ≤ its
 *   share), whatever runs concurrently on any number of servers;
 * - no false refusal: a command is refused only after every stripe was seen at its share, i.e. when
 *   the committed domain count had reached L;
 * - concurrency: two transactions wait for each other only when they touch the same stripe.
 * The occurrence remembers its stripe (`open_stripe`) so that leaving pending or in flight gives
 * the unit back where it was taken.
 */
import { BatonError } from '../core/errors.js';
import { deferred, type DeferredWrite, type Transaction } from './engine.js';
import { CLAIM_PENDING_TO_IN_FLIGHT } from './migrations/024_one_stripe_write.js';

/** How many stripes split the domain's counts (rows inserted by migration 004; never changed). */
export const OPEN_STRIPES = 64;

export type OpenKind = 'pending' | 'in_flight';

/** The share of limit `limit` that stripe `stripe` may hold. */
export function stripeCap(limit: number, stripe: number): number {
  return Math.floor(limit / OPEN_STRIPES) + (stripe < limit % OPEN_STRIPES ? 1 : 0);
}

/** Where an occurrence's count goes first: spread by its id (FNV-1a), so writers rarely meet. */
export function preferredStripe(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % OPEN_STRIPES;
}

/** The refusal the occurrences machine gives for the same limit (machine/limits.ts). */
export function domainLimitError(kind: OpenKind, limit: number): BatonError {
  return kind === 'pending'
    ? new BatonError('limit_pending_exceeded', 'the domain holds its maximum of pending occurrences', {
        scope: 'domain',
        limit,
      })
    : new BatonError('limit_in_flight_exceeded', 'the domain holds its maximum of in-flight occurrences', {
        scope: 'domain',
        limit,
      });
}

const num = (v: number | string | null): number => Number(v ?? 0);

/** A deferred pending claim that nothing has touched the stripes after (`OpenStripes`). */
interface WaitingClaim {
  readonly write: DeferredWrite;
  readonly stripe: number;
  readonly cap: number;
}

/** Each stripe's committed counts as a lock call read them (occurrences-prefetch.ts). */
export type StripeCounts = Readonly<Record<OpenKind, readonly number[]>>;

/** The stripe rows of one transaction. */
export class OpenStripes {
  readonly #tx: Transaction;
  /** The last stripe statement deferred, if it was a pending claim: an entry may join it. */
  #waitingClaim: WaitingClaim | undefined;
  /** What the stripes held when this transaction's lock call read them, if it did. */
  #seen: StripeCounts | undefined;

  constructor(tx: Transaction) {
    this.#tx = tx;
  }

  /**
   * The stripes' committed counts, read without a lock (migration 025): a deferred claim goes to
   * a stripe that had room then instead of one already at its share, whose failed guard would run
   * the whole transaction again (`claim`). Only a choice: the claim's own guard still decides.
   */
  seen(counts: StripeCounts | undefined): void {
    this.#seen = counts;
  }

  /**
   * Where a claim goes first: `preferred`, unless the stripes' counts as last read show it at its
   * share and another below (the next one after it, wrapping, so fallers spread).
   */
  #first(kind: OpenKind, limit: number, preferred: number): number {
    const counts = this.#seen?.[kind];
    if (counts === undefined || this.#tx.deferrable !== true) return preferred;
    for (let i = 0; i < OPEN_STRIPES; i++) {
      const stripe = (preferred + i) % OPEN_STRIPES;
      if ((counts[stripe] ?? Number.POSITIVE_INFINITY) < stripeCap(limit, stripe)) return stripe;
    }
    return preferred;
  }

  /** The committed domain totals (what a decision before the claim compares with the limits). */
  async totals(): Promise<{ pending: number; inFlight: number }> {
    const r = await this.#tx.get<{ p: number | string | null; f: number | string | null }>(
      'SELECT SUM(pending) AS p, SUM(in_flight) AS f FROM aoc_open_stripes',
    );
    return { pending: num(r?.p ?? 0), inFlight: num(r?.f ?? 0) };
  }

  async #take(kind: OpenKind, stripe: number, limit: number, from?: number): Promise<boolean> {
    const cap = stripeCap(limit, stripe);
    if (cap <= 0) return false;
    const claim = this.#waitingClaim;
    this.#waitingClaim = undefined;
    if (kind === 'in_flight' && from === stripe && claim?.stripe === stripe && this.#join(claim, cap))
      return true;
    // Moving pending → in flight within one stripe is one statement, so one row lock.
    const move = from === stripe ? 'pending = pending - 1, ' : '';
    const sql = `UPDATE aoc_open_stripes SET ${move}${kind} = ${kind} + 1 WHERE stripe = ? AND ${kind} < ?`;
    // Deferred, the claim is assumed to succeed; if the stripe is full, the whole transaction runs
    // again statement by statement and takes the fallback below (engine.ts `defer`).
    const write = deferred(this.#tx, sql, [stripe, cap], { expect: 1 });
    if (write !== undefined) {
      if (kind === 'pending' && from === undefined) this.#waitingClaim = { write, stripe, cap };
      return true;
    }
    const { changes } = await this.#tx.run(sql, [stripe, cap]);
    return changes === 1;
  }

  /**
   * An entry's move to in flight, written into the waiting pending claim of the same stripe
   * (create-and-enter): one statement with both guards on the row as it was, which is what the
   * claim then the move check, since the claim changes no in-flight count (migration 024). Only
   * where that statement is static in this database and no other stripe statement came between;
   * false, having changed nothing, otherwise. If a guard fails, the transaction runs again
   * statement by statement, claim and move apart, as before (engine.ts `defer`).
   */
  #join(claim: WaitingClaim, cap: number): boolean {
    if (this.#tx.sendsStatic?.(CLAIM_PENDING_TO_IN_FLIGHT) !== true) return false;
    return claim.write.amend([claim.stripe, claim.cap, cap], CLAIM_PENDING_TO_IN_FLIGHT);
  }

  /**
   * Take one unit of `kind` under `limit`: in `preferred` if it has room (where the lock call read
   * the stripes' counts, the first stripe from `preferred` on that had room then), else in the
   * first stripe found below its share. Undefined when every stripe is at its share (the domain is
   * at the limit). `from`: the stripe whose pending unit this in-flight one replaces (entry),
   * released here.
   */
  async claim(kind: OpenKind, limit: number, preferred: number, from?: number): Promise<number | undefined> {
    const first = this.#first(kind, limit, preferred);
    if (await this.#take(kind, first, limit, from)) return first;
    const rows = await this.#tx.all<{ stripe: number | string; n: number | string }>(
      `SELECT stripe, ${kind} AS n FROM aoc_open_stripes`,
    );
    const open = rows
      .map((r) => ({ stripe: num(r.stripe), n: num(r.n) }))
      .filter((r) => r.stripe !== first && r.n < stripeCap(limit, r.stripe))
      .map((r) => r.stripe)
      // Start after `preferred` and wrap, so servers that fall back spread instead of meeting.
      .sort(
        (a, b) =>
          ((a - preferred + OPEN_STRIPES) % OPEN_STRIPES) - ((b - preferred + OPEN_STRIPES) % OPEN_STRIPES),
      );
    for (const stripe of open) {
      if (await this.#take(kind, stripe, limit, from)) return stripe;
    }
    return undefined;
  }

  /** Give a unit back (leaving pending or in flight): never refused. */
  async release(kind: OpenKind, stripe: number): Promise<void> {
    this.#waitingClaim = undefined;
    const sql = `UPDATE aoc_open_stripes SET ${kind} = ${kind} - 1 WHERE stripe = ?`;
    if (!deferred(this.#tx, sql, [stripe])) await this.#tx.run(sql, [stripe]);
  }

  /** Count one more without a limit: an observation that reopens a resolved occurrence is never refused. */
  async add(kind: OpenKind, stripe: number): Promise<void> {
    this.#waitingClaim = undefined;
    const sql = `UPDATE aoc_open_stripes SET ${kind} = ${kind} + 1 WHERE stripe = ?`;
    if (!deferred(this.#tx, sql, [stripe])) await this.#tx.run(sql, [stripe]);
  }
}
