/**
 * Webhook signature schemes against the official helpers: signatures made by
 * `stripe.webhooks.generateTestHeaderString` and by the `standardwebhooks` package must be
 * accepted; tampered, replayed, out-of-tolerance and wrongly keyed ones refused. The Ed25519
 * (`v1a`) cases are signed here with node:crypto: the `standardwebhooks` package signs `v1` only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import { publicKeyRaw } from '../../src/core/ed25519.js';
import {
  signStandardWebhook,
  signStripePayload,
  standardWebhookKey,
  verifyStandardWebhook,
  verifyStripeSignature,
  WebhookReplayGuard,
} from '../../src/providers/webhook-schemes/index.js';
import { createStripeSandbox } from '../../src/providers/sandbox/stripe/index.js';
import { startReceiver } from './sandbox-support.js';

const stripe = new Stripe('sk_test_unused');
const SECRET = 'whsec_test_0123456789abcdef0123456789';
const NOW = Date.UTC(2026, 11, 1, 12);
const payload = JSON.stringify({ id: 'evt_1', object: 'event', type: 'payment_intent.succeeded' });
const official = (body: string, timestamp = NOW / 1000, secret = SECRET): string =>
  stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp });

test('Stripe-Signature made by the official helper is accepted', () => {
  const result = verifyStripeSignature({ payload, header: official(payload), secrets: [SECRET], nowMs: NOW });
  assert.deepEqual(result, { ok: true, scheme: 'stripe-signature', timestampMs: NOW });
});

test('Stripe-Signature: tampered body, other secret, out of tolerance, missing or malformed are refused', () => {
  const header = official(payload);
  const verify = (over: Partial<Parameters<typeof verifyStripeSignature>[0]>) =>
    verifyStripeSignature({ payload, header, secrets: [SECRET], nowMs: NOW, ...over });
  assert.deepEqual(verify({ payload: payload.replace('succeeded', 'failed') }), {
    ok: false,
    reason: 'bad_signature',
  });
  assert.deepEqual(verify({ secrets: ['whsec_other'] }), { ok: false, reason: 'bad_signature' });
  assert.deepEqual(verify({ nowMs: NOW + 301_000 }), { ok: false, reason: 'stale' });
  assert.deepEqual(verify({ nowMs: NOW - 301_000 }), { ok: false, reason: 'stale' });
  assert.equal(verify({ nowMs: NOW + 299_000 }).ok, true);
  assert.deepEqual(verify({ header: undefined }), { ok: false, reason: 'unsigned' });
  assert.deepEqual(verify({ header: 't=abc,v1=00' }), { ok: false, reason: 'malformed' });
  assert.deepEqual(verify({ header: `${header},t=1` }), { ok: false, reason: 'malformed' });
  assert.deepEqual(verify({ header: [header, header] }), { ok: false, reason: 'unsigned' });
});

test('Stripe-Signature: a rolled secret (two v1 values) authenticates with either secret; v0 alone never', () => {
  const t = NOW / 1000;
  const oldSig = official(payload, t, 'whsec_old').split(',')[1]!;
  const header = `${official(payload)},${oldSig}`;
  assert.equal(verifyStripeSignature({ payload, header, secrets: ['whsec_old'], nowMs: NOW }).ok, true);
  assert.equal(verifyStripeSignature({ payload, header, secrets: [SECRET], nowMs: NOW }).ok, true);
  const v0Only = official(payload).replace('v1=', 'v0=');
  assert.deepEqual(verifyStripeSignature({ payload, header: v0Only, secrets: [SECRET], nowMs: NOW }), {
    ok: false,
    reason: 'malformed',
  });
});

test("Baton's Stripe signer is accepted by the official stripe.webhooks.constructEvent", () => {
  const header = signStripePayload(SECRET, payload, Date.now());
  const event = stripe.webhooks.constructEvent(payload, header, SECRET);
  assert.equal(event.id, 'evt_1');
});

test('replay: an authentic delivery offered twice inside the window is refused the second time', () => {
  const guard = new WebhookReplayGuard(300_000);
  assert.equal(guard.check('evt_1', NOW), 'new');
  assert.equal(guard.check('evt_1', NOW + 1000), 'replayed');
  assert.equal(guard.check('evt_2', NOW + 1000), 'new');
});

const WH_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const swHeaders = (id: string, date: Date, body: string, secret = WH_SECRET): Record<string, string> => ({
  'webhook-id': id,
  'webhook-timestamp': String(Math.floor(date.getTime() / 1000)),
  'webhook-signature': new Webhook(secret).sign(id, date, body),
});

test('Standard Webhooks v1 made by the standardwebhooks package is accepted', () => {
  const headers = swHeaders('msg_1', new Date(NOW), payload);
  const result = verifyStandardWebhook({
    payload,
    headers,
    keys: [standardWebhookKey(WH_SECRET)],
    nowMs: NOW,
  });
  assert.deepEqual(result, { ok: true, scheme: 'standard-webhooks', timestampMs: NOW, id: 'msg_1' });
});

test('Standard Webhooks v1: tampered body or id, other secret, stale, missing headers are refused', () => {
  const headers = swHeaders('msg_2', new Date(NOW), payload);
  const keys = [standardWebhookKey(WH_SECRET)];
  const verify = (over: Partial<Parameters<typeof verifyStandardWebhook>[0]>) =>
    verifyStandardWebhook({ payload, headers, keys, nowMs: NOW, ...over });
  assert.deepEqual(verify({ payload: `${payload} ` }), { ok: false, reason: 'bad_signature' });
  assert.deepEqual(verify({ headers: { ...headers, 'webhook-id': 'msg_other' } }), {
    ok: false,
    reason: 'bad_signature',
  });
  const other = `whsec_${randomBytes(32).toString('base64')}`;
  assert.deepEqual(verify({ keys: [standardWebhookKey(other)] }), { ok: false, reason: 'bad_signature' });
  assert.deepEqual(verify({ nowMs: NOW + 301_000 }), { ok: false, reason: 'stale' });
  assert.deepEqual(verify({ headers: { ...headers, 'webhook-signature': '' } }), {
    ok: false,
    reason: 'unsigned',
  });
  assert.deepEqual(verify({ headers: { ...headers, 'webhook-timestamp': 'soon' } }), {
    ok: false,
    reason: 'malformed',
  });
});

test("Baton's Standard Webhooks v1 signer is accepted by the standardwebhooks package's verify", () => {
  const key = standardWebhookKey(WH_SECRET);
  assert.equal(key.kind, 'v1');
  const ts = Math.floor(Date.now() / 1000);
  const signature = signStandardWebhook(
    { kind: 'v1', secret: key.kind === 'v1' ? key.secret : new Uint8Array() },
    'msg_3',
    ts,
    payload,
  );
  const parsed = new Webhook(WH_SECRET).verify(payload, {
    'webhook-id': 'msg_3',
    'webhook-timestamp': String(ts),
    'webhook-signature': signature,
  });
  assert.deepEqual(parsed, JSON.parse(payload));
});

test('Standard Webhooks v1a (Ed25519, signed here with node:crypto) verifies with whpk_; tampering fails', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const whpk = `whpk_${publicKeyRaw(publicKey).toString('base64')}`;
  const ts = NOW / 1000;
  const signature = signStandardWebhook({ kind: 'v1a', privateKey }, 'msg_4', ts, payload);
  const headers = { 'webhook-id': 'msg_4', 'webhook-timestamp': String(ts), 'webhook-signature': signature };
  const keys = [standardWebhookKey(whpk)];
  assert.equal(verifyStandardWebhook({ payload, headers, keys, nowMs: NOW }).ok, true);
  assert.equal(verifyStandardWebhook({ payload: `${payload}x`, headers, keys, nowMs: NOW }).ok, false);
  // A v1a signature never passes for a v1 key, and the reverse.
  assert.equal(
    verifyStandardWebhook({ payload, headers, keys: [standardWebhookKey(WH_SECRET)], nowMs: NOW }).ok,
    false,
  );
});

test('standardWebhookKey refuses keys without their prefix or with a short secret', () => {
  assert.throws(() => standardWebhookKey('not-a-key'), { code: 'key_invalid' });
  assert.throws(() => standardWebhookKey(`whsec_${Buffer.alloc(8).toString('base64')}`), {
    code: 'key_invalid',
  });
});

test('the stripe flavour signs its webhook events so that stripe.webhooks.constructEvent accepts them', async () => {
  const receiver = await startReceiver(200);
  const sandbox = createStripeSandbox({ webhookUrls: [`${receiver.url}/hooks/stripe`] });
  try {
    const url = new URL(await sandbox.listen());
    const client = new Stripe(sandbox.secretKey, {
      host: url.hostname,
      port: Number(url.port),
      protocol: 'http',
      maxNetworkRetries: 0,
    });
    const paid = await client.paymentIntents.create(
      { amount: 900, currency: 'eur', confirm: true, payment_method: 'pm_card_visa' },
      { idempotencyKey: 'hook-key' },
    );
    await sandbox.webhooksIdle();
    const types = receiver.received.map((r) => (JSON.parse(r.body) as { type: string }).type);
    assert.deepEqual(types, ['payment_intent.created', 'payment_intent.succeeded']);
    for (const r of receiver.received) {
      const header = r.headers['stripe-signature'] as string;
      const event = client.webhooks.constructEvent(r.body, header, sandbox.webhookSecret);
      assert.equal((event.data.object as { id: string }).id, paid.id);
      assert.equal(
        verifyStripeSignature({
          payload: r.body,
          header,
          secrets: [sandbox.webhookSecret],
          nowMs: Date.now(),
        }).ok,
        true,
      );
    }
  } finally {
    await sandbox.close();
    await receiver.close();
  }
});
