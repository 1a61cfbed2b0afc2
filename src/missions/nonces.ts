/**
 * Status request nonces (MST-01, A3.2 step 1): 16 random bytes, base64url, kept in memory for
 * 120 s with the (mission, audience) they were sent for, and usable once. A response is checked
 * against the nonce of its own request; a nonce taken once is gone, so a replayed earlier
 * response (an old nonce) never verifies.
 */
import { randomBytes } from 'node:crypto';

export const NONCE_TTL_MS = 120_000;

interface Pending {
  readonly missionId: string;
  readonly audience: string;
  readonly until: number;
}

export class NonceBook {
  readonly #pending = new Map<string, Pending>();
  readonly #random: () => Buffer;

  constructor(random: () => Buffer = () => randomBytes(16)) {
    this.#random = random;
  }

  issue(missionId: string, audience: string, nowMs: number): string {
    this.#prune(nowMs);
    const nonce = this.#random().toString('base64url');
    this.#pending.set(nonce, { missionId, audience, until: nowMs + NONCE_TTL_MS });
    return nonce;
  }

  /** True once for a live nonce issued for exactly this mission and audience; it is then gone. */
  take(nonce: string, missionId: string, audience: string, nowMs: number): boolean {
    const pending = this.#pending.get(nonce);
    this.#pending.delete(nonce);
    return (
      pending !== undefined &&
      pending.until > nowMs &&
      pending.missionId === missionId &&
      pending.audience === audience
    );
  }

  get size(): number {
    return this.#pending.size;
  }

  #prune(nowMs: number): void {
    for (const [nonce, pending] of this.#pending) if (pending.until <= nowMs) this.#pending.delete(nonce);
  }
}
