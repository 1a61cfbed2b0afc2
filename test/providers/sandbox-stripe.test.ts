/**
 * The Stripe-compatible sandbox flavour, driven by the official `stripe` npm client pointed at it
 * (host, port, protocol). Labelled honestly: a compatible local server and the official client,
 * not Stripe's own servers.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Stripe from 'stripe';
import { ManualClock } from '../../src/core/clock.js';
import { createStripeSandbox, type StripeSandbox } from '../../src/providers/sandbox/stripe/index.js';

let sandbox: StripeSandbox;
let stripe: Stripe;
const clock = new ManualClock(Date.UTC(2026, 11, 1, 12));

before(async () => {
  sandbox = createStripeSandbox({ clock });
  const url = new URL(await sandbox.listen());
  stripe = new Stripe(sandbox.secretKey, {
    host: url.hostname,
    port: Number(url.port),
    protocol: 'http',
    maxNetworkRetries: 0,
    telemetry: false,
  });
});
after(() => sandbox.close());

const payment = (invoice: string, amount = 2000): Stripe.PaymentIntentCreateParams => ({
  amount,
  currency: 'usd',
  confirm: true,
  payment_method: 'pm_card_visa',
  metadata: { invoice },
});

test('create, retrieve: a confirmed PaymentIntent with the test card succeeds with one effect', async () => {
  const created = await stripe.paymentIntents.create(payment('inv-1'), { idempotencyKey: 'key-create-1' });
  assert.equal(created.object, 'payment_intent');
  assert.equal(created.status, 'succeeded');
  assert.equal(created.amount_received, 2000);
  assert.match(created.id, /^pi_/);
  const fetched = await stripe.paymentIntents.retrieve(created.id);
  assert.equal(fetched.id, created.id);
  assert.deepEqual(fetched.metadata, { invoice: 'inv-1' });
  assert.equal(sandbox.effectCount('key-create-1'), 1);
});

test('the same key and parameters replay the first answer with Idempotent-Replayed: true, no second effect', async () => {
  const first = await stripe.paymentIntents.create(payment('inv-2'), { idempotencyKey: 'key-replay' });
  const again = await stripe.paymentIntents.create(payment('inv-2'), { idempotencyKey: 'key-replay' });
  assert.equal(again.id, first.id);
  assert.equal(first.lastResponse.headers['idempotent-replayed'], undefined);
  assert.equal(again.lastResponse.headers['idempotent-replayed'], 'true');
  assert.equal(sandbox.effectCount('key-replay'), 1);
});

test('the same key with other parameters is a 400 idempotency_error and changes nothing', async () => {
  await stripe.paymentIntents.create(payment('inv-3'), { idempotencyKey: 'key-other-params' });
  await assert.rejects(
    stripe.paymentIntents.create(payment('inv-3', 2001), { idempotencyKey: 'key-other-params' }),
    (error: unknown) => {
      assert.ok(error instanceof Stripe.errors.StripeIdempotencyError);
      assert.equal(error.statusCode, 400);
      assert.equal(error.type, 'StripeIdempotencyError');
      return true;
    },
  );
  assert.equal(sandbox.effectCount('key-other-params'), 1);
});

test('keys expire after 24 hours: the same key then creates afresh', async () => {
  const first = await stripe.paymentIntents.create(payment('inv-4'), { idempotencyKey: 'key-expiry' });
  sandbox.advanceClock(24 * 3600 * 1000 - 1000);
  const inside = await stripe.paymentIntents.create(payment('inv-4'), { idempotencyKey: 'key-expiry' });
  assert.equal(inside.id, first.id);
  sandbox.advanceClock(2000);
  const after = await stripe.paymentIntents.create(payment('inv-4'), { idempotencyKey: 'key-expiry' });
  assert.notEqual(after.id, first.id);
  assert.equal(sandbox.effectCount('key-expiry'), 2);
});

test('a declined card is a 402 card_error, saved and replayed under its key without a second attempt', async () => {
  const declined = { ...payment('inv-5'), payment_method: 'pm_card_chargeDeclined' };
  const check = (error: unknown): boolean => {
    assert.ok(error instanceof Stripe.errors.StripeCardError);
    assert.equal(error.statusCode, 402);
    assert.equal(error.code, 'card_declined');
    return true;
  };
  await assert.rejects(stripe.paymentIntents.create(declined, { idempotencyKey: 'key-declined' }), check);
  const before = sandbox.events().length;
  await assert.rejects(stripe.paymentIntents.create(declined, { idempotencyKey: 'key-declined' }), check);
  assert.equal(sandbox.events().length, before, 'the replay attempted nothing');
  assert.equal(sandbox.effectCount('key-declined'), 0);
});

test('a parameter refused by validation saves no idempotent result: the corrected request may use the key', async () => {
  await assert.rejects(
    stripe.paymentIntents.create(
      { ...payment('inv-6'), amount: -5 },
      { idempotencyKey: 'key-invalid-first' },
    ),
    (error: unknown) => error instanceof Stripe.errors.StripeInvalidRequestError && error.param === 'amount',
  );
  const ok = await stripe.paymentIntents.create(payment('inv-6'), { idempotencyKey: 'key-invalid-first' });
  assert.equal(ok.status, 'succeeded');
  assert.equal(sandbox.effectCount('key-invalid-first'), 1);
});

test('an unknown parameter and a missing resource answer in Stripe error shapes', async () => {
  await assert.rejects(
    stripe.paymentIntents.create({ ...payment('inv-7'), surprise: 'x' } as Stripe.PaymentIntentCreateParams),
    (error: unknown) =>
      error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'parameter_unknown',
  );
  await assert.rejects(
    stripe.paymentIntents.retrieve('pi_missing'),
    (error: unknown) =>
      error instanceof Stripe.errors.StripeInvalidRequestError &&
      error.statusCode === 404 &&
      error.code === 'resource_missing',
  );
});

test('a wrong secret key is refused with 401 and creates nothing', async () => {
  const url = new URL(sandbox.url);
  const wrong = new Stripe('sk_test_wrong', {
    host: url.hostname,
    port: Number(url.port),
    protocol: 'http',
    maxNetworkRetries: 0,
  });
  const count = sandbox.effects().length;
  await assert.rejects(
    wrong.paymentIntents.create(payment('inv-8')),
    (error: unknown) => error instanceof Stripe.errors.StripeAuthenticationError,
  );
  assert.equal(sandbox.effects().length, count);
});

test('refunds: one refund per key, replayed under its key; a fully refunded payment refuses another', async () => {
  const paid = await stripe.paymentIntents.create(payment('inv-9'), { idempotencyKey: 'key-refund-pay' });
  const refund = await stripe.refunds.create({ payment_intent: paid.id }, { idempotencyKey: 'key-refund-1' });
  assert.equal(refund.status, 'succeeded');
  assert.equal(refund.amount, 2000);
  const replay = await stripe.refunds.create({ payment_intent: paid.id }, { idempotencyKey: 'key-refund-1' });
  assert.equal(replay.id, refund.id);
  assert.equal(sandbox.effectCount('key-refund-1'), 1);
  assert.equal((await stripe.refunds.retrieve(refund.id)).payment_intent, paid.id);
  await assert.rejects(
    stripe.refunds.create({ payment_intent: paid.id }, { idempotencyKey: 'key-refund-2' }),
    (error: unknown) =>
      error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'charge_already_refunded',
  );
  assert.equal(sandbox.effectCount('key-refund-2'), 0);
});

test('search by metadata finds the payment whose answer was lost', async () => {
  const res = await fetch(`${sandbox.url}/v1/payment_intents`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${sandbox.secretKey}`,
      'content-type': 'application/x-www-form-urlencoded',
      'idempotency-key': 'key-lost',
      'sandbox-fault': 'drop_response_after_apply',
    },
    body: 'amount=700&currency=usd&confirm=true&payment_method=pm_card_visa&metadata[invoice]=inv-lost',
  }).catch((error: unknown) => error);
  assert.ok(res instanceof Error, 'the answer was dropped after the payment applied');
  assert.equal(sandbox.effectCount('key-lost'), 1);
  const found = await stripe.paymentIntents.search({ query: "metadata['invoice']:'inv-lost'" });
  assert.equal(found.data.length, 1);
  assert.equal(found.data[0]?.status, 'succeeded');
  // The official client's own retry with the same key replays instead of paying again.
  const retried = await stripe.paymentIntents.create(
    {
      amount: 700,
      currency: 'usd',
      confirm: true,
      payment_method: 'pm_card_visa',
      metadata: { invoice: 'inv-lost' },
    },
    { idempotencyKey: 'key-lost' },
  );
  assert.equal(retried.id, found.data[0]?.id);
  assert.equal(sandbox.effectCount('key-lost'), 1);
});

test('a repeated form parameter is refused, not merged', async () => {
  const res = await fetch(`${sandbox.url}/v1/payment_intents`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${sandbox.secretKey}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'amount=100&amount=100000&currency=usd',
  });
  assert.equal(res.status, 400);
  const body = (await res.json()) as { error: { type: string; param: string } };
  assert.equal(body.error.type, 'invalid_request_error');
  assert.equal(body.error.param, 'amount');
});

test('a currency Stripe does not support (zzz) is a 400 invalid_request_error on currency, saving nothing; supported ones are accepted', async () => {
  const events = sandbox.events().length;
  for (const currency of ['zzz', 'xxx', 'abc']) {
    await assert.rejects(
      stripe.paymentIntents.create(
        { ...payment('inv-cur'), currency },
        { idempotencyKey: `key-cur-${currency}` },
      ),
      (error: unknown) => {
        assert.ok(error instanceof Stripe.errors.StripeInvalidRequestError, String(error));
        assert.equal(error.statusCode, 400);
        assert.equal(error.param, 'currency');
        return true;
      },
    );
    assert.equal(sandbox.effectCount(`key-cur-${currency}`), 0);
  }
  assert.equal(sandbox.events().length, events, 'nothing was created');
  for (const currency of ['eur', 'jpy', 'GBP']) {
    const ok = await stripe.paymentIntents.create({ ...payment('inv-cur'), currency });
    assert.equal(ok.currency, currency.toLowerCase());
  }
});

test('capture_method=manual authorises without an effect; capture applies it; cancel ends canceled with none', async () => {
  const manual = { ...payment('inv-manual'), capture_method: 'manual' as const };
  const held = await stripe.paymentIntents.create(manual, { idempotencyKey: 'key-manual' });
  assert.equal(held.status, 'requires_capture');
  assert.equal(held.amount_capturable, 2000);
  assert.equal(sandbox.effectCount('key-manual'), 0, 'an authorisation captures nothing');
  const captured = await stripe.paymentIntents.capture(held.id, {}, { idempotencyKey: 'key-capture' });
  assert.equal(captured.status, 'succeeded');
  assert.equal(sandbox.effectCount('key-capture'), 1);
  await assert.rejects(
    stripe.paymentIntents.cancel(held.id),
    (error: unknown) =>
      error instanceof Stripe.errors.StripeInvalidRequestError &&
      error.code === 'payment_intent_unexpected_state',
  );

  const other = await stripe.paymentIntents.create(manual, { idempotencyKey: 'key-manual-2' });
  const canceled = await stripe.paymentIntents.cancel(other.id, { cancellation_reason: 'abandoned' });
  assert.equal(canceled.status, 'canceled');
  assert.equal(canceled.cancellation_reason, 'abandoned');
  assert.equal(canceled.amount_capturable, 0);
  assert.equal(sandbox.effectCount('key-manual-2'), 0);
  const types = sandbox
    .events()
    .filter((e) => e.body.includes(other.id))
    .map((e) => e.type);
  assert.deepEqual(types, [
    'payment_intent.created',
    'payment_intent.amount_capturable_updated',
    'payment_intent.canceled',
  ]);
  for (const act of [
    () => stripe.paymentIntents.capture(other.id),
    () => stripe.paymentIntents.confirm(other.id),
  ]) {
    await assert.rejects(
      act(),
      (error: unknown) =>
        error instanceof Stripe.errors.StripeInvalidRequestError &&
        error.code === 'payment_intent_unexpected_state',
    );
  }
});
