/**
 * The Stripe-compatible flavour's in-memory state: intents, refunds, the effect ledger (the
 * duplicate oracle), idempotency keys and the clock (the injected one plus admin advances).
 */
import type { Clock } from '../../../core/clock.js';
import type { IdSource } from '../../../core/ids.js';
import { IdempotencyStore } from './idempotency.js';
import type { PaymentIntent, Refund, StripeEffect } from './model.js';
import { StripeWebhooks } from './webhooks.js';

export interface StripeStateOptions {
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly idempotencyTtlMs: number;
  readonly webhookSecret: string;
  readonly webhookUrls: readonly string[];
}

export class StripeState {
  readonly intents = new Map<string, PaymentIntent>();
  readonly refunds = new Map<string, Refund>();
  readonly effects: StripeEffect[] = [];
  readonly idempotency: IdempotencyStore;
  readonly abort = new AbortController();
  #offsetMs = 0;

  readonly webhooks: StripeWebhooks;

  constructor(readonly options: StripeStateOptions) {
    this.idempotency = new IdempotencyStore(options.idempotencyTtlMs);
    this.webhooks = new StripeWebhooks(
      options.webhookSecret,
      options.webhookUrls,
      () => this.nowMs(),
      () => this.id('evt'),
    );
  }

  nowMs(): number {
    return this.options.clock.wallMs() + this.#offsetMs;
  }

  nowSeconds(): number {
    return Math.floor(this.nowMs() / 1000);
  }

  advance(ms: number): void {
    this.#offsetMs += ms;
  }

  id(prefix: string): string {
    // Stripe ids are `pi_…`, `re_…`, `ch_…`, `evt_…`: the IdSource gives `prefix_<hex>`.
    return this.options.ids.id(prefix);
  }

  recordEffect(effect: Omit<StripeEffect, 'seq' | 'applied_at'>): void {
    this.effects.push({ ...effect, seq: this.effects.length + 1, applied_at: this.nowSeconds() });
  }

  effectCount(idempotencyKey: string): number {
    return this.effects.filter((e) => e.idempotency_key === idempotencyKey).length;
  }
}
