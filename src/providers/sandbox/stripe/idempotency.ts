/**
 * Stripe's documented idempotency semantics: a key's first answer is saved once the endpoint
 * started executing (successes and errors such as a declined card alike; a request refused by
 * validation saves nothing); the same key with the same parameters replays that answer with
 * `Idempotent-Replayed: true`; the same key with other parameters or on another endpoint is a
 * 400 `idempotency_error`; a request while the key's first is in flight is a 409; keys expire
 * (24 h by default) and may then be used afresh. Keys are scoped to the API key.
 */
import { digestEquals, type Sha256Digest } from '../../../core/digest.js';
import { stripeError, type StripeAnswer } from './errors.js';

interface Saved {
  readonly endpoint: string;
  readonly params: Sha256Digest;
  readonly atMs: number;
  answer: StripeAnswer | undefined;
}

export type IdempotencyDecision = { kind: 'execute' } | { kind: 'answer'; answer: StripeAnswer };

export class IdempotencyStore {
  readonly #keys = new Map<string, Saved>();

  constructor(private readonly ttlMs: number) {}

  /** Decide a keyed request; 'execute' marks the key in flight until `save` or `forget`. */
  begin(key: string, endpoint: string, params: Sha256Digest, nowMs: number): IdempotencyDecision {
    const saved = this.#keys.get(key);
    if (saved !== undefined && nowMs - saved.atMs >= this.ttlMs) this.#keys.delete(key);
    const live = this.#keys.get(key);
    if (live === undefined) {
      this.#keys.set(key, { endpoint, params, atMs: nowMs, answer: undefined });
      return { kind: 'execute' };
    }
    if (live.endpoint !== endpoint || !digestEquals(live.params, params)) {
      return {
        kind: 'answer',
        answer: stripeError(
          400,
          'idempotency_error',
          'Keys for idempotent requests can only be used with the same parameters they were first used with.',
        ),
      };
    }
    if (live.answer === undefined) {
      return {
        kind: 'answer',
        answer: stripeError(
          409,
          'idempotency_error',
          'There is currently another in-progress request using this idempotency key.',
          { code: 'idempotency_key_in_use' },
        ),
      };
    }
    const headers = { ...live.answer.headers, 'idempotent-replayed': 'true' };
    return { kind: 'answer', answer: { ...live.answer, headers } };
  }

  save(key: string, answer: StripeAnswer): void {
    const live = this.#keys.get(key);
    if (live !== undefined) live.answer = answer;
  }

  /** The endpoint did not start executing (validation refused it): nothing is saved. */
  forget(key: string): void {
    const live = this.#keys.get(key);
    if (live?.answer === undefined) this.#keys.delete(key);
  }
}
