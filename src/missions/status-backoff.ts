/**
 * Back-off after a Mission Status 429 (A2.2 `rate_limited`: "unknown, back off"; A7#13 "429 ⇒
 * Retry-After honoured"; MST-06: the issuer SHOULD send `Retry-After` and `retry_after`, and rate
 * limits per consumer). The issuer limits Baton's client as a whole, not one Mission, so the hold
 * is per issuer (one per Status client): until it passes, no Status request of that client is sent,
 * whatever the Mission. In memory, per process: a restart forgets it and at worst costs one more
 * 429. Measured on the monotonic clock (an in-process window, DESIGN.md §9).
 */
import type { Clock } from '../core/clock.js';

/** The longest hold honoured: a hostile or broken `Retry-After` must not park Status for long. */
export const MAX_STATUS_BACKOFF_SEC = 300;
/** The hold when the 429 said nothing readable (no header, no body `retry_after`). */
export const DEFAULT_STATUS_BACKOFF_SEC = 60;
/** A 429 is never followed by an immediate retry, even when it says 0 or names a past date. */
export const MIN_STATUS_BACKOFF_SEC = 1;

/** The seconds Baton waits after a 429 that asked for `retryAfterSec` (null: unreadable or absent). */
export function statusBackoffSeconds(retryAfterSec: number | null): number {
  if (retryAfterSec === null || !Number.isFinite(retryAfterSec)) return DEFAULT_STATUS_BACKOFF_SEC;
  return Math.min(MAX_STATUS_BACKOFF_SEC, Math.max(MIN_STATUS_BACKOFF_SEC, Math.ceil(retryAfterSec)));
}

export class StatusBackoff {
  readonly #clock: Clock;
  /** Monotonic ms before which nothing is sent; undefined when not holding. */
  #until: number | undefined;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Hold for `seconds` from now; a hold already running longer is kept. */
  hold(seconds: number): void {
    const until = this.#clock.monotonicMs() + seconds * 1000;
    this.#until = Math.max(this.#until ?? until, until);
  }

  /** Whole seconds left of the hold (at least 1), or undefined when a request may be sent. */
  remainingSec(): number | undefined {
    if (this.#until === undefined) return undefined;
    const left = this.#until - this.#clock.monotonicMs();
    if (left <= 0) {
      this.#until = undefined;
      return undefined;
    }
    return Math.ceil(left / 1000);
  }
}
