/**
 * Stripe's events name the request that CAUSED them (`request.idempotency_key`): the entry's own
 * key only for events the entry caused. A cancel call with another idempotency key causes a
 * `payment_intent.canceled` naming THAT key. The shipped profiles read the key with
 * `nativeKeyOf: causing_request` (docs/providers.md "Read rules"), so such an event anchors to the
 * occurrence by its BOUND provider reference — through `baton serve`'s webhook receiver (located
 * by the bound reference, migration 034) and through the events listing — and ends it
 * final_failure / none_confirmed as the profile's `canceled` says. Fail closed: before the
 * reference is bound such an event settles nothing, and a strict profile (no `nativeKeyOf`) still
 * refuses a foreign key as `binding_mismatch`. A real `baton serve` child process (SQLite file and
 * PostgreSQL), the Stripe-compatible sandbox over loopback HTTP paid through the official `stripe`
 * client, deliveries signed by its own helper: a compatible local server, not Stripe's servers.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test, type TestContext } from 'node:test';
import Stripe from 'stripe';
import type { JsonObject } from '../../src/core/json.js';
import type { ProviderProfile } from '../../src/occurrences/index.js';
import { postgresForTests } from '../support/postgres.js';
import {
  deliver,
  detail,
  enter,
  ok,
  openServeWorld,
  registerProfile,
  verdicts,
  type EngineName,
  type ServeWorld,
} from './provider-serve-world.js';

const db = await postgresForTests();
const engines: EngineName[] = db === undefined ? ['sqlite'] : ['sqlite', 'postgres'];
const official = new Stripe('sk_test_unused_for_signing_helpers');
const AUTHORISE = {
  amount: 1500,
  currency: 'usd',
  confirm: true,
  payment_method: 'pm_card_visa',
  capture_method: 'manual',
} as const;

async function world(t: TestContext, engine: EngineName): Promise<ServeWorld> {
  return openServeWorld(t, engine, engine === 'postgres' ? await db!.schema() : undefined);
}

function signed(w: ServeWorld, event: JsonObject): [string, Record<string, string>] {
  const body = JSON.stringify(event);
  const header = official.webhooks.generateTestHeaderString({
    payload: body,
    secret: w.webhookSecret,
    timestamp: Math.floor(Date.now() / 1000),
  });
  return [body, { 'stripe-signature': header, 'content-type': 'application/json' }];
}

async function send(w: ServeWorld, event: JsonObject) {
  const [body, headers] = signed(w, event);
  return deliver(w, w.stripeProfile.id, body, headers);
}

async function state(w: ServeWorld, id: string) {
  const o = (await detail(w, id)).occurrence;
  return { outcome: o['outcome'], effect: o['effect'], conflict: o['conflict'] };
}

const SETTLED = { outcome: 'final_failure', effect: 'none_confirmed', conflict: false };
const SUCCEEDED = { outcome: 'success', effect: 'occurred', conflict: false };
const AUTHORISED = { outcome: 'accepted', effect: 'unresolved', conflict: false };
const otherKey = (): string => `cancel-${randomBytes(8).toString('hex')}`;

/** The quiet sandbox's captured events of one PaymentIntent, by type. */
function eventsOf(w: ServeWorld, pi: string): Map<string, JsonObject> {
  const all = w.quietSandbox.events().map((e) => JSON.parse(e.body) as JsonObject);
  const mine = all.filter((e) => (e['data'] as { object: JsonObject }).object['id'] === pi);
  return new Map(mine.map((e) => [e['type'] as string, e]));
}

/** The carried native key of the last recorded observation (the raw value stays in evidence). */
async function lastCarriedKey(w: ServeWorld, id: string): Promise<unknown> {
  const observed = (await detail(w, id)).evidence.filter((e) => e['type'] === 'observation_recorded');
  const body = observed.at(-1)?.['body'] as { observation: { carried: JsonObject } } | undefined;
  return body?.observation.carried['nativeKey'];
}

/** The deployed profile as a strict one: no read rule says its key is the causing request's. */
function strict(p: ProviderProfile, version: string): ProviderProfile {
  const statusSources = p.statusSources.map((s) => {
    if (s.read === undefined) return s;
    const { nativeKeyOf: _dropped, ...read } = s.read;
    return { ...s, read };
  });
  return { ...p, version, statusSources };
}

/** Only the events listing: reconcile asks it alone (no lookup by id, no webhook pin). */
function listingOnly(p: ProviderProfile, version: string): ProviderProfile {
  return { ...p, version, statusSources: p.statusSources.filter((s) => s.id === 'events') };
}

/** Entered under `profile`, authorised on the quiet sandbox with the entry's key. */
async function authorised(w: ServeWorld, profile: ProviderProfile, creationKey: string) {
  const ticket = await enter(w, profile, creationKey, 1500);
  const key = ticket.nativeKey ?? '';
  const pi = await w.quiet.paymentIntents.create(AUTHORISE, { idempotencyKey: key });
  assert.equal(pi.status, 'requires_capture');
  return { id: ticket.occurrence.id, key, pi: pi.id };
}

for (const engine of engines) {
  test(`[${engine}] serve: a payment_intent.canceled naming the cancel's own idempotency key (or none) is located by the bound reference and settles final_failure / none_confirmed`, async (t) => {
    const w = await world(t, engine);
    for (const sent of ['another-key', 'no-key'] as const) {
      const a = await authorised(w, w.stripeProfile, `inv-cancel-${sent}`);
      // The created event names the entry's key: it locates the occurrence and binds pi_….
      const created = await send(w, eventsOf(w, a.pi).get('payment_intent.created') ?? {});
      assert.equal(created.status, 200, created.text);
      assert.deepEqual(await state(w, a.id), AUTHORISED, sent);
      const cancelKey = otherKey();
      await w.quiet.paymentIntents.cancel(a.pi, {}, { idempotencyKey: cancelKey });
      const canceled = eventsOf(w, a.pi).get('payment_intent.canceled');
      assert.ok(canceled, 'the sandbox emitted payment_intent.canceled');
      const request = canceled['request'] as JsonObject;
      assert.equal(request['idempotency_key'], cancelKey, 'the event names the cancel request');
      // An event caused by no request (or a call sent without a key) names none.
      const event =
        sent === 'no-key' ? { ...canceled, request: { id: null, idempotency_key: null } } : canceled;
      const r = await send(w, event);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body['recorded'], true, r.text);
      assert.equal(r.body['effective'], true, r.text);
      assert.deepEqual(await state(w, a.id), SETTLED, sent);
      assert.equal(await lastCarriedKey(w, a.id), sent === 'no-key' ? null : cancelKey, 'kept as carried');
      const again = await send(w, event);
      assert.equal(again.body['duplicate'], true, 'a re-delivery is a duplicate');
    }
  });

  test(`[${engine}] serve: a payment_intent.succeeded caused by a capture call with its own idempotency key is located by the bound reference and settles success`, async (t) => {
    const w = await world(t, engine);
    const a = await authorised(w, w.stripeProfile, 'inv-capture');
    assert.equal((await send(w, eventsOf(w, a.pi).get('payment_intent.created') ?? {})).status, 200);
    assert.deepEqual(await state(w, a.id), AUTHORISED);
    const captureKey = otherKey();
    await w.quiet.paymentIntents.capture(a.pi, {}, { idempotencyKey: captureKey });
    const succeeded = eventsOf(w, a.pi).get('payment_intent.succeeded');
    assert.ok(succeeded, 'the sandbox emitted payment_intent.succeeded');
    assert.equal((succeeded['request'] as JsonObject)['idempotency_key'], captureKey, 'names the capture');
    const r = await send(w, succeeded);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body['effective'], true, r.text);
    assert.deepEqual(await state(w, a.id), SUCCEEDED);
  });

  test(`[${engine}] serve: fail closed — before the reference is bound a foreign-key cancel settles nothing; a strict profile still calls it binding_mismatch`, async (t) => {
    const w = await world(t, engine);
    const a = await authorised(w, w.stripeProfile, 'inv-unbound');
    await w.quiet.paymentIntents.cancel(a.pi, {}, { idempotencyKey: otherKey() });
    const canceled = eventsOf(w, a.pi).get('payment_intent.canceled') ?? {};
    const early = await send(w, canceled);
    assert.equal(early.status, 202, 'no occurrence is bound to the reference yet: nothing located');
    assert.equal(early.body['recorded'], false);
    assert.equal((await detail(w, a.id)).occurrence['outcome'], 'unknown', 'nothing settled');
    // Bound by the created event, the same (never remembered) cancel event now settles.
    await send(w, eventsOf(w, a.pi).get('payment_intent.created') ?? {});
    assert.equal((await send(w, canceled)).status, 200);
    assert.deepEqual(await state(w, a.id), SETTLED);

    const STRICT = strict(w.stripeProfile, `${w.stripeProfile.version}-strict`);
    await registerProfile(w, STRICT);
    const s = await authorised(w, STRICT, 'inv-strict');
    assert.equal((await send(w, eventsOf(w, s.pi).get('payment_intent.created') ?? {})).status, 200);
    assert.deepEqual(await state(w, s.id), AUTHORISED);
    await w.quiet.paymentIntents.cancel(s.pi, {}, { idempotencyKey: otherKey() });
    const r = await send(w, eventsOf(w, s.pi).get('payment_intent.canceled') ?? {});
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body['effective'], false, 'a strict key that is not the binding settles nothing');
    assert.equal((await verdicts(w, s.id)).at(-1), 'binding_mismatch');
    assert.deepEqual(await state(w, s.id), AUTHORISED);
  });

  test(`[${engine}] serve: an unsigned delivery that names a bound reference but no native key of Baton's is refused 401 and writes no evidence (the cap cannot be filled by whoever knows a pi_…)`, async (t) => {
    const w = await world(t, engine);
    const a = await authorised(w, w.stripeProfile, 'inv-unsigned-ref');
    assert.equal((await send(w, eventsOf(w, a.pi).get('payment_intent.created') ?? {})).status, 200);
    await w.quiet.paymentIntents.cancel(a.pi, {}, { idempotencyKey: otherKey() });
    const canceled = eventsOf(w, a.pi).get('payment_intent.canceled') ?? {};
    const before = (await detail(w, a.id)).evidence.length;
    const [body, headers] = signed(w, canceled);
    const forged = {
      ...headers,
      'stripe-signature': headers['stripe-signature']!.replace(/v1=[0-9a-f]+/, `v1=${'0'.repeat(64)}`),
    };
    const r = await deliver(w, w.stripeProfile.id, body, forged);
    assert.equal(r.status, 401, r.text);
    assert.equal((await detail(w, a.id)).evidence.length, before, 'nothing appended');
    assert.deepEqual(await state(w, a.id), AUTHORISED);
    // Located by the entry's own key, a refused delivery is still kept (AOC-CASE-009).
    const created = eventsOf(w, a.pi).get('payment_intent.created') ?? {};
    const [cBody, cHeaders] = signed(w, { ...created, id: 'evt_forged_created' });
    const cForged = {
      ...cHeaders,
      'stripe-signature': cHeaders['stripe-signature']!.replace(/v1=[0-9a-f]+/, `v1=${'0'.repeat(64)}`),
    };
    assert.equal((await deliver(w, w.stripeProfile.id, cBody, cForged)).status, 401);
    assert.equal((await detail(w, a.id)).evidence.length, before + 1, 'kept once, as evidence only');
  });

  test(`[${engine}] serve: reconcile over the events listing settles a PaymentIntent canceled with another key; a strict listing does not`, async (t) => {
    const w = await world(t, engine);
    const base = w.stripeProfile;
    for (const [profile, settles] of [
      [listingOnly(base, `${base.version}-list`), true],
      [listingOnly(strict(base, `${base.version}-strict`), `${base.version}-slist`), false],
    ] as const) {
      await registerProfile(w, profile);
      const ticket = await enter(w, profile, `inv-listing-${profile.version}`, 1500);
      const key = ticket.nativeKey ?? '';
      const id = ticket.occurrence.id;
      const pi = await w.stripe.paymentIntents.create(AUTHORISE, { idempotencyKey: key });
      await ok(w, 'POST', `/v1/occurrences/${id}/reconcile`);
      assert.deepEqual(await state(w, id), AUTHORISED, `${profile.version}: the listing bound pi_…`);
      await w.stripe.paymentIntents.cancel(pi.id, {}, { idempotencyKey: otherKey() });
      await w.stripeSandbox.webhooksIdle();
      await ok(w, 'POST', `/v1/occurrences/${id}/reconcile`);
      assert.deepEqual(await state(w, id), settles ? SETTLED : AUTHORISED, profile.version);
    }
  });
}
