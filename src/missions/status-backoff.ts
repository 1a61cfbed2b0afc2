/**
 * Back-off after a Mission Status 429 or a 503 that says how long to wait. A 429 (A2.2
 * `rate_limited`: "unknown, back off"; A7#13 "429 ⇒ Retry-After honoured"; MST-06: the issuer
 * SHOULD send `Retry-After` and `retry_after`, and rate limits per consumer) always holds: its
 * `Retry-After`, else a default. A 503 (A2.2 `unavailable`: "AS temporarily cannot serve status")
 * holds only when it carries a readable `Retry-After` (RFC 9110 §10.2.3: on a 503 it is how long
 * the service is expected to be unavailable) or `retry_after`: the Status draft asks for neither
 * on a 503 and names no back-off for it, so a bare 503 is unknown and nothing more — the next
 * check asks again. Either way the issuer, not one Mission, is what cannot answer, so the hold is
 * per issuer (one per Status client): until it passes, no Status request of that client is sent,
 * whatever the Mission, and every check is unknown (fail closed). In memory, per process: a
 * restart forgets it and at worst costs one more 429 or 503. Measured on the monotonic clock (an
 * in-process window, DESIGN.md §9).
 */
import type { Clock } from '../core/clock.js';

/** The longest hold honoured: a hostile or broken `Retry-After` must not park Status for long. */
export const MAX_STATUS_BACKOFF_SEC = 300;
/** The hold when a 429 said nothing readable (no header, no body `retry_after`). */
export const DEFAULT_STATUS_BACKOFF_SEC = 60;
/** A hold is never followed by an immediate retry, even when it says 0 or names a past date. */
export const MIN_STATUS_BACKOFF_SEC = 1;

/** What a held check answers: the reason of the answer that started the hold. */
export type StatusHoldReason = 'rate_limited' | 'unavailable';

/** The seconds Baton waits after a 429 that asked for `retryAfterSec` (null: unreadable or absent). */
export function statusBackoffSeconds(retryAfterSec: number | null): number {
  if (retryAfterSec === null || !Number.isFinite(retryAfterSec)) return DEFAULT_STATUS_BACKOFF_SEC;
  return Math.min(MAX_STATUS_BACKOFF_SEC, Math.max(MIN_STATUS_BACKOFF_SEC, Math.ceil(retryAfterSec)));
}

/**
 * The seconds Baton waits after an answer with `status` that asked for `retryAfterSec`, or
 * undefined when it starts no hold: a 429 always holds (bounded, a default when unreadable); a 503
 * only when it said how long (bounded the same way); any other status never.
 */
export function statusHoldSeconds(status: number, retryAfterSec: number | null): number | undefined {
  if (status === 429) return statusBackoffSeconds(retryAfterSec);
  if (status === 503 && retryAfterSec !== null) return statusBackoffSeconds(retryAfterSec);
  return undefined;
}

export class StatusBackoff {
  readonly #clock: Clock;
  /** Monotonic ms before which nothing is sent; undefined when not holding. */
  #until: number | undefined;
  /** The reason of the answer that set the hold running now (the longer one when two overlap). */
  #reason: StatusHoldReason = 'rate_limited';

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Hold for `seconds` from now; a hold already running longer is kept, with its reason. */
  hold(seconds: number, reason: StatusHoldReason = 'rate_limited'): void {
    const until = this.#clock.monotonicMs() + seconds * 1000;
    if (this.#until !== undefined && this.#until >= until) return;
    this.#until = until;
    this.#reason = reason;
  }

  /** The hold running now: its seconds left (at least 1) and reason; undefined when not holding. */
  held(): { readonly seconds: number; readonly reason: StatusHoldReason } | undefined {
    if (this.#until === undefined) return undefined;
    const left = this.#until - this.#clock.monotonicMs();
    if (left <= 0) {
      this.#until = undefined;
      return undefined;
    }
    return { seconds: Math.ceil(left / 1000), reason: this.#reason };
  }
}
