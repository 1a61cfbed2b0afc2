/**
 * The Stripe-compatible flavour's records (docs/sandbox-stripe.md): the PaymentIntents and Refunds
 * subset, in Stripe's wire vocabulary. Synthetic: it knows nothing of Baton; what it counts in
 * `effects` (payments captured, refunds made) is the oracle the duplicate tests read.
 */
export type IntentStatus =
  'requires_payment_method' | 'requires_confirmation' | 'requires_capture' | 'succeeded' | 'canceled';

/** Stripe's `capture_method`: `manual` authorises on confirm and captures on `/capture`. */
export type CaptureMethod = 'automatic' | 'manual';

export interface PaymentError {
  readonly type: 'card_error';
  readonly code: string;
  readonly decline_code: string;
  readonly message: string;
}

export interface PaymentIntent {
  readonly id: string;
  readonly amount: number;
  readonly currency: string;
  readonly created: number;
  readonly metadata: Record<string, string>;
  readonly description: string | null;
  readonly clientSecret: string;
  readonly captureMethod: CaptureMethod;
  paymentMethod: string | null;
  status: IntentStatus;
  canceledAt: number | null;
  cancellationReason: string | null;
  latestCharge: string | null;
  amountRefunded: number;
  lastPaymentError: PaymentError | null;
}

export interface Refund {
  readonly id: string;
  readonly paymentIntent: string;
  readonly charge: string;
  readonly amount: number;
  readonly currency: string;
  readonly created: number;
  readonly metadata: Record<string, string>;
  readonly reason: string | null;
}

export interface StripeEffect {
  readonly seq: number;
  readonly kind: 'payment' | 'refund';
  readonly id: string;
  /** The Idempotency-Key of the request that caused it ('' when the request carried none). */
  readonly idempotency_key: string;
  readonly amount: number;
  readonly currency: string;
  readonly applied_at: number;
}

/** Test payment methods (Stripe's documented names): one succeeds, one is declined. */
export const DECLINED_PAYMENT_METHOD = 'pm_card_chargeDeclined';

export function intentView(p: PaymentIntent): Record<string, unknown> {
  return {
    id: p.id,
    object: 'payment_intent',
    amount: p.amount,
    amount_capturable: p.status === 'requires_capture' ? p.amount : 0,
    amount_received: p.status === 'succeeded' ? p.amount : 0,
    canceled_at: p.canceledAt,
    cancellation_reason: p.cancellationReason,
    capture_method: p.captureMethod,
    client_secret: p.clientSecret,
    confirmation_method: 'automatic',
    created: p.created,
    currency: p.currency,
    description: p.description,
    last_payment_error: p.lastPaymentError,
    latest_charge: p.latestCharge,
    livemode: false,
    metadata: p.metadata,
    payment_method: p.paymentMethod,
    status: p.status,
  };
}

export function refundView(r: Refund): Record<string, unknown> {
  return {
    id: r.id,
    object: 'refund',
    amount: r.amount,
    charge: r.charge,
    created: r.created,
    currency: r.currency,
    metadata: r.metadata,
    payment_intent: r.paymentIntent,
    reason: r.reason,
    status: 'succeeded',
  };
}
