/**
 * `baton reconcile --credentials FILE` (BATON_CREDENTIALS): the status sources of a format-2
 * profile (Stripe) need the secrets a credentials document references, as `baton serve` holds
 * them. Against the Stripe-compatible sandbox (`baton sandbox --flavor stripe`) and the official
 * `stripe` client on loopback and a real SQLite file — a compatible local server, not Stripe's.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { enterOne, openStripeWorld, view, type StripeWorld } from '../providers/stripe-world.js';
import { runBaton } from './run.js';

function reconcile(argv: string[], env: Record<string, string>) {
  return runBaton(['reconcile', ...argv], env);
}

/** A payment entered and made with the official client by an executor that then died. */
async function paidButUnrecorded(w: StripeWorld): Promise<string> {
  const params = { amount: 2000, currency: 'usd', confirm: true, payment_method: 'pm_card_visa' };
  const ticket = await enterOne(w, 'inv-reconcile-cli', params, 2000);
  await w.stripe.paymentIntents.create(params, {
    idempotencyKey: ticket.nativeKey ?? undefined,
  });
  return ticket.occurrence.id;
}

function secretsEnv(w: StripeWorld): Record<string, string> {
  return { STRIPE_SECRET_KEY: w.sandbox.secretKey, STRIPE_WEBHOOK_SECRET: w.sandbox.webhookSecret };
}

test('baton reconcile without the credentials document cannot authenticate the Stripe status: the payment stays unresolved, exit 1', async (t) => {
  const w = await openStripeWorld(t);
  const id = await paidButUnrecorded(w);
  const r = await reconcile(['--db', w.path, '--passes', '1', '--json'], secretsEnv(w));
  assert.equal(r.code, 1, r.err);
  const report = JSON.parse(r.out) as { unresolved: string[]; effective: number };
  assert.deepEqual([report.unresolved, report.effective], [[id], 0], r.out);
  assert.equal((await view(w, id)).unresolved, true);
});

test('baton reconcile --credentials settles the Stripe payment from its authenticated status, exit 0', async (t) => {
  const w = await openStripeWorld(t);
  const id = await paidButUnrecorded(w);
  const file = join(dirname(w.path), 'credentials.json');
  writeFileSync(file, JSON.stringify(w.credentials));
  const r = await reconcile(['--db', w.path, '--credentials', file], secretsEnv(w));
  assert.equal(r.code, 0, r.err);
  const settled = await view(w, id);
  assert.deepEqual([settled.unresolved, settled.effect, settled.outcome], [false, 'occurred', 'success']);
});

test('baton reconcile takes the document from BATON_CREDENTIALS; a reference it cannot resolve is refused before the store is touched', async (t) => {
  const w = await openStripeWorld(t);
  const id = await paidButUnrecorded(w);
  const file = join(dirname(w.path), 'credentials.json');
  writeFileSync(file, JSON.stringify(w.credentials));
  const missing = await reconcile(['--db', w.path], { BATON_CREDENTIALS: file, STRIPE_SECRET_KEY: '' });
  assert.notEqual(missing.code, 0);
  assert.match(missing.err, /credential/);
  assert.equal((await view(w, id)).unresolved, true, 'nothing was recorded');
  const r = await reconcile(['--db', w.path], { BATON_CREDENTIALS: file, ...secretsEnv(w) });
  assert.equal(r.code, 0, r.err);
  assert.equal((await view(w, id)).unresolved, false);
});

test('baton reconcile refuses a credentials document whose entries do not say where they may be sent, before the store is touched (exit 2)', async (t) => {
  const w = await openStripeWorld(t);
  const id = await paidButUnrecorded(w);
  const file = join(dirname(w.path), 'credentials.json');
  // The format as it was before origins: every entry must now list them, or the file is refused.
  const before = {
    format: 'baton.credentials/1',
    credentials: {
      'stripe-secret-key': { env: 'STRIPE_SECRET_KEY' },
      'stripe-webhook-secret': { env: 'STRIPE_WEBHOOK_SECRET' },
    },
  };
  writeFileSync(file, JSON.stringify(before));
  const r = await reconcile(['--db', w.path, '--credentials', file], secretsEnv(w));
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /credentials_invalid: \$\.credentials\.stripe-secret-key\.origins: is required/);
  assert.ok(!r.err.includes(w.sandbox.secretKey));
  assert.equal((await view(w, id)).unresolved, true, 'nothing was recorded');
});

test('baton reconcile with the secret key listed for another origin does not ask the sandbox: the payment stays unresolved', async (t) => {
  const w = await openStripeWorld(t);
  const id = await paidButUnrecorded(w);
  const file = join(dirname(w.path), 'credentials.json');
  const elsewhere = {
    format: 'baton.credentials/1',
    credentials: {
      'stripe-secret-key': { env: 'STRIPE_SECRET_KEY', origins: ['https://api.stripe.com'] },
      'stripe-webhook-secret': { env: 'STRIPE_WEBHOOK_SECRET', origins: [] },
    },
  };
  writeFileSync(file, JSON.stringify(elsewhere));
  const r = await reconcile(['--db', w.path, '--credentials', file], secretsEnv(w));
  assert.equal(r.code, 1, r.err);
  // Not asked: missing knowledge (the reading's detail is credential_origin_refused,
  // test/providers/credential-origins.test.ts).
  assert.match(r.err, /via events: not effective \(unavailable\)/);
  assert.equal((await view(w, id)).unresolved, true);
});
