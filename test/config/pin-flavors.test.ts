/**
 * `--pin-to-sandbox` / `profiles pin --from-sandbox` against each sandbox flavour, REAL servers on
 * loopback: the Stripe-compatible sandbox serves `/.well-known/baton-sandbox` (its origin and the
 * references its secrets go by, never the secrets), so the shipped Stripe profile pins from the
 * shell; a profile whose pins the sandbox cannot serve, or whose references differ from the
 * sandbox's, is refused before anything is registered.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { createSandboxProvider } from '../../src/providers/sandbox/index.js';
import { createStripeSandbox, type StripeSandbox } from '../../src/providers/sandbox/stripe/index.js';
import { repoRoot } from '../support/paths.js';
import { baton, PROFILE_FILE, startSandbox, tempDir, writeConfig } from './support.js';

const STRIPE_FILE = join(repoRoot, 'profiles', 'stripe-payment-intents.json');
const HMAC_FILE = join(repoRoot, 'profiles', 'sandbox-payments.json');

interface Pinned {
  version: string;
  entry: { url: string };
  acknowledgement: { authentication: { kind: string; origin?: string } };
  statusSources: { id: string; url: string; authentication: { origin?: string; secretId?: string } }[];
}

async function stripeSandbox(t: TestContext): Promise<StripeSandbox> {
  const sandbox = createStripeSandbox();
  await sandbox.listen(0);
  t.after(() => sandbox.close());
  return sandbox;
}

test('the Stripe profile pins to the Stripe-compatible sandbox: its origin, the references kept', async (t) => {
  const stripe = await stripeSandbox(t);
  const served = await fetch(`${stripe.url}/.well-known/baton-sandbox`);
  assert.equal(served.status, 200, 'no secret key needed for the discovery document');
  const text = await served.text();
  for (const secret of [stripe.secretKey, stripe.webhookSecret]) assert.ok(!text.includes(secret));

  const r = await baton(['profiles', 'pin', '--from-sandbox', stripe.url, '--template', STRIPE_FILE]);
  assert.equal(r.code, 0, r.err);
  const doc = JSON.parse(r.out) as Pinned;
  assert.match(doc.version, /^2026-12-07b\.[0-9a-f]{8}$/);
  assert.equal(doc.entry.url, `${stripe.url}/v1/payment_intents`);
  assert.equal(doc.acknowledgement.authentication.origin, stripe.url);
  const sources = Object.fromEntries(doc.statusSources.map((s) => [s.id, s]));
  assert.ok(sources['events']?.url.startsWith(`${stripe.url}/v1/events`));
  assert.equal(sources['by-id']?.authentication.origin, stripe.url);
  // Baton's own receiver, not the sandbox's: where the webhook arrives is not the provider's origin.
  assert.equal(sources['webhook']?.url, 'https://baton.example/v1/webhooks/stripe-payment-intents');
  assert.equal(sources['webhook']?.authentication.secretId, 'stripe-webhook-secret');
});

test('a profile the sandbox cannot serve is refused, saying why', async (t) => {
  const stripe = await stripeSandbox(t);
  const baton25519 = await startSandbox(t);
  // Exit 1: what the sandbox served does not do; exit 2: the profile given does not fit it.
  const refused = async (args: string[], pattern: RegExp): Promise<void> => {
    const r = await baton(['profiles', 'pin', '--from-sandbox', ...args]);
    assert.equal(r.code, r.err.includes('config_invalid') ? 2 : 1, r.err);
    assert.match(r.err, pattern);
  };
  // The Ed25519 sandbox profile against the Stripe flavour: no key to pin.
  await refused(
    [stripe.url],
    /^error: provider_response_invalid: the sandbox at \S+ serves no Ed25519 key to pin$/m,
  );
  // The Stripe profile against the Baton flavour: another account.
  await refused(
    [baton25519.url, '--template', STRIPE_FILE],
    /^error: config_invalid: the sandbox at \S+ does not serve the profile's account$/m,
  );
  // The HMAC profile against an Ed25519-only sandbox: no secret id to pin (was kept unpinned).
  await refused(
    [baton25519.url, '--template', HMAC_FILE],
    /^error: provider_response_invalid: the sandbox at \S+ serves no HMAC secret id to pin$/m,
  );
  // A Stripe profile naming its webhook secret otherwise: `serve` would resolve no such secret.
  const renamed = JSON.parse(readFileSync(STRIPE_FILE, 'utf8')) as Pinned;
  const webhook = renamed.statusSources.find((s) => s.id === 'webhook');
  assert.ok(webhook !== undefined);
  webhook.authentication.secretId = 'my-webhook-secret';
  const file = writeConfig(tempDir(t), renamed, 'renamed.json');
  await refused(
    [stripe.url, '--template', file],
    /^error: config_invalid: the profile's webhook secret my-webhook-secret is not the sandbox's reference stripe-webhook-secret$/m,
  );
  // An HMAC-only sandbox: the HMAC profile pins (before, every pin needed an Ed25519 key), the
  // Ed25519 one is refused.
  const plain = createSandboxProvider({ signing: 'hmac' });
  await plain.listen(0);
  t.after(() => plain.close());
  const hmac = await baton(['profiles', 'pin', '--from-sandbox', plain.url, '--template', HMAC_FILE]);
  assert.equal(hmac.code, 0, `an HMAC-only sandbox pins the HMAC profile: ${hmac.err}`);
  await refused([plain.url, '--template', PROFILE_FILE], /serves no Ed25519 key to pin$/m);
});
