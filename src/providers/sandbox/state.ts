/**
 * The sandbox's in-memory state and its clock. Everything the routes decide goes through the Ledger
 * (the single source of truth); `tick` advances the world (settle due payments, prune past the
 * retention horizon) before each request and on a timer.
 */
import type { Clock } from '../../core/clock.js';
import type { IdSource } from '../../core/ids.js';
import { FaultBook } from './faults.js';
import type { SandboxKeys } from './keys.js';
import { Ledger } from './ledger.js';
import { paymentView, reportedStatus, type Payment } from './model.js';
import { WebhookDispatcher } from './webhooks.js';

export interface StateOptions {
  accounts: readonly string[];
  otherAccount: string;
  keys: SandboxKeys;
  clock: Clock;
  ids: IdSource;
  retentionMs: number;
  settleDelayMs: number;
  webhookUrls: readonly string[];
  adminToken: string;
}

export class SandboxState {
  readonly ledger: Ledger;
  readonly faults = new FaultBook();
  readonly webhooks: WebhookDispatcher;
  readonly accounts: ReadonlySet<string>;
  readonly abort = new AbortController();
  #offsetMs = 0;

  constructor(readonly options: StateOptions) {
    this.ledger = new Ledger(options.ids);
    this.accounts = new Set(options.accounts);
    this.webhooks = new WebhookDispatcher(options.keys, () => this.now(), options.ids, options.webhookUrls);
  }

  /** The sandbox's wall clock: the injected clock plus whatever /admin/clock has added. */
  now(): number {
    return this.options.clock.wallMs() + this.#offsetMs;
  }

  advance(ms: number): void {
    this.#offsetMs += ms;
    this.tick();
  }

  horizonMs(): number {
    return this.now() - this.options.retentionMs;
  }

  tick(): number {
    for (const p of this.ledger.settleDue(this.now())) this.announce(p);
    return this.ledger.prune(this.horizonMs(), this.now());
  }

  /** Send a webhook when the status the wire reports has changed since the last announcement. */
  announce(p: Payment): void {
    const status = reportedStatus(p);
    if (status === 'pending' || status === p.announced) return;
    p.announced = status;
    this.webhooks.emit(paymentView(p, status, this.now()), status, p.dropWebhook);
  }
}
