/**
 * Stripe PaymentIntents that end `canceled`, in a real `baton serve` child process (SQLite and
 * PostgreSQL) with the Stripe-compatible sandbox paid through the official `stripe` client (a
 * compatible local server, not Stripe's servers). A canceled PaymentIntent was accepted by Stripe
 * (it exists) and ended with no captured payment, so the shipped profile reads `canceled` as
 * `final_failure` establishing no effect (docs/providers.md "Stripe PaymentIntents"): an ordinary
 * lifecycle — authorised then canceled, declined then canceled — and an out-of-order pair (the
 * canceled state known first, the older `payment_intent.created` delivered late) resolve
 * `final_failure` / `none_confirmed` and never become a conflict (docs/api.md: events arriving out
 * of order never move an occurrence backwards). Under the profile's earlier reading (`not_accepted`)
 * every one of them ended a sticky conflict.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import Stripe from 'stripe';
import type { JsonObject } from '../../src/core/json.js';
import { postgresForTests } from '../support/postgres.js';
import {
  deliver,
  detail,
  enter,
  ok,
  openServeWorld,
  type EngineName,
  type ServeWorld,
} from './provider-serve-world.js';

const db = await postgresForTests();
const engines: EngineName[] = db === undefined ? ['sqlite'] : ['sqlite', 'postgres'];
const official = new Stripe('sk_test_unused_for_signing_helpers');

async function world(t: TestContext, engine: EngineName): Promise<ServeWorld> {
  return openServeWorld(t, engine, engine === 'postgres' ? await db!.schema() : undefined);
}

function stripeHeader(secret: string, body: string): Record<string, string> {
  const header = official.webhooks.generateTestHeaderString({
    payload: body,
    secret,
    timestamp: Math.floor(Date.now() / 1000),
  });
  return { 'stripe-signature': header, 'content-type': 'application/json' };
}

interface State {
  readonly outcome: unknown;
  readonly effect: unknown;
  readonly conflict: unknown;
  readonly unresolved: unknown;
}

async function state(w: ServeWorld, id: string): Promise<State> {
  const o = (await detail(w, id)).occurrence;
  return { outcome: o['outcome'], effect: o['effect'], conflict: o['conflict'], unresolved: o['unresolved'] };
}

const SETTLED_NO_EFFECT: State = {
  outcome: 'final_failure',
  effect: 'none_confirmed',
  conflict: false,
  unresolved: false,
};

async function reconcile(w: ServeWorld, id: string): Promise<void> {
  await ok(w, 'POST', `/v1/occurrences/${id}/reconcile`);
}

for (const engine of engines) {
  test(`[${engine}] serve: authorised then canceled, and declined then canceled, resolve final_failure / none_confirmed without a conflict`, async (t) => {
    const w = await world(t, engine);
    const STRIPE = w.stripeProfile;
    const lifecycles: [string, Stripe.PaymentIntentCreateParams, string][] = [
      [
        'authorised (requires_capture) then canceled',
        {
          amount: 1500,
          currency: 'usd',
          confirm: true,
          payment_method: 'pm_card_visa',
          capture_method: 'manual',
        },
        'requires_capture',
      ],
      [
        'declined (requires_payment_method) then canceled',
        { amount: 1500, currency: 'usd', confirm: true, payment_method: 'pm_card_chargeDeclined' },
        'requires_payment_method',
      ],
    ];
    for (const [name, params, before] of lifecycles) {
      const ticket = await enter(w, STRIPE, `inv-${before}`, 1500);
      const id = ticket.occurrence.id;
      const key = ticket.nativeKey ?? '';
      let pi: Stripe.PaymentIntent;
      try {
        pi = await w.stripe.paymentIntents.create(params, { idempotencyKey: key });
      } catch (e) {
        // The declined card: a 402 whose error carries the PaymentIntent.
        assert.ok(e instanceof Stripe.errors.StripeCardError && e.payment_intent, `${name}: ${String(e)}`);
        pi = e.payment_intent;
      }
      assert.equal(pi.status, before, name);
      await w.stripeSandbox.webhooksIdle();
      // The sandbox's own Stripe-signed events (created, then amount_capturable_updated or
      // payment_failed) reached serve: the PaymentIntent is accepted and its reference bound.
      assert.deepEqual(
        await state(w, id),
        { outcome: 'accepted', effect: 'unresolved', conflict: false, unresolved: true },
        name,
      );
      const canceled = await w.stripe.paymentIntents.cancel(pi.id);
      assert.equal(canceled.status, 'canceled');
      await w.stripeSandbox.webhooksIdle();
      // The cancel event names the cancel request, not the entry key: it is located by the bound
      // pi_… and settles (nativeKeyOf: causing_request); the lookup by id agrees.
      await reconcile(w, id);
      assert.deepEqual(await state(w, id), SETTLED_NO_EFFECT, name);
      assert.equal(w.stripeSandbox.effectCount(key), 0, `${name}: nothing was captured`);
      await reconcile(w, id);
      assert.deepEqual(await state(w, id), SETTLED_NO_EFFECT, `${name}: asking again changes nothing`);
    }
  });

  test(`[${engine}] serve: canceled known first, the older payment_intent.created delivered late: final_failure / none_confirmed, never a conflict`, async (t) => {
    const w = await world(t, engine);
    const STRIPE = w.stripeProfile;
    const ticket = await enter(w, STRIPE, 'inv-cancel-late', 1500);
    const id = ticket.occurrence.id;
    const key = ticket.nativeKey ?? '';
    // On the quiet sandbox: its events are captured, and the test delivers them out of order.
    const pi = await w.quiet.paymentIntents.create(
      { amount: 1500, currency: 'usd' },
      { idempotencyKey: key },
    );
    assert.equal(pi.status, 'requires_payment_method');
    await w.quiet.paymentIntents.cancel(pi.id);
    const events = w.quietSandbox.events().map((e) => JSON.parse(e.body) as JsonObject);
    const createdEvent = events.find((e) => e['type'] === 'payment_intent.created');
    const canceledEvent = events.find((e) => e['type'] === 'payment_intent.canceled');
    assert.ok(createdEvent && canceledEvent);
    // Stripe names the request that caused an event; the cancel call was another request. This
    // delivery names the entry key (as the reviewer's repro did) so that it locates the occurrence:
    // the genuine event otherwise, re-signed with the official helper.
    const late = JSON.stringify(createdEvent);
    const first = JSON.stringify({ ...canceledEvent, request: { id: null, idempotency_key: key } });

    const a = await deliver(w, STRIPE.id, first, stripeHeader(w.webhookSecret, first));
    assert.equal(a.status, 200, a.text);
    assert.equal(a.body['effective'], true, a.text);
    assert.deepEqual(await state(w, id), SETTLED_NO_EFFECT, 'canceled settles: no effect');

    const b = await deliver(w, STRIPE.id, late, stripeHeader(w.webhookSecret, late));
    assert.equal(b.status, 200, b.text);
    assert.equal(b.body['recorded'], true, 'the late event is recorded as evidence');
    assert.deepEqual(await state(w, id), SETTLED_NO_EFFECT, 'the older event moves nothing back');

    // The lookup agrees with what the webhooks said.
    assert.equal((await w.quiet.paymentIntents.retrieve(pi.id)).status, 'canceled');
  });
}
