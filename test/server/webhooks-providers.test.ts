/**
 * Real providers' webhooks in a real `baton serve` child process (issue 13 §1, §3, §7), on SQLite
 * and PostgreSQL: the Stripe-compatible sandbox (`baton sandbox --flavor stripe`, in-process) paid
 * through the official `stripe` client delivers Stripe-signed events to serve's receiver; captured
 * events are re-signed by the official helper `stripe.webhooks.generateTestHeaderString`; Standard
 * Webhooks v1 deliveries are signed by the `standardwebhooks` package, and v1a ones with
 * node:crypto's Ed25519 (the package signs v1 only). A compatible local server, not Stripe's servers.
 * Valid deliveries settle; tampered, replayed, out-of-tolerance, wrong-account and wrong-amount
 * ones settle nothing; duplicates and out-of-order events never move an occurrence back.
 */
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { test, type TestContext } from 'node:test';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { publicKeyRaw } from '../../src/core/ed25519.js';
import type { JsonObject } from '../../src/core/json.js';
import { loadProfile } from '../../src/providers/index.js';
import { postgresForTests } from '../support/postgres.js';
import { assertProblem } from './helpers.js';
import {
  deliver,
  detail,
  enter,
  openServeWorld,
  registerProfile,
  verdicts,
  type EngineName,
  type ServeWorld,
} from './provider-serve-world.js';

const db = await postgresForTests();
const engines: EngineName[] = db === undefined ? ['sqlite'] : ['sqlite', 'postgres'];
const SW_V1 = loadProfile('standard-webhooks-v1');
const official = new Stripe('sk_test_unused_for_signing_helpers');

async function world(t: TestContext, engine: EngineName): Promise<ServeWorld> {
  return openServeWorld(t, engine, engine === 'postgres' ? await db!.schema() : undefined);
}

const nowS = (): number => Math.floor(Date.now() / 1000);

function stripeHeader(secret: string, body: string, timestamp = nowS()): Record<string, string> {
  const header = official.webhooks.generateTestHeaderString({ payload: body, secret, timestamp });
  return { 'stripe-signature': header, 'content-type': 'application/json' };
}

function capturedEvent(
  events: readonly { type: string; body: string }[],
  key: string,
  type: string,
): JsonObject {
  const e = events.find((x) => x.type === type && x.body.includes(key));
  assert.ok(e, `the sandbox emitted ${type} for ${key}`);
  return JSON.parse(e.body) as JsonObject;
}

function withAmount(event: JsonObject, id: string, amount: number): JsonObject {
  const data = event['data'] as { object: JsonObject };
  return { ...event, id, data: { object: { ...data.object, amount } } };
}

for (const engine of engines) {
  test(`[${engine}] serve: the Stripe sandbox's signed webhooks settle a payment made by the official client; a re-delivery is a duplicate`, async (t) => {
    const w = await world(t, engine);
    const STRIPE = w.stripeProfile;
    const ticket = await enter(w, STRIPE, 'inv-stripe-1', 1800);
    const key = ticket.nativeKey ?? '';
    await w.stripe.paymentIntents.create(
      { amount: 1800, currency: 'usd', confirm: true, payment_method: 'pm_card_visa' },
      { idempotencyKey: key },
    );
    await w.stripeSandbox.webhooksIdle();
    const statuses = w.stripeSandbox.events().flatMap((e) => e.deliveries.map((d) => d.status));
    assert.ok(statuses.length >= 2, 'created and succeeded were delivered');
    assert.ok(
      statuses.every((s) => s === 200),
      `serve answered ${statuses.join(',')}`,
    );
    const settled = await detail(w, ticket.occurrence.id);
    assert.equal(settled.occurrence['outcome'], 'success');
    assert.equal(settled.occurrence['unresolved'], false);
    assert.equal(
      settled.occurrence['conflict'],
      false,
      'created then succeeded, in any order, is no contradiction',
    );
    assert.ok((await verdicts(w, ticket.occurrence.id)).includes(null), 'one webhook was authoritative');

    const body = JSON.stringify(capturedEvent(w.stripeSandbox.events(), key, 'payment_intent.succeeded'));
    const again = await deliver(w, STRIPE.id, body, stripeHeader(w.webhookSecret, body));
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.body, { received: true, duplicate: true, recorded: false });
    assert.equal((await detail(w, ticket.occurrence.id)).evidence.length, settled.evidence.length);
    assert.equal(w.stripeSandbox.effectCount(key), 1);
  });

  test(`[${engine}] serve: tampered, forged, unsigned, out-of-tolerance, wrong-account and wrong-amount Stripe events settle nothing; the valid one settles once`, async (t) => {
    const w = await world(t, engine);
    const STRIPE = w.stripeProfile;
    const ticket = await enter(w, STRIPE, 'inv-stripe-2', 2500);
    const id = ticket.occurrence.id;
    const key = ticket.nativeKey ?? '';
    // Paid on the quiet sandbox: its events are captured here, not delivered.
    await w.quiet.paymentIntents.create(
      { amount: 2500, currency: 'usd', confirm: true, payment_method: 'pm_card_visa' },
      { idempotencyKey: key },
    );
    const succeeded = capturedEvent(w.quietSandbox.events(), key, 'payment_intent.succeeded');
    const body = JSON.stringify(succeeded);
    const secret = w.webhookSecret;
    const tampered = body.replace('"amount":2500', '"amount":1');
    assert.notEqual(tampered, body);
    const refusals: [string, string, Record<string, string>, string][] = [
      ['unsigned', body, { 'content-type': 'application/json' }, 'webhook_unauthenticated'],
      ['tampered', tampered, stripeHeader(secret, body), 'webhook_unauthenticated'],
      [
        'forged',
        body,
        stripeHeader(`whsec_${randomBytes(24).toString('hex')}`, body),
        'webhook_unauthenticated',
      ],
      ['out of tolerance', body, stripeHeader(secret, body, nowS() - 600), 'webhook_stale'],
    ];
    for (const [name, b, headers, code] of refusals) {
      const refused = await deliver(w, STRIPE.id, b, headers);
      assert.equal(refused.status, 401, `${name}: ${refused.text}`);
      assertProblem(refused, 401, code);
    }
    const other = JSON.stringify({ ...succeeded, id: 'evt_other_account', account: 'acct_someone_else' });
    const elsewhere = await deliver(w, STRIPE.id, other, stripeHeader(secret, other));
    assert.equal(elsewhere.status, 202, `wrong account: ${elsewhere.text}`);
    assert.equal(elsewhere.body['recorded'], false, 'it names no occurrence of this account');
    const more = JSON.stringify(withAmount(succeeded, 'evt_wrong_amount', 2600));
    const wrongAmount = await deliver(w, STRIPE.id, more, stripeHeader(secret, more));
    assert.equal(wrongAmount.status, 200, wrongAmount.text);
    assert.equal(wrongAmount.body['effective'], false, 'an authentic event for another amount is no answer');
    let d = await detail(w, id);
    assert.equal(d.occurrence['unresolved'], true, 'nothing above settled it');
    assert.deepEqual(
      await verdicts(w, id),
      ['unauthenticated', 'unauthenticated', 'unauthenticated', 'unauthenticated', 'binding_mismatch'],
      'every refused delivery about the occurrence is kept as evidence only',
    );

    const header = stripeHeader(secret, body);
    const good = await deliver(w, STRIPE.id, body, header);
    assert.equal(good.status, 200, good.text);
    assert.deepEqual(good.body, { received: true, duplicate: false, recorded: true, effective: true });
    d = await detail(w, id);
    assert.equal(d.occurrence['outcome'], 'success');
    const replayed = await deliver(w, STRIPE.id, body, header);
    assert.deepEqual(replayed.body, { received: true, duplicate: true, recorded: false });
    // Out of order: the older `created` event arrives after `succeeded`.
    const created = JSON.stringify(capturedEvent(w.quietSandbox.events(), key, 'payment_intent.created'));
    const late = await deliver(w, STRIPE.id, created, stripeHeader(secret, created));
    assert.equal(late.status, 200, late.text);
    const after = await detail(w, id);
    assert.equal(after.occurrence['outcome'], 'success', 'never moved back');
    assert.equal(after.occurrence['unresolved'], false);
    assert.equal(
      after.evidence.length,
      d.evidence.length + 1,
      'the late event is recorded, the replay was not',
    );
  });

  test(`[${engine}] serve: Standard Webhooks v1 (standardwebhooks package) and v1a (Ed25519 via node:crypto) settle; tampered, stale, replayed and other-key ones do not`, async (t) => {
    const w = await world(t, engine);
    const signer = new Webhook(w.standardSecret);
    const v1 = (msg: string, body: string, at = new Date(), signed = body) => ({
      'webhook-id': msg,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signer.sign(msg, at, signed),
    });
    const ticket = await enter(w, SW_V1, 'sw-1', 700);
    const body = standardEvent(ticket.nativeKey ?? '', 700);
    assertProblem(
      await deliver(w, SW_V1.id, standardEvent(ticket.nativeKey ?? '', 7), v1('msg_t', body)),
      401,
      'webhook_unauthenticated',
    );
    assertProblem(
      await deliver(w, SW_V1.id, body, v1('msg_s', body, new Date(Date.now() - 600_000))),
      401,
      'webhook_stale',
    );
    const more = standardEvent(ticket.nativeKey ?? '', 701);
    assert.equal((await deliver(w, SW_V1.id, more, v1('msg_w', more))).body['effective'], false);
    assert.equal((await detail(w, ticket.occurrence.id)).occurrence['unresolved'], true);
    const headers = v1('msg_1', body);
    const good = await deliver(w, SW_V1.id, body, headers);
    assert.equal(good.body['effective'], true, good.text);
    assert.equal(
      (await deliver(w, SW_V1.id, body, headers)).body['duplicate'],
      true,
      'webhook-id is the event id',
    );
    assert.equal((await detail(w, ticket.occurrence.id)).occurrence['outcome'], 'success');

    const pair = generateKeyPairSync('ed25519');
    const v1a = v1aProfile(pair.publicKey);
    await registerProfile(w, v1a);
    const entered = await enter(w, v1a, 'sw-a', 900);
    const signedA = standardEvent(entered.nativeKey ?? '', 900);
    const stranger = generateKeyPairSync('ed25519').privateKey;
    assertProblem(
      await deliver(w, v1a.id, signedA, v1aHeaders(stranger, 'msg_x', signedA)),
      401,
      'webhook_unauthenticated',
    );
    assert.equal((await detail(w, entered.occurrence.id)).occurrence['unresolved'], true);
    const accepted = await deliver(w, v1a.id, signedA, v1aHeaders(pair.privateKey, 'msg_a', signedA));
    assert.equal(accepted.body['effective'], true, accepted.text);
    assert.equal((await detail(w, entered.occurrence.id)).occurrence['outcome'], 'success');
  });
}

for (const engine of engines) {
  test(`[${engine}] serve: an authentic event dated a little ahead settles (the service's 60 s allowance); one dated beyond it is refused webhook_stale and its event id is not spent`, async (t) => {
    const w = await world(t, engine);
    const signer = new Webhook(w.standardSecret);
    const v1 = (msg: string, body: string) => {
      const at = new Date();
      return {
        'webhook-id': msg,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signer.sign(msg, at, body),
      };
    };
    // A provider's clock 2 s ahead of ours: within the allowance every status answer gets.
    const ahead = await enter(w, SW_V1, 'sw-ahead', 700);
    const soon = standardEvent(ahead.nativeKey ?? '', 700, new Date(Date.now() + 2_000));
    const settled = await deliver(w, SW_V1.id, soon, v1('msg_ahead', soon));
    assert.equal(settled.status, 200, settled.text);
    assert.equal(settled.body['effective'], true, settled.text);
    assert.equal((await detail(w, ahead.occurrence.id)).occurrence['outcome'], 'success');

    // Ten minutes ahead: authentic, but not usable now. Not recorded under its id, so not spent.
    const late = await enter(w, SW_V1, 'sw-far', 800);
    // Its own provider object: pay_sw_1 is the first occurrence's.
    const other = (body: string) => body.replace('"pay_sw_1"', '"pay_sw_far"');
    const far = other(standardEvent(late.nativeKey ?? '', 800, new Date(Date.now() + 600_000)));
    const refused = await deliver(w, SW_V1.id, far, v1('msg_far', far));
    assertProblem(refused, 401, 'webhook_stale');
    assert.deepEqual(refused.body['details'], { reason: 'future_dated' });
    const d = await detail(w, late.occurrence.id);
    assert.equal(d.occurrence['unresolved'], true);
    assert.equal(d.occurrence['outcome'], 'unknown');
    // The provider's retry under the same webhook-id (here dated now, as by then it would be) is
    // new, not a duplicate, and settles.
    const now = other(standardEvent(late.nativeKey ?? '', 800));
    const retried = await deliver(w, SW_V1.id, now, v1('msg_far', now));
    assert.equal(retried.status, 200, retried.text);
    assert.equal(retried.body['duplicate'], false, retried.text);
    assert.equal(retried.body['effective'], true, retried.text);
    assert.equal((await detail(w, late.occurrence.id)).occurrence['outcome'], 'success');
  });
}

function standardEvent(key: string, amount: number, at = new Date()): string {
  return JSON.stringify({
    type: 'payment.succeeded',
    timestamp: at.toISOString(),
    data: {
      id: 'pay_sw_1',
      status: 'succeeded',
      idempotency_key: key,
      amount,
      currency: 'usd',
      account: 'acct_reference_deployment',
    },
  });
}

/** The shipped v1a profile pinned to this test's own Ed25519 key. */
function v1aProfile(publicKey: KeyObject) {
  const raw = publicKeyRaw(publicKey);
  const shipped = loadProfile('standard-webhooks-v1a');
  const pin = {
    kind: 'standard-webhooks' as const,
    version: 'v1a' as const,
    kid: `sha256:${createHash('sha256').update(raw).digest('hex')}`,
    publicKey: `whpk_${raw.toString('base64')}`,
    toleranceSeconds: 300,
  };
  return {
    ...shipped,
    statusSources: shipped.statusSources.map((s) =>
      s.kind === 'webhook' ? { ...s, authentication: pin } : s,
    ),
  };
}

/** SIMULATED sender: a v1a signature made here with node:crypto over `${id}.${timestamp}.${body}`. */
function v1aHeaders(privateKey: KeyObject, msg: string, body: string): Record<string, string> {
  const ts = String(nowS());
  const signature = sign(null, Buffer.from(`${msg}.${ts}.${body}`), privateKey).toString('base64');
  return { 'webhook-id': msg, 'webhook-timestamp': ts, 'webhook-signature': `v1a,${signature}` };
}
