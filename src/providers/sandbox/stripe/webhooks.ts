/**
 * Webhook events in Stripe's shape (`{id, object: "event", type, created, data: {object}, …}`),
 * signed in Stripe's scheme (`Stripe-Signature: t=…,v1=…`, HMAC-SHA256 with the endpoint secret)
 * and POSTed once to every configured URL. No retries: a lost event stays lost, as the status
 * lookups must cope with anyway.
 */
import { signStripePayload, STRIPE_SIGNATURE_HEADER } from '../../webhook-schemes/index.js';

const DELIVERY_TIMEOUT_MS = 5_000;

export interface StripeEventRecord {
  readonly id: string;
  readonly type: string;
  readonly body: string;
  readonly deliveries: { url: string; status?: number; error?: string }[];
}

export class StripeWebhooks {
  urls: string[];
  readonly events: StripeEventRecord[] = [];
  readonly #inFlight = new Set<Promise<void>>();

  constructor(
    readonly secret: string,
    urls: readonly string[],
    private readonly nowMs: () => number,
    private readonly newId: () => string,
  ) {
    this.urls = [...urls];
  }

  emit(type: string, object: Record<string, unknown>, request: { idempotencyKey: string | null }): void {
    const id = this.newId();
    const body = JSON.stringify({
      id,
      object: 'event',
      api_version: '2025-01-27.acacia',
      created: Math.floor(this.nowMs() / 1000),
      data: { object },
      livemode: false,
      pending_webhooks: this.urls.length,
      request: { id: null, idempotency_key: request.idempotencyKey },
      type,
    });
    const record: StripeEventRecord = { id, type, body, deliveries: [] };
    this.events.push(record);
    for (const url of this.urls) this.#track(this.#deliver(record, url));
  }

  async #deliver(record: StripeEventRecord, url: string): Promise<void> {
    const headers = {
      'content-type': 'application/json; charset=utf-8',
      [STRIPE_SIGNATURE_HEADER]: signStripePayload(this.secret, record.body, this.nowMs()),
    };
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers,
        body: record.body,
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      });
      await res.arrayBuffer();
      record.deliveries.push({ url, status: res.status });
    } catch (error) {
      record.deliveries.push({ url, error: error instanceof Error ? error.name : 'Error' });
    }
  }

  #track(p: Promise<void>): void {
    this.#inFlight.add(p);
    void p.finally(() => this.#inFlight.delete(p));
  }

  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }
}
