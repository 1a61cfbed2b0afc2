/**
 * The sandbox's single source of truth: payments by (account, key) and by reference, keys in flight,
 * and the append-only effect ledger. Effect counts are derived from ledger entries only, and pruning
 * never touches the ledger: the oracle a duplicate test reads stays true after retention drops the
 * payment from the API (DESIGN.md §4).
 */
import type { Sha256Digest } from '../../core/digest.js';
import type { IdSource } from '../../core/ids.js';
import { formatRfc3339 } from '../../core/time.js';
import { settledStatus, type Behaviour, type EffectEntry, type JsonRecord, type Payment } from './model.js';

export interface AcceptInput {
  account: string;
  key: string;
  request: JsonRecord;
  requestDigest: Sha256Digest;
  behaviour: Behaviour;
  dropWebhook: boolean;
  nowMs: number;
  settleAtMs: number;
  render: (p: Payment) => string;
}

const scoped = (account: string, key: string): string => `${account}\u0000${key}`;

export class Ledger {
  readonly #ids: IdSource;
  #seq = 0;
  /** Payments in creation order; pruning removes from the front. */
  #payments: Payment[] = [];
  readonly #byKey = new Map<string, Payment>();
  readonly #byReference = new Map<string, Payment>();
  readonly #pending = new Set<Payment>();
  readonly #inFlight = new Map<string, Sha256Digest>();
  readonly #prunedKeys = new Map<string, number>();
  readonly #prunedReferences = new Map<string, number>();
  readonly #effects: EffectEntry[] = [];
  readonly #effectCounts = new Map<string, number>();

  constructor(ids: IdSource) {
    this.#ids = ids;
  }

  find(account: string, key: string): Payment | undefined {
    return this.#byKey.get(scoped(account, key));
  }

  byReference(account: string, reference: string): Payment | undefined {
    const p = this.#byReference.get(reference);
    return p?.account === account ? p : undefined;
  }

  /** When the key's payment was pruned, if it was (undefined: no record either way). */
  prunedKeyAt(account: string, key: string): number | undefined {
    return this.#prunedKeys.get(scoped(account, key));
  }

  prunedReferenceAt(account: string, reference: string): number | undefined {
    return this.#prunedReferences.get(scoped(account, reference));
  }

  inFlightDigest(account: string, key: string): Sha256Digest | undefined {
    return this.#inFlight.get(scoped(account, key));
  }

  /** Whether a request with this key (in any account) is being processed right now. */
  keyInFlight(key: string): boolean {
    return [...this.#inFlight.keys()].some((k) => k.endsWith(`\u0000${key}`));
  }

  reserve(account: string, key: string, digest: Sha256Digest): void {
    this.#inFlight.set(scoped(account, key), digest);
  }

  release(account: string, key: string): void {
    this.#inFlight.delete(scoped(account, key));
  }

  /** Accept a new payment; the effect is applied now unless it is canceled before processing. */
  accept(input: AcceptInput): Payment {
    const id = scoped(input.account, input.key);
    const payment: Payment = {
      seq: ++this.#seq,
      account: input.account,
      key: input.key,
      reference: this.#ids.id('pay'),
      request: input.request,
      requestDigest: input.requestDigest,
      createdAtMs: input.nowMs,
      settleAtMs: input.settleAtMs,
      behaviour: input.behaviour,
      dropWebhook: input.dropWebhook,
      status: 'pending',
      lookups: 0,
      effectSeq: undefined,
      announced: undefined,
      response: '',
    };
    if (input.behaviour.kind !== 'canceled_before_processing') {
      payment.effectSeq = this.#applyEffect(payment, input.nowMs);
    }
    this.#payments.push(payment);
    this.#byKey.set(id, payment);
    this.#byReference.set(payment.reference, payment);
    this.#prunedKeys.delete(id);
    this.#inFlight.delete(id);
    if (input.settleAtMs <= input.nowMs) payment.status = settledStatus(input.behaviour);
    else this.#pending.add(payment);
    payment.response = input.render(payment);
    return payment;
  }

  #applyEffect(p: Payment, nowMs: number): number {
    const entry: EffectEntry = {
      seq: this.#effects.length + 1,
      account: p.account,
      key: p.key,
      reference: p.reference,
      amount: p.request['amount'] as number,
      currency: p.request['currency'] as string,
      applied_at: formatRfc3339(nowMs),
    };
    this.#effects.push(entry);
    this.#effectCounts.set(p.key, (this.#effectCounts.get(p.key) ?? 0) + 1);
    return entry.seq;
  }

  /** Settle every pending payment whose time has come; returns those that changed. */
  settleDue(nowMs: number): Payment[] {
    const settled: Payment[] = [];
    for (const p of this.#pending) {
      if (p.settleAtMs <= nowMs) {
        p.status = settledStatus(p.behaviour);
        this.#pending.delete(p);
        settled.push(p);
      }
    }
    return settled;
  }

  /** Drop payments created before the horizon from the API (never from the effect ledger). */
  prune(horizonMs: number, nowMs: number): number {
    let n = 0;
    while (this.#payments.length > 0 && this.#payments[0]!.createdAtMs < horizonMs) {
      const p = this.#payments.shift()!;
      this.#byKey.delete(scoped(p.account, p.key));
      this.#byReference.delete(p.reference);
      this.#pending.delete(p);
      this.#prunedKeys.set(scoped(p.account, p.key), nowMs);
      this.#prunedReferences.set(scoped(p.account, p.reference), nowMs);
      n += 1;
    }
    return n;
  }

  /** One page of an account's payments in creation order, after `startingAfter` if given. */
  list(account: string, limit: number, startingAfter?: Payment): { data: Payment[]; hasMore: boolean } {
    const mine = this.#payments.filter(
      (p) => p.account === account && (!startingAfter || p.seq > startingAfter.seq),
    );
    return { data: mine.slice(0, limit), hasMore: mine.length > limit };
  }

  /** Effects applied for `key` (in `account` only, when given). */
  effectCount(key: string, account?: string): number {
    if (account === undefined) return this.#effectCounts.get(key) ?? 0;
    return this.#effects.filter((e) => e.key === key && e.account === account).length;
  }

  effects(key?: string): readonly EffectEntry[] {
    return key === undefined ? [...this.#effects] : this.#effects.filter((e) => e.key === key);
  }
}
