/**
 * The sandbox provider's records and its wire view of a payment (docs/sandbox.md). The sandbox is a
 * synthetic provider: it knows nothing about Baton's occurrences, only accounts, idempotency keys and
 * payments — the native vocabulary a provider profile maps (AOC "Provider Profile Contract").
 */
import type { Sha256Digest } from '../../core/digest.js';
import { formatRfc3339 } from '../../core/time.js';

export const ENVIRONMENT = 'sandbox';

export const PAYMENT_STATUSES = ['pending', 'succeeded', 'failed', 'canceled'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** How a payment behaves after acceptance; set by a payment fault on the creating request. */
export type Behaviour =
  | { kind: 'normal' }
  | { kind: 'fail_terminal' }
  | { kind: 'canceled_before_processing' }
  | { kind: 'conflicting_status' }
  | { kind: 'status_changes_later'; first: 'failed' | 'pending'; lookups: number };

export type JsonRecord = Record<string, unknown>;

export interface Payment {
  readonly seq: number;
  readonly account: string;
  readonly key: string;
  readonly reference: string;
  readonly request: JsonRecord;
  readonly requestDigest: Sha256Digest;
  readonly createdAtMs: number;
  readonly settleAtMs: number;
  readonly behaviour: Behaviour;
  readonly dropWebhook: boolean;
  /** The truth: what the sandbox actually did (admin view); the wire may report otherwise. */
  status: PaymentStatus;
  /** Completed status lookups (by key or reference): drives the lying behaviours. */
  lookups: number;
  /** The ledger entry of the applied effect, or undefined when none was applied. */
  effectSeq: number | undefined;
  /** The last status announced by webhook. */
  announced: PaymentStatus | undefined;
  /** The original response body, replayed byte for byte on an idempotent retry. */
  response: string;
}

export interface EffectEntry {
  readonly seq: number;
  readonly account: string;
  readonly key: string;
  readonly reference: string;
  readonly amount: number;
  readonly currency: string;
  readonly applied_at: string;
}

/** The terminal status a payment settles to, by behaviour. */
export function settledStatus(behaviour: Behaviour): PaymentStatus {
  if (behaviour.kind === 'fail_terminal') return 'failed';
  if (behaviour.kind === 'canceled_before_processing') return 'canceled';
  return 'succeeded';
}

/** What the wire reports after `lookups` completed lookups (the lying faults live here). */
export function reportedStatus(p: Payment, lookups = p.lookups): PaymentStatus {
  if (p.status === 'pending') return 'pending';
  const b = p.behaviour;
  if (b.kind === 'conflicting_status') return lookups % 2 === 0 ? 'succeeded' : 'failed';
  if (b.kind === 'status_changes_later') return lookups < b.lookups ? b.first : p.status;
  return p.status;
}

function outcomeDetail(status: PaymentStatus, p: Payment): JsonRecord {
  if (status === 'failed') return { failure_code: 'processing_error' };
  if (status === 'canceled' && p.behaviour.kind === 'canceled_before_processing') {
    return { cancellation_reason: 'canceled_before_processing' };
  }
  return {};
}

/** The signed wire representation of a payment (docs/sandbox.md "Payment object"). */
export function paymentView(p: Payment, status: PaymentStatus, observedAtMs: number): JsonRecord {
  const r = p.request;
  return {
    object: 'payment',
    reference: p.reference,
    account: p.account,
    environment: ENVIRONMENT,
    idempotency_key: p.key,
    status,
    ...outcomeDetail(status, p),
    amount: r['amount'],
    currency: r['currency'],
    payee: r['payee'],
    invoice: r['invoice'],
    request_digest: p.requestDigest,
    created_at: formatRfc3339(p.createdAtMs),
    observed_at: formatRfc3339(observedAtMs),
  };
}
