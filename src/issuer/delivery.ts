/**
 * SET delivery at the reference issuer (signals draft "Event Stream"): each receiver declares
 * push (RFC 8935, we POST `application/secevent+jwt` with its bearer and retry with backoff on
 * anything but 202 or 400) or poll (RFC 8936, it fetches from its queue and acknowledges), and we
 * honour that method without falling back. Every attempt is logged for tests and the demo.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export type DeliveryMethod = 'push' | 'poll';

export interface Receiver {
  readonly id: string;
  readonly audience: string;
  readonly delivery: DeliveryMethod;
  /** Push: the receiver's endpoint. */
  readonly endpoint: string | null;
  /** Shared secret: we present it when pushing; the receiver presents it to poll and verify. */
  readonly bearer: string;
}

export interface DeliveryRecord {
  readonly receiver: string;
  readonly jti: string;
  readonly attempt: number;
  /** HTTP status, or 0 for a network failure, -1 for a dropped (fault) delivery. */
  readonly status: number;
  readonly body: string | null;
}

export interface DeliveryOptions {
  /** Delays before each retry (default 100, 400, 1600 ms). */
  readonly retryDelaysMs?: readonly number[];
  readonly timeoutMs?: number;
}

interface Queued {
  readonly jti: string;
  readonly set: string;
  /** Handed out by a poll and awaiting acknowledgement. */
  handed: boolean;
}

const bearerDigest = (bearer: string): Buffer => createHash('sha256').update(bearer, 'utf8').digest();

export class Delivery {
  readonly #receivers = new Map<string, Receiver>();
  /** Each receiver's bearer as a SHA-256 digest: what a presented bearer is compared with. */
  readonly #bearerDigests = new Map<string, Buffer>();
  readonly #queues = new Map<string, Queued[]>();
  readonly #log: DeliveryRecord[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  /** Pushes to one receiver go one after another, so they arrive in emission order. */
  readonly #chains = new Map<string, Promise<void>>();
  readonly #o: DeliveryOptions;
  readonly #abort = new AbortController();

  constructor(o: DeliveryOptions = {}) {
    this.#o = o;
  }

  add(receiver: Omit<Receiver, 'id'>): Receiver {
    const full = { ...receiver, id: `rcv_${randomBytes(9).toString('base64url')}` };
    this.#receivers.set(full.id, full);
    this.#bearerDigests.set(full.id, bearerDigest(full.bearer));
    if (full.delivery === 'poll') this.#queues.set(full.id, []);
    return full;
  }

  receiversFor(audience: string): Receiver[] {
    return [...this.#receivers.values()].filter((r) => r.audience === audience);
  }

  /**
   * The receiver presenting `bearer`. SHA-256 digests compared in constant time (equal lengths
   * whatever was presented), every receiver looked at: neither the time to a mismatch nor which
   * receiver matched tells a caller how much of a bearer it guessed.
   */
  byBearer(bearer: string): Receiver | undefined {
    const presented = bearerDigest(bearer);
    let found: Receiver | undefined;
    for (const [id, digest] of this.#bearerDigests) {
      const receiver = this.#receivers.get(id);
      if (timingSafeEqual(presented, digest) && found === undefined) found = receiver;
    }
    return found;
  }

  get log(): readonly DeliveryRecord[] {
    return this.#log;
  }

  dropped(receiver: Receiver, jti: string): void {
    this.#log.push({ receiver: receiver.id, jti, attempt: 0, status: -1, body: null });
  }

  send(receiver: Receiver, jti: string, set: string): void {
    if (receiver.delivery === 'poll') {
      this.#queues.get(receiver.id)!.push({ jti, set, handed: false });
      return;
    }
    const previous = this.#chains.get(receiver.id) ?? Promise.resolve();
    const run: Promise<void> = previous
      .then(() => this.#push(receiver, jti, set))
      .finally(() => this.#inFlight.delete(run));
    this.#chains.set(receiver.id, run);
    this.#inFlight.add(run);
  }

  /** RFC 8936: acknowledge what was handed out, then hand out up to `maxEvents` queued SETs. */
  poll(
    receiver: Receiver,
    ack: readonly string[],
    maxEvents: number,
  ): { sets: Record<string, string>; moreAvailable: boolean } {
    const queue = this.#queues.get(receiver.id) ?? [];
    const acked = new Set(ack);
    const kept = queue.filter((q) => !(q.handed && acked.has(q.jti)));
    queue.splice(0, queue.length, ...kept);
    const sets: Record<string, string> = {};
    let handed = 0;
    for (const q of queue) {
      // A replayed jti may be queued twice: the later copy waits for a later poll.
      if (handed >= maxEvents || Object.hasOwn(sets, q.jti)) continue;
      sets[q.jti] = q.set;
      q.handed = true;
      handed += 1;
      this.#log.push({ receiver: receiver.id, jti: q.jti, attempt: 1, status: 200, body: null });
    }
    return { sets, moreAvailable: queue.length > handed };
  }

  async #push(receiver: Receiver, jti: string, set: string): Promise<void> {
    const delays = this.#o.retryDelaysMs ?? [100, 400, 1600];
    for (let attempt = 1; attempt <= delays.length + 1; attempt++) {
      if (this.#abort.signal.aborted) return;
      const { status, body } = await this.#attempt(receiver, set);
      this.#log.push({ receiver: receiver.id, jti, attempt, status, body });
      if (status === 202 || status === 400) return;
      const delay = delays[attempt - 1];
      if (delay === undefined) return;
      await new Promise((resolve) => setTimeout(resolve, delay).unref());
    }
  }

  async #attempt(receiver: Receiver, set: string): Promise<{ status: number; body: string | null }> {
    try {
      const response = await fetch(receiver.endpoint!, {
        method: 'POST',
        headers: {
          'content-type': 'application/secevent+jwt',
          accept: 'application/json',
          authorization: `Bearer ${receiver.bearer}`,
        },
        body: set,
        redirect: 'manual',
        signal: AbortSignal.any([this.#abort.signal, AbortSignal.timeout(this.#o.timeoutMs ?? 5000)]),
      });
      const text = await response.text();
      return { status: response.status, body: text.slice(0, 1024) };
    } catch {
      return { status: 0, body: null };
    }
  }

  /** Resolves when every push in flight (with its retries) is done. */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  close(): void {
    this.#abort.abort();
  }
}
