/**
 * Replay protection for signed webhooks: a delivery is fresh only inside the tolerance window
 * (checked by the verifier), so remembering every event id seen within that window refuses a
 * captured delivery sent again. A receiver backed by a store keeps the same rule durably (the
 * provider's event id is unique there); this in-memory guard is for one process.
 */
export class WebhookReplayGuard {
  readonly #seen = new Map<string, number>();

  constructor(private readonly toleranceMs: number) {}

  /** 'new' the first time an id is offered inside the window, 'replayed' after. */
  check(eventId: string, nowMs: number): 'new' | 'replayed' {
    this.#prune(nowMs);
    if (this.#seen.has(eventId)) return 'replayed';
    this.#seen.set(eventId, nowMs);
    return 'new';
  }

  #prune(nowMs: number): void {
    // Anything seen more than two windows ago can no longer pass the freshness check.
    const horizon = nowMs - 2 * this.toleranceMs;
    for (const [id, at] of this.#seen) {
      if (at >= horizon) break;
      this.#seen.delete(id);
    }
  }
}
