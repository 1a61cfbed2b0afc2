/**
 * The shipped Stripe profiles (docs/providers.md) against `baton sandbox --flavor stripe` and the
 * official `stripe` client: every rule of the profile is exercised, and each malformed,
 * mismatched-account, wrong-amount, unsigned, expired and replayed answer settles nothing (it is
 * recorded as missing knowledge); good ones settle. Tested against a compatible local server and
 * the official client — not against Stripe's servers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Stripe from 'stripe';
import type { JsonObject } from '../../src/core/json.js';
import { findStatusSource, type StatusSource } from '../../src/occurrences/index.js';
import {
  deliveryObservation,
  HttpProviderAdapter,
  recordSend,
  readDelivery,
  reconcileOccurrence,
  recordReading,
  StatusSources,
  staticKeys,
} from '../../src/providers/index.js';
import { WebhookReplayGuard } from '../../src/providers/webhook-schemes/index.js';
import { enterOne, openStripeWorld, view, type StripeWorld } from './stripe-world.js';

const official = new Stripe('sk_test_unused');
const pay = (amount: number, currency = 'usd'): JsonObject => ({
  amount,
  currency,
  confirm: true,
  payment_method: 'pm_card_visa',
});

async function paid(w: StripeWorld, key: string, params: JsonObject, amount: number) {
  const ticket = await enterOne(w, key, params, amount);
  const pi = await w.stripe.paymentIntents.create(params as unknown as Stripe.PaymentIntentCreateParams, {
    idempotencyKey: ticket.nativeKey ?? undefined,
  });
  return { ticket, pi };
}

function source(w: StripeWorld, id: string): StatusSource {
  const s = findStatusSource(w.profile.document, id);
  assert.ok(s);
  return s;
}

test('a good payment settles from the events listing, binds pi_…, then lookups by id settle too', async (t) => {
  const w = await openStripeWorld(t);
  const { ticket, pi } = await paid(w, 'inv-good', pay(2000), 2000);
  const before = await view(w, ticket.occurrence.id);
  assert.equal(before.unresolved, true);
  const r = await reconcileOccurrence(w.svc, w.sources, ticket.occurrence.id);
  assert.equal(r.occurrence.unresolved, false);
  assert.equal(r.occurrence.effect, 'occurred');
  assert.equal(r.occurrence.outcome, 'success');
  assert.equal(r.occurrence.provider.providerReference, pi.id);
  const byId = await w.sources.query(w.profile.document, r.occurrence, 'by-id');
  const observed = await recordReading(w.svc, byId);
  assert.equal(observed.effective, true, byId.detail);
  assert.equal(w.sandbox.effectCount(ticket.nativeKey ?? ''), 1);
});

test('an answer for another amount or another currency is another payment: binding_mismatch', async (t) => {
  const w = await openStripeWorld(t);
  // The executor's own client sends other parameters under the occurrence's key.
  const a = await enterOne(w, 'inv-amount', pay(2000), 2000);
  await w.stripe.paymentIntents.create(pay(2500) as never, { idempotencyKey: a.nativeKey ?? undefined });
  const ra = await reconcileOccurrence(w.svc, w.sources, a.occurrence.id);
  assert.equal(ra.occurrence.unresolved, true);
  assert.equal(ra.missingKnowledge, 'binding_mismatch');
  const b = await enterOne(w, 'inv-currency', pay(2000), 2000);
  await w.stripe.paymentIntents.create(pay(2000, 'eur') as never, {
    idempotencyKey: b.nativeKey ?? undefined,
  });
  const rb = await reconcileOccurrence(w.svc, w.sources, b.occurrence.id);
  assert.equal(rb.occurrence.unresolved, true);
  assert.equal(rb.missingKnowledge, 'binding_mismatch');
});

test('nothing under the key: absence from a best-effort listing proves nothing (incomplete_listing)', async (t) => {
  const w = await openStripeWorld(t);
  const { ticket } = await paid(w, 'inv-other', pay(1000), 1000);
  void ticket;
  const lost = await enterOne(w, 'inv-lost', pay(3000), 3000);
  const r = await reconcileOccurrence(w.svc, w.sources, lost.occurrence.id);
  assert.equal(r.occurrence.unresolved, true);
  assert.equal(r.missingKnowledge, 'incomplete_listing');
});

test('a lookup without the credential is not made; a wrong credential gets no trusted answer', async (t) => {
  const w = await openStripeWorld(t);
  const { ticket } = await paid(w, 'inv-cred', pay(1200), 1200);
  const none = new StatusSources({ keys: staticKeys({}) });
  const r1 = await reconcileOccurrence(w.svc, none, ticket.occurrence.id);
  assert.equal(r1.missingKnowledge, 'unavailable');
  const wrong = new StatusSources({
    keys: staticKeys(
      { 'stripe-secret-key': Buffer.from('sk_test_wrong') },
      { 'stripe-secret-key': [new URL(w.sandbox.url).origin] },
    ),
  });
  const r2 = await reconcileOccurrence(w.svc, wrong, ticket.occurrence.id);
  assert.equal(r2.occurrence.unresolved, true);
  assert.equal(r2.missingKnowledge, 'unavailable', 'a 401 is not an answer');
});

test('by id: an unknown pi_ is an exact not_found, never proof of no effect', async (t) => {
  const w = await openStripeWorld(t);
  const { ticket } = await paid(w, 'inv-404', pay(1500), 1500);
  const settled = await reconcileOccurrence(w.svc, w.sources, ticket.occurrence.id);
  assert.equal(settled.occurrence.unresolved, false);
  // Ask by id for an occurrence whose bound reference the sandbox does not know.
  const o = {
    ...settled.occurrence,
    provider: { ...settled.occurrence.provider, providerReference: 'pi_unknown' },
  };
  const reading = await w.sources.query(w.profile.document, o, 'by-id');
  assert.equal(reading.observation.result, 'not_found');
  assert.match(reading.detail, /not_found/);
});

function eventFor(w: StripeWorld, key: string, type: string): JsonObject {
  const e = w.sandbox.events().find((x) => x.type === type && x.body.includes(key));
  assert.ok(e, `the sandbox emitted ${type}`);
  return JSON.parse(e.body) as JsonObject;
}

function deliver(w: StripeWorld, body: string, header: string | undefined, replay?: WebhookReplayGuard) {
  const src = source(w, 'webhook');
  return readDelivery({
    profile: w.profile.document,
    source: src,
    body,
    headers: header === undefined ? {} : { 'stripe-signature': header },
    keys: w.keys,
    nowMs: Date.now(),
    ...(replay !== undefined && { replay }),
  });
}

const sign = (w: StripeWorld, body: string, timestamp = Math.floor(Date.now() / 1000)): string =>
  official.webhooks.generateTestHeaderString({ payload: body, secret: w.sandbox.webhookSecret, timestamp });

test('webhooks: unsigned, forged, expired, replayed, malformed and other-account events settle nothing', async (t) => {
  const w = await openStripeWorld(t);
  const src = source(w, 'webhook');
  const { ticket } = await paid(w, 'inv-hook', pay(1800), 1800);
  const id = ticket.occurrence.id;
  const key = ticket.nativeKey ?? '';
  const event = eventFor(w, key, 'payment_intent.succeeded');
  const body = JSON.stringify(event);
  const observe = async (d: ReturnType<typeof readDelivery>) =>
    w.svc.observe(deliveryObservation(id, src, d, Date.now()));

  const cases: [string, ReturnType<typeof readDelivery>, string][] = [
    ['unsigned', deliver(w, body, undefined), 'unauthenticated'],
    ['forged', deliver(w, body, sign(w, body).replace(/v1=[0-9a-f]{4}/, 'v1=0000')), 'unauthenticated'],
    ['tampered', deliver(w, body.replace('"amount":1800', '"amount":1'), sign(w, body)), 'unauthenticated'],
    ['expired', deliver(w, body, sign(w, body, Math.floor(Date.now() / 1000) - 600)), 'unauthenticated'],
  ];
  const other = JSON.stringify({ ...event, account: 'acct_someone_else' });
  cases.push(['other account', deliver(w, other, sign(w, other)), 'binding_mismatch']);
  const malformed = body.replace('"amount":1800', '"amount":"1800"');
  cases.push(['malformed', deliver(w, malformed, sign(w, malformed)), 'unavailable']);
  const wrongAmount = body.replace('"amount":1800', '"amount":1900');
  cases.push(['wrong amount', deliver(w, wrongAmount, sign(w, wrongAmount)), 'binding_mismatch']);
  for (const [name, d, reason] of cases) {
    const r = await observe(d);
    assert.equal(r.effective, false, name);
    assert.equal(r.missingKnowledge, reason, name);
    assert.equal(r.occurrence.unresolved, true, name);
  }
  assert.equal(cases[0]?.[1].refusal, 'unsigned');
  assert.equal(cases[3]?.[1].refusal, 'stale');

  const guard = new WebhookReplayGuard(300_000);
  const header = sign(w, body);
  const first = deliver(w, body, header, guard);
  const again = deliver(w, body, header, guard);
  assert.equal(again.refusal, 'replayed');
  const replayed = await observe(again);
  assert.equal(replayed.effective, false);
  assert.equal(replayed.missingKnowledge, 'unauthenticated');
  const good = await observe(first);
  assert.equal(good.effective, true, 'the first delivery of the authentic event settles');
  assert.equal(good.occurrence.effect, 'occurred');
});

test('Stripe Refunds: a refund made by the official client under the key settles from its events', async (t) => {
  const w = await openStripeWorld(t, 'stripe-refunds');
  const pi = await w.stripe.paymentIntents.create({
    amount: 5000,
    currency: 'usd',
    confirm: true,
    payment_method: 'pm_card_visa',
  });
  const ticket = await enterOne(w, 'refund-1', { payment_intent: pi.id, amount: 1200 }, 1200);
  const refund = await w.stripe.refunds.create(
    { payment_intent: pi.id, amount: 1200 },
    { idempotencyKey: ticket.nativeKey ?? undefined },
  );
  const r = await reconcileOccurrence(w.svc, w.sources, ticket.occurrence.id);
  assert.equal(r.occurrence.unresolved, false, JSON.stringify(r.report.byReason));
  assert.equal(r.occurrence.provider.providerReference, refund.id);
  const wrong = await enterOne(w, 'refund-2', { payment_intent: pi.id, amount: 300 }, 300);
  await w.stripe.refunds.create(
    { payment_intent: pi.id, amount: 400 },
    { idempotencyKey: wrong.nativeKey ?? undefined },
  );
  const r2 = await reconcileOccurrence(w.svc, w.sources, wrong.occurrence.id);
  assert.equal(r2.missingKnowledge, 'binding_mismatch');
});

test('Stripe Refunds: pending then canceled, and canceled before a late pending event, end final_failure / none_confirmed, never a conflict', async (t) => {
  const w = await openStripeWorld(t, 'stripe-refunds');
  const pi = await w.stripe.paymentIntents.create({
    amount: 5000,
    currency: 'usd',
    confirm: true,
    payment_method: 'pm_card_visa',
  });
  // The sandbox's refunds succeed at once, so these `refund.updated` events are written here in
  // Stripe's shape (a refund the provider held `pending`, then canceled) and signed with the
  // official helper; no refund was made, as `canceled` says.
  const refundEvent = (key: string, refund: string, status: string, created: number): string =>
    JSON.stringify({
      id: `evt_${refund}_${status}`,
      object: 'event',
      livemode: false,
      type: status === 'canceled' ? 'refund.updated' : 'refund.created',
      created,
      request: { id: null, idempotency_key: key },
      data: {
        object: { id: refund, object: 'refund', amount: 700, currency: 'usd', payment_intent: pi.id, status },
      },
    });
  const now = Math.floor(Date.now() / 1000);
  for (const order of [
    ['pending', 'canceled'],
    ['canceled', 'pending'],
  ]) {
    const ticket = await enterOne(
      w,
      `refund-${order.join('-')}`,
      { payment_intent: pi.id, amount: 700 },
      700,
    );
    const key = ticket.nativeKey ?? '';
    const refund = `re_${order[0]}First`;
    for (const status of order) {
      const created = status === 'pending' ? now - 1 : now;
      const body = refundEvent(key, refund, status, created);
      const r = await w.svc.observe(
        deliveryObservation(
          ticket.occurrence.id,
          source(w, 'webhook'),
          deliver(w, body, sign(w, body)),
          Date.now(),
        ),
      );
      assert.equal(r.missingKnowledge, null, `${order.join(' → ')}: ${status}`);
    }
    const o = await view(w, ticket.occurrence.id);
    assert.deepEqual(
      { outcome: o.outcome, effect: o.effect, conflict: o.conflict, unresolved: o.unresolved },
      { outcome: 'final_failure', effect: 'none_confirmed', conflict: false, unresolved: false },
      order.join(' → '),
    );
    assert.equal(w.sandbox.effectCount(key), 0);
  }
});

test('the entry rule: Baton’s own adapter sends the form once with the key and the credential', async (t) => {
  const w = await openStripeWorld(t);
  const adapter = new HttpProviderAdapter(w.profile.document, { keys: w.keys });
  const ticket = await enterOne(w, 'inv-adapter', pay(2200), 2200);
  const sent = await adapter.send(ticket);
  assert.equal(sent.acknowledged, true, sent.detail);
  const ack = await recordSend(w.svc, sent);
  assert.equal(ack.effective, true);
  assert.equal(ack.occurrence.effect, 'occurred');
  assert.match(ack.occurrence.provider.providerReference ?? '', /^pi_/);
  assert.equal(w.sandbox.effectCount(ticket.nativeKey ?? ''), 1);
  // A declined card: Stripe's 402 is an answer the profile does not map.
  const declined = await enterOne(
    w,
    'inv-declined',
    { ...pay(900), payment_method: 'pm_card_chargeDeclined' },
    900,
  );
  const r = await recordSend(w.svc, await adapter.send(declined));
  assert.equal(r.missingKnowledge, 'unmapped_status');
  assert.equal(r.occurrence.unresolved, true);
  // Without its credential the adapter sends nothing.
  const bare = new HttpProviderAdapter(w.profile.document, { keys: staticKeys({}) });
  const unsent = await enterOne(w, 'inv-bare', pay(100), 100);
  const result = await bare.send(unsent);
  assert.equal(result.sent, false);
  assert.equal(w.sandbox.effectCount(unsent.nativeKey ?? ''), 0);
});
