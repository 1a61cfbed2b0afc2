/**
 * A credential is attached to a request only when the request URL's origin is one its credentials
 * entry lists (docs/providers.md "Credentials"), checked in `exchange` against the very URL it
 * sends to: lookups, listings and the entry call all go through it. Against a recording listener
 * on loopback and the Stripe-compatible sandbox (`baton sandbox --flavor stripe`) with the shipped
 * profile deployed to it — a compatible local server, not Stripe's.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isBatonError } from '../../src/core/errors.js';
import { systemClock } from '../../src/core/clock.js';
import type { ProviderProfile } from '../../src/occurrences/index.js';
import {
  deployProfile,
  HttpProviderAdapter,
  loadProfile,
  StatusSources,
  staticKeys,
  uncoveredCredentials,
} from '../../src/providers/index.js';
import { sendDeclared } from '../../src/providers/declared/entry.js';
import { exchange } from '../../src/providers/http-client.js';
import { enterOne, openStripeWorld } from './stripe-world.js';

const SECRET = 'sk_test_never_leaves-9c1e';
const bearer = { id: 'api', scheme: 'bearer' } as const;

async function recorder(t: TestContext): Promise<{ url: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

test('exchange attaches a credential only for an origin its entry lists; otherwise nothing is sent', async (t) => {
  const r = await recorder(t);
  const url = new URL(`${r.url}/v1/events?limit=1`);
  const send = (keys: ReturnType<typeof staticKeys>) =>
    exchange({ method: 'GET', url, credential: { use: bearer, keys }, timeoutMs: 5_000 });
  const secret = { api: Buffer.from(SECRET) };

  const elsewhere = await send(staticKeys(secret, { api: ['https://api.stripe.com'] }));
  assert.deepEqual(elsewhere, {
    ok: false,
    error: 'credential',
    name: 'credential_origin_refused',
    sent: false,
  });
  // A secret given no origins (BATON_HMAC_SECRETS, a webhook secret: `[]`) only verifies.
  const nowhere = await send(staticKeys(secret));
  assert.deepEqual(nowhere, {
    ok: false,
    error: 'credential',
    name: 'credential_origin_refused',
    sent: false,
  });
  // Same host, another port or scheme is another origin.
  const port = await send(staticKeys(secret, { api: [`http://127.0.0.1:${Number(url.port) + 1}`] }));
  assert.equal(port.ok, false);
  const notHeld = await send(staticKeys({}, { api: [r.url] }));
  assert.deepEqual(notHeld, { ok: false, error: 'credential', name: 'credential_not_held', sent: false });
  assert.equal(r.seen.length, 0, 'no request reached the listener');

  const listed = await send(staticKeys(secret, { api: ['https://api.stripe.com', r.url] }));
  assert.equal(listed.ok, true);
  assert.deepEqual(
    r.seen.map((h) => h.authorization),
    [`Bearer ${SECRET}`],
  );
});

test('a status source whose origin the credential does not cover is not asked: credential_origin_refused, missing knowledge', async (t) => {
  const w = await openStripeWorld(t);
  const ticket = await enterOne(w, 'inv-origin', { amount: 500, currency: 'usd' }, 500);
  const secret = { 'stripe-secret-key': Buffer.from(w.sandbox.secretKey) };
  const sources = new StatusSources({
    keys: staticKeys(secret, { 'stripe-secret-key': ['https://api.stripe.com'] }),
  });
  const o = await w.svc.getOccurrenceView(ticket.occurrence.id);
  const reading = await sources.query(w.profile.document, o, 'events');
  assert.equal(reading.observation.result, 'unavailable');
  assert.match(reading.detail, /credential_origin_refused/);
  // The same question with the sandbox's origin listed is asked and answered.
  const asked = await w.sources.query(w.profile.document, o, 'events');
  assert.doesNotMatch(asked.detail, /credential_/);
});

test('the entry call: an adapter refuses a profile whose entry origin its credential does not cover; the send refuses it again, nothing sent', async (t) => {
  const w = await openStripeWorld(t);
  const secret = { 'stripe-secret-key': Buffer.from(w.sandbox.secretKey) };
  const keys = staticKeys(secret, { 'stripe-secret-key': ['https://api.stripe.com'] });
  assert.throws(
    () => new HttpProviderAdapter(w.profile.document, { keys }),
    (e: unknown) => {
      assert.ok(isBatonError(e), String(e));
      assert.equal(e.code, 'credential_origin_refused');
      assert.equal(e.details['origin'], new URL(w.sandbox.url).origin);
      assert.ok(!e.message.includes(w.sandbox.secretKey));
      return true;
    },
  );
  // The check at the moment of sending, below the adapter: the request is not made.
  const ticket = await enterOne(w, 'inv-entry-origin', { amount: 700, currency: 'usd' }, 700);
  const entry = w.profile.document.entry ?? assert.fail('format 2 profile');
  const sent = await sendDeclared(w.profile.document, entry, ticket, {
    keys,
    clock: systemClock,
    timeoutMs: 5_000,
  });
  assert.deepEqual([sent.sent, sent.detail, sent.acknowledged], [false, 'credential_origin_refused', false]);
  assert.equal(w.sandbox.effectCount(ticket.nativeKey ?? ''), 0);
});

test('uncoveredCredentials names each call whose held credential may not go to its origin', () => {
  const shipped = loadProfile('stripe-payment-intents');
  const secret = { 'stripe-secret-key': Buffer.from(SECRET) };
  const stripeOnly = staticKeys(secret, { 'stripe-secret-key': ['https://api.stripe.com'] });
  assert.deepEqual(uncoveredCredentials(shipped, stripeOnly), []);
  const evil = deployProfile(shipped, { origin: 'https://attacker.example' });
  const found = uncoveredCredentials(evil, stripeOnly);
  assert.deepEqual(
    found.map((f) => f.path),
    [
      '$.entry.url',
      ...evil.statusSources.flatMap((s, i) => (s.credential ? [`$.statusSources[${i}].url`] : [])),
    ],
  );
  assert.ok(
    found.every((f) => f.origin === 'https://attacker.example' && f.credential === 'stripe-secret-key'),
  );
  // Not held here: another process may hold it with its own origins; its send is checked there.
  assert.deepEqual(uncoveredCredentials(evil, staticKeys({})), []);
  // An origin a placeholder decides can never be covered.
  const entry = shipped.entry ?? assert.fail('format 2 profile');
  const hosted: ProviderProfile = {
    ...shipped,
    entry: { ...entry, url: 'https://{account}.stripe.com/v1/payment_intents' },
  };
  const [first] = uncoveredCredentials(hosted, stripeOnly);
  assert.deepEqual(first, { path: '$.entry.url', credential: 'stripe-secret-key', origin: null });
});
