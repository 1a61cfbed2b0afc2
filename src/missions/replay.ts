/**
 * SET `jti` replay (MSG-01, C-A18): a jti is one-time for at least the SET's validity window.
 * The port answers `new` the first time, `duplicate` for the same (iss, jti) with the same bytes
 * (an RFC 8935 redelivery: acknowledged, nothing reapplied) and `conflict` for the same (iss, jti)
 * with other bytes (refused `invalid_request`). The harness's stored implementation is
 * `msn_sets_seen` (UNIQUE iss, jti) written in the same transaction as the view.
 */
export type SeenOutcome = 'new' | 'duplicate' | 'conflict';

export interface SetReplayPort {
  seen(iss: string, jti: string, digest: string, expiresAtMs: number): Promise<SeenOutcome>;
}

export class InMemorySetReplay implements SetReplayPort {
  readonly #seen = new Map<string, { digest: string; until: number }>();
  readonly #retainMs: number;
  readonly #now: () => number;
  #calls = 0;

  /** Entries are kept `retainMs` past the SET's `exp` (default 30 s, the skew) before pruning. */
  constructor(now: () => number, retainMs = 30_000) {
    this.#now = now;
    this.#retainMs = retainMs;
  }

  seen(iss: string, jti: string, digest: string, expiresAtMs: number): Promise<SeenOutcome> {
    const now = this.#now();
    // Pruning walks the map, so it runs once per 256 calls; an expired entry lingering is harmless.
    if (++this.#calls % 256 === 0)
      for (const [k, entry] of this.#seen) if (entry.until < now) this.#seen.delete(k);
    const key = JSON.stringify([iss, jti]);
    const found = this.#seen.get(key);
    const known = found !== undefined && found.until >= now ? found : undefined;
    if (known === undefined) {
      this.#seen.set(key, { digest, until: expiresAtMs + this.#retainMs });
      return Promise.resolve('new');
    }
    return Promise.resolve(known.digest === digest ? 'duplicate' : 'conflict');
  }
}
