/**
 * The endpoints' work: create, confirm, capture and cancel a PaymentIntent, create a Refund. Each returns either a
 * refusal found before executing (`refused`: no idempotent result is saved) or the executed answer
 * (saved under the request's Idempotency-Key, errors such as a declined card included).
 */
import { randomBytes } from 'node:crypto';
import { invalidParam, resourceMissing, stripeError, type StripeAnswer } from './errors.js';
import type { FormObject } from './form.js';
import { DECLINED_PAYMENT_METHOD, intentView, refundView, type PaymentIntent, type Refund } from './model.js';
import { amount, currency, flag, metadata, onlyKnown, text, type Checked } from './params.js';
import type { StripeState } from './state.js';

export type Outcome = { refused: StripeAnswer } | { executed: StripeAnswer };

const CREATE_PARAMS = [
  'amount',
  'capture_method',
  'currency',
  'confirm',
  'payment_method',
  'metadata',
  'description',
  'expand',
];
const CONFIRM_PARAMS = ['payment_method', 'expand'];
const CAPTURE_PARAMS = ['expand'];
const CANCEL_PARAMS = ['cancellation_reason', 'expand'];
const CANCELLATION_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned'];
/** The statuses Stripe lets a PaymentIntent be canceled from (never `succeeded`). */
const CANCELABLE = ['requires_payment_method', 'requires_confirmation', 'requires_capture'];
const CONFIRMABLE = ['requires_payment_method', 'requires_confirmation'];
const REFUND_PARAMS = ['payment_intent', 'amount', 'metadata', 'reason', 'expand'];
const REFUND_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer'];

function firstRefusal(...checks: Checked<unknown>[]): StripeAnswer | undefined {
  for (const c of checks) if (!c.ok) return c.answer;
  return undefined;
}

function unexpectedState(p: PaymentIntent, action: string): StripeAnswer {
  return stripeError(
    400,
    'invalid_request_error',
    `You cannot ${action} this PaymentIntent because it has a status of ${p.status}.`,
    { code: 'payment_intent_unexpected_state', payment_intent: intentView(p) },
  );
}

/** The captured payment: the one effect a PaymentIntent can have. */
function capture(state: StripeState, p: PaymentIntent, key: string): StripeAnswer {
  p.status = 'succeeded';
  p.latestCharge = state.id('ch');
  state.recordEffect({
    kind: 'payment',
    id: p.id,
    idempotency_key: key,
    amount: p.amount,
    currency: p.currency,
  });
  state.webhooks.emit('payment_intent.succeeded', intentView(p), { idempotencyKey: key || null });
  return { status: 200, body: intentView(p) };
}

/**
 * Confirm with a payment method: the test card succeeds (an effect) — or, with
 * `capture_method=manual`, is only authorised (`requires_capture`, no effect until captured) —
 * and the declined one does not.
 */
function confirm(state: StripeState, p: PaymentIntent, key: string): StripeAnswer {
  if (p.paymentMethod === null) {
    return stripeError(400, 'invalid_request_error', 'You must provide a payment_method to confirm.', {
      code: 'payment_intent_unexpected_state',
    });
  }
  if (p.paymentMethod === DECLINED_PAYMENT_METHOD) {
    p.status = 'requires_payment_method';
    p.lastPaymentError = {
      type: 'card_error',
      code: 'card_declined',
      decline_code: 'generic_decline',
      message: 'Your card was declined.',
    };
    state.webhooks.emit('payment_intent.payment_failed', intentView(p), { idempotencyKey: key || null });
    return stripeError(402, 'card_error', 'Your card was declined.', {
      code: 'card_declined',
      decline_code: 'generic_decline',
      payment_intent: intentView(p),
    });
  }
  p.lastPaymentError = null;
  if (p.captureMethod === 'manual') {
    p.status = 'requires_capture';
    state.webhooks.emit('payment_intent.amount_capturable_updated', intentView(p), {
      idempotencyKey: key || null,
    });
    return { status: 200, body: intentView(p) };
  }
  return capture(state, p, key);
}

export function createIntent(state: StripeState, form: FormObject, key: string): Outcome {
  const unknown = onlyKnown(form, CREATE_PARAMS);
  if (unknown !== undefined) return { refused: unknown };
  const a = amount(form, 'amount', true);
  const c = currency(form);
  const doConfirm = flag(form, 'confirm');
  const pm = text(form, 'payment_method', 255);
  const md = metadata(form);
  const description = text(form, 'description', 1000);
  const method = text(form, 'capture_method', 32);
  const refused = firstRefusal(a, c, doConfirm, pm, md, description, method);
  if (
    refused !== undefined ||
    !a.ok ||
    !c.ok ||
    !doConfirm.ok ||
    !pm.ok ||
    !md.ok ||
    !description.ok ||
    !method.ok
  ) {
    return { refused: refused ?? invalidParam('body', 'Invalid request') };
  }
  const captureMethod = method.value ?? 'automatic';
  if (captureMethod !== 'automatic' && captureMethod !== 'manual') {
    return { refused: invalidParam('capture_method', 'Invalid capture_method') };
  }
  const id = state.id('pi');
  const p: PaymentIntent = {
    id,
    amount: a.value ?? 0,
    currency: c.value,
    created: state.nowSeconds(),
    metadata: md.value,
    description: description.value,
    clientSecret: `${id}_secret_${randomBytes(12).toString('base64url')}`,
    captureMethod,
    paymentMethod: pm.value,
    status: pm.value === null ? 'requires_payment_method' : 'requires_confirmation',
    canceledAt: null,
    cancellationReason: null,
    latestCharge: null,
    amountRefunded: 0,
    lastPaymentError: null,
  };
  state.intents.set(id, p);
  state.webhooks.emit('payment_intent.created', intentView(p), { idempotencyKey: key || null });
  if (doConfirm.value) return { executed: confirm(state, p, key) };
  return { executed: { status: 200, body: intentView(p) } };
}

export function confirmIntent(state: StripeState, id: string, form: FormObject, key: string): Outcome {
  const unknown = onlyKnown(form, CONFIRM_PARAMS);
  if (unknown !== undefined) return { refused: unknown };
  const p = state.intents.get(id);
  if (p === undefined) return { refused: resourceMissing('payment_intent', id, 'intent') };
  const pm = text(form, 'payment_method', 255);
  if (!pm.ok) return { refused: pm.answer };
  if (p.status === 'succeeded') {
    return {
      refused: stripeError(400, 'invalid_request_error', 'This PaymentIntent has already succeeded.', {
        code: 'payment_intent_unexpected_state',
        payment_intent: intentView(p),
      }),
    };
  }
  if (!CONFIRMABLE.includes(p.status)) return { refused: unexpectedState(p, 'confirm') };
  if (pm.value !== null) p.paymentMethod = pm.value;
  return { executed: confirm(state, p, key) };
}

/** Capture an authorised (`capture_method=manual`) PaymentIntent: the effect happens now. */
export function captureIntent(state: StripeState, id: string, form: FormObject, key: string): Outcome {
  const unknown = onlyKnown(form, CAPTURE_PARAMS);
  if (unknown !== undefined) return { refused: unknown };
  const p = state.intents.get(id);
  if (p === undefined) return { refused: resourceMissing('payment_intent', id, 'intent') };
  if (p.status !== 'requires_capture') return { refused: unexpectedState(p, 'capture') };
  return { executed: capture(state, p, key) };
}

/**
 * Cancel a PaymentIntent that has not succeeded: it ends `canceled` with no captured payment
 * (an authorisation is released), so no effect is ever recorded for it.
 */
export function cancelIntent(state: StripeState, id: string, form: FormObject, key: string): Outcome {
  const unknown = onlyKnown(form, CANCEL_PARAMS);
  if (unknown !== undefined) return { refused: unknown };
  const p = state.intents.get(id);
  if (p === undefined) return { refused: resourceMissing('payment_intent', id, 'intent') };
  const reason = text(form, 'cancellation_reason', 64);
  if (!reason.ok) return { refused: reason.answer };
  if (reason.value !== null && !CANCELLATION_REASONS.includes(reason.value)) {
    return { refused: invalidParam('cancellation_reason', 'Invalid cancellation_reason') };
  }
  if (!CANCELABLE.includes(p.status)) return { refused: unexpectedState(p, 'cancel') };
  p.status = 'canceled';
  p.canceledAt = state.nowSeconds();
  p.cancellationReason = reason.value;
  state.webhooks.emit('payment_intent.canceled', intentView(p), { idempotencyKey: key || null });
  return { executed: { status: 200, body: intentView(p) } };
}

export function createRefund(state: StripeState, form: FormObject, key: string): Outcome {
  const unknown = onlyKnown(form, REFUND_PARAMS);
  if (unknown !== undefined) return { refused: unknown };
  const intentId = text(form, 'payment_intent', 255);
  const a = amount(form, 'amount', false);
  const md = metadata(form);
  const reason = text(form, 'reason', 64);
  const refused = firstRefusal(intentId, a, md, reason);
  if (refused !== undefined || !intentId.ok || !a.ok || !md.ok || !reason.ok) {
    return { refused: refused ?? invalidParam('body', 'Invalid request') };
  }
  if (intentId.value === null)
    return { refused: invalidParam('payment_intent', 'Missing required param: payment_intent.') };
  if (reason.value !== null && !REFUND_REASONS.includes(reason.value)) {
    return { refused: invalidParam('reason', 'Invalid reason') };
  }
  const p = state.intents.get(intentId.value);
  if (p === undefined)
    return { refused: resourceMissing('payment_intent', intentId.value, 'payment_intent') };
  if (p.status !== 'succeeded' || p.latestCharge === null) {
    return {
      refused: stripeError(
        400,
        'invalid_request_error',
        'This PaymentIntent does not have a successful charge to refund.',
        {
          code: 'charge_not_refundable',
        },
      ),
    };
  }
  const remaining = p.amount - p.amountRefunded;
  const value = a.value ?? remaining;
  if (remaining === 0) {
    return {
      executed: stripeError(400, 'invalid_request_error', 'Charge has already been refunded.', {
        code: 'charge_already_refunded',
      }),
    };
  }
  if (value > remaining) {
    return { refused: invalidParam('amount', 'Refund amount is greater than the unrefunded amount.') };
  }
  const refund: Refund = {
    id: state.id('re'),
    paymentIntent: p.id,
    charge: p.latestCharge,
    amount: value,
    currency: p.currency,
    created: state.nowSeconds(),
    metadata: md.value,
    reason: reason.value,
  };
  p.amountRefunded += value;
  state.refunds.set(refund.id, refund);
  state.recordEffect({
    kind: 'refund',
    id: refund.id,
    idempotency_key: key,
    amount: value,
    currency: p.currency,
  });
  state.webhooks.emit('refund.created', refundView(refund), { idempotencyKey: key || null });
  return { executed: { status: 200, body: refundView(refund) } };
}
