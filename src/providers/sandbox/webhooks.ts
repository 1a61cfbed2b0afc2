/**
 * Webhook status events: one signed POST per configured URL, no retries (a lost event is lost until
 * an operator replays it through /admin/webhooks/replay). Signed like responses, with the
 * receiver's own path in the signed string (docs/sandbox.md "Webhooks").
 */
import type { IdSource } from '../../core/ids.js';
import { formatRfc3339 } from '../../core/time.js';
import { signatureHeaders, type SandboxKeys } from './keys.js';
import type { JsonRecord, PaymentStatus } from './model.js';
import { sandboxSignedString } from './signature.js';

const DELIVERY_TIMEOUT_MS = 5_000;

export interface WebhookDelivery {
  url: string;
  at: string;
  result: 'delivered' | 'rejected' | 'failed' | 'dropped';
  status?: number;
  /** The error's name when the request itself failed (TimeoutError, AbortError, TypeError…). */
  error?: string;
  replay: boolean;
}

export interface WebhookEvent {
  id: string;
  type: `payment.${PaymentStatus}`;
  account: string;
  key: string;
  reference: string;
  body: string;
  deliveries: WebhookDelivery[];
}

export class WebhookDispatcher {
  urls: string[];
  readonly #events: WebhookEvent[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  readonly #abort = new AbortController();

  constructor(
    private readonly keys: SandboxKeys,
    private readonly now: () => number,
    private readonly ids: IdSource,
    urls: readonly string[] = [],
  ) {
    this.urls = [...urls];
  }

  /** Record a status event and deliver it once to every URL (or drop it: `drop_webhook`). */
  emit(view: JsonRecord, status: PaymentStatus, drop: boolean): WebhookEvent {
    const nowMs = this.now();
    const id = this.ids.id('evt');
    const type = `payment.${status}` as const;
    const body = JSON.stringify({ id, object: 'event', type, created_at: formatRfc3339(nowMs), data: view });
    const event: WebhookEvent = {
      id,
      type,
      account: String(view['account']),
      key: String(view['idempotency_key']),
      reference: String(view['reference']),
      body,
      deliveries: [],
    };
    this.#events.push(event);
    for (const url of this.urls) {
      if (drop) event.deliveries.push({ url, at: formatRfc3339(nowMs), result: 'dropped', replay: false });
      else void this.#track(this.#deliver(event, url, false));
    }
    return event;
  }

  /** Deliver matching events again (ignoring `drop_webhook`) and report what happened. */
  async replay(filter: { eventId?: string; key?: string }): Promise<WebhookDelivery[]> {
    const events = this.#events.filter((e) => e.id === filter.eventId || e.key === filter.key);
    const runs = events.flatMap((e) => this.urls.map((url) => this.#deliver(e, url, true)));
    await Promise.all(runs.map((run) => this.#track(run)));
    return events.flatMap((e) => e.deliveries.filter((d) => d.replay));
  }

  events(): readonly WebhookEvent[] {
    return this.#events;
  }

  /** Wait until every delivery started so far has finished. */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  async close(): Promise<void> {
    this.#abort.abort();
    await this.idle();
  }

  #track(run: Promise<void>): Promise<void> {
    this.#inFlight.add(run);
    void run.finally(() => this.#inFlight.delete(run));
    return run;
  }

  async #deliver(event: WebhookEvent, url: string, replay: boolean): Promise<void> {
    const target = new URL(url);
    const nowMs = this.now();
    const signed = sandboxSignedString({
      method: 'POST',
      path: target.pathname + target.search,
      body: event.body,
    });
    const record: WebhookDelivery = { url, at: formatRfc3339(nowMs), result: 'failed', replay };
    try {
      const response = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signatureHeaders(this.keys, signed, nowMs) },
        body: event.body,
        signal: AbortSignal.any([this.#abort.signal, AbortSignal.timeout(DELIVERY_TIMEOUT_MS)]),
      });
      await response.arrayBuffer();
      record.status = response.status;
      record.result = response.ok ? 'delivered' : 'rejected';
    } catch (error) {
      // A failed delivery is recorded, not retried: single delivery is the documented contract.
      record.result = 'failed';
      record.error = error instanceof Error ? error.name : 'unknown';
    }
    event.deliveries.push(record);
  }
}
