/**
 * Profile format 2 (docs/providers.md "Writing a profile"): every shipped profile validates; every
 * rule is checked strictly, refusing with `profile_invalid` and the path of what is wrong; format
 * 1 keeps refusing format 2 members. Standard Webhooks deliveries signed by the official
 * `standardwebhooks` package (v1) and with node:crypto (v1a: the package signs v1 only) settle;
 * tampered, stale and wrongly keyed ones settle nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { publicKeyRaw } from '../../src/core/ed25519.js';
import { isBatonError } from '../../src/core/errors.js';
import { parseJsonPointer, resolveJsonPointer } from '../../src/core/json-pointer.js';
import type { JsonObject } from '../../src/core/json.js';
import {
  findStatusSource,
  readProviderReference,
  referenceMatches,
  validateProfile,
  type ProviderProfile,
} from '../../src/occurrences/index.js';
import {
  deliveryObservation,
  loadProfile,
  readDelivery,
  SHIPPED_PROFILES,
  staticKeys,
} from '../../src/providers/index.js';
import { signStandardWebhook } from '../../src/providers/webhook-schemes/index.js';
import { enterOne, openStripeWorld } from './stripe-world.js';

const clone = (p: ProviderProfile): JsonObject => JSON.parse(JSON.stringify(p)) as JsonObject;

function refusedAt(doc: unknown, path: string): void {
  assert.throws(
    () => validateProfile(doc),
    (e: unknown) => isBatonError(e, 'profile_invalid') && e.details['path'] === path,
    `expected profile_invalid at ${path}`,
  );
}

test('RFC 6901 pointers: escapes, arrays, absence', () => {
  const doc = { 'a/b': { '~k': [10, 20] }, '': 1 };
  assert.equal(resolveJsonPointer(doc, '/a~1b/~0k/1'), 20);
  assert.equal(resolveJsonPointer(doc, '/'), 1);
  assert.deepEqual(resolveJsonPointer(doc, ''), doc);
  assert.equal(resolveJsonPointer(doc, '/a~1b/~0k/01'), undefined, 'no leading zeros');
  assert.equal(resolveJsonPointer(doc, '/a~1b/~0k/2'), undefined);
  assert.equal(parseJsonPointer('a'), undefined);
  assert.equal(parseJsonPointer('/~2'), undefined);
});

test('every shipped profile validates; format 1 refuses format 2 members', () => {
  for (const name of SHIPPED_PROFILES) assert.equal(loadProfile(name).id, name);
  const v1 = clone(loadProfile('sandbox-payments'));
  refusedAt({ ...v1, entry: loadProfile('stripe-payment-intents').entry }, '$.entry');
  const sources = v1['statusSources'] as JsonObject[];
  refusedAt({ ...v1, statusSources: [{ ...sources[0], method: 'GET' }] }, '$.statusSources[0].method');
  refusedAt({ ...v1, format: 'baton.provider-profile/3' }, '$.format');
});

type Edit = (p: JsonObject) => void;
const src = (p: JsonObject, i: number): JsonObject => (p['statusSources'] as JsonObject[])[i] as JsonObject;
const at = (p: JsonObject, i: number, name: string): JsonObject => src(p, i)[name] as JsonObject;

test('every format 2 rule is checked, with the path of what is wrong', () => {
  const cases: [string, Edit, string][] = [
    [
      'pointer without /',
      (p) => void (at(p, 1, 'read')['status'] = 'status'),
      '$.statusSources[1].read.status',
    ],
    ['bad escape', (p) => void (at(p, 1, 'read')['reference'] = '/~2'), '$.statusSources[1].read.reference'],
    ['unknown read member', (p) => void (at(p, 1, 'read')['guess'] = '/x'), '$.statusSources[1].read.guess'],
    [
      'eventId on a lookup',
      (p) => void (at(p, 1, 'read')['eventId'] = '/id'),
      '$.statusSources[1].read.eventId',
    ],
    [
      'a native-key meaning not defined (never guessed)',
      (p) => void (at(p, 0, 'read')['nativeKeyOf'] = 'object'),
      '$.statusSources[0].read.nativeKeyOf',
    ],
    [
      'a native-key meaning without a native-key pointer',
      (p) => void (at(p, 1, 'read')['nativeKeyOf'] = 'causing_request'),
      '$.statusSources[1].read.nativeKeyOf',
    ],
    [
      'a native-key meaning on the acknowledgement (its own request caused it)',
      (p) => {
        const read = (p['acknowledgement'] as JsonObject)['read'] as JsonObject;
        read['nativeKey'] = '/id';
        read['nativeKeyOf'] = 'causing_request';
      },
      '$.acknowledgement.read.nativeKeyOf',
    ],
    [
      'account rule',
      (p) => void (at(p, 1, 'read')['account'] = { whenAbsent: 'guess' }),
      '$.statusSources[1].read.account.whenAbsent',
    ],
    [
      'http channel off loopback',
      (p) => void (at(p, 1, 'authentication')['origin'] = 'http://api.stripe.com'),
      '$.statusSources[1].authentication.origin',
    ],
    [
      'channel with a path',
      (p) => void (at(p, 1, 'authentication')['origin'] = 'https://api.stripe.com/v1'),
      '$.statusSources[1].authentication.origin',
    ],
    [
      'channel to another origin',
      (p) => void (at(p, 1, 'authentication')['origin'] = 'https://evil.example'),
      '$.statusSources[1].authentication.origin',
    ],
    [
      'channel without its credential',
      (p) => void (at(p, 1, 'authentication')['credential'] = 'other-key'),
      '$.statusSources[1].authentication.credential',
    ],
    [
      'channel on a webhook',
      (p) => void (src(p, 2)['authentication'] = at(p, 1, 'authentication')),
      '$.statusSources[2].authentication.kind',
    ],
    [
      'webhook pin on a lookup',
      (p) => void (src(p, 1)['authentication'] = at(p, 2, 'authentication')),
      '$.statusSources[1].authentication.kind',
    ],
    [
      'tolerance 0',
      (p) => void (at(p, 2, 'authentication')['toleranceSeconds'] = 0),
      '$.statusSources[2].authentication.toleranceSeconds',
    ],
    [
      'tolerance 2 h',
      (p) => void (at(p, 2, 'authentication')['toleranceSeconds'] = 7200),
      '$.statusSources[2].authentication.toleranceSeconds',
    ],
    [
      'by reference without {reference}',
      (p) => void (src(p, 1)['url'] = 'https://api.stripe.com/v1/payment_intents'),
      '$.statusSources[1].url',
    ],
    [
      'unknown placeholder',
      (p) => void (src(p, 1)['url'] = 'https://api.stripe.com/v1/{reference}/{secret}'),
      '$.statusSources[1].url',
    ],
    [
      'not-found status',
      (p) => void (at(p, 1, 'notFound')['httpStatus'] = 200),
      '$.statusSources[1].notFound.httpStatus',
    ],
    ['POST lookup', (p) => void (src(p, 1)['method'] = 'POST'), '$.statusSources[1].method'],
    ['listing rule missing', (p) => void delete src(p, 0)['listing'], '$.statusSources[0].listing'],
    [
      'notFound on a listing',
      (p) => void (src(p, 0)['notFound'] = at(p, 1, 'notFound')),
      '$.statusSources[0].notFound',
    ],
    [
      'credential scheme',
      (p) => void (at(p, 1, 'credential')['scheme'] = 'token'),
      '$.statusSources[1].credential.scheme',
    ],
    ['method on a webhook', (p) => void (src(p, 2)['method'] = 'GET'), '$.statusSources[2].method'],
    ['read missing', (p) => void delete src(p, 1)['read'], '$.statusSources[1].read'],
    [
      'entry without ack read',
      (p) => void delete (p['acknowledgement'] as JsonObject)['read'],
      '$.acknowledgement.read',
    ],
    ['entry GET', (p) => void ((p['entry'] as JsonObject)['method'] = 'GET'), '$.entry.method'],
    ['entry encoding', (p) => void ((p['entry'] as JsonObject)['encoding'] = 'xml'), '$.entry.encoding'],
    [
      'reference member in v2',
      (p) => void ((p['reference'] as JsonObject)['member'] = 'id'),
      '$.reference.member',
    ],
    ['amount without a tie', (p) => void delete p['authority'], '$.acknowledgement.read.amount'],
  ];
  for (const [name, edit, path] of cases) {
    const p = clone(loadProfile('stripe-payment-intents'));
    edit(p);
    refusedAt(p, path);
    void name;
  }
  const refunds = clone(loadProfile('stripe-refunds'));
  at(refunds, 1, 'read')['unit'] = '/currency';
  refusedAt(refunds, '$.statusSources[1].read.unit');
  const v1a = clone(loadProfile('standard-webhooks-v1a'));
  at(v1a, 0, 'authentication')['kid'] = 'sha256:' + '0'.repeat(64);
  refusedAt(v1a, '$.statusSources[0].authentication.kid');
  const short = clone(loadProfile('standard-webhooks-v1a'));
  at(short, 0, 'authentication')['publicKey'] = 'whpk_' + Buffer.alloc(31).toString('base64');
  refusedAt(short, '$.statusSources[0].authentication.publicKey');
});

test('no URL of a profile carries userinfo or a fragment: a profile names credentials, never holds one', () => {
  const cases: [Edit, string][] = [
    [
      (p) => void (src(p, 1)['url'] = 'https://user:s3cr3tpw@api.stripe.com/v1/payment_intents/{reference}'),
      '$.statusSources[1].url',
    ],
    [(p) => void (src(p, 0)['url'] = 'https://sk_live_x@api.stripe.com/v1/events'), '$.statusSources[0].url'],
    [
      (p) => void (src(p, 2)['url'] = 'https://hook:pw@baton.example/v1/webhooks/stripe-payment-intents'),
      '$.statusSources[2].url',
    ],
    [
      (p) => void ((p['entry'] as JsonObject)['url'] = 'https://u:p@api.stripe.com/v1/payment_intents'),
      '$.entry.url',
    ],
    [
      (p) => void (src(p, 1)['url'] = 'https://api.stripe.com/v1/payment_intents/{reference}#frag'),
      '$.statusSources[1].url',
    ],
    [
      (p) => void ((p['entry'] as JsonObject)['url'] = 'https://api.stripe.com/v1/payment_intents#'),
      '$.entry.url',
    ],
  ];
  for (const [edit, path] of cases) {
    const p = clone(loadProfile('stripe-payment-intents'));
    edit(p);
    refusedAt(p, path);
  }
  // Format 1 too (the reviewer's case: an http loopback source with a password).
  const v1 = clone(loadProfile('sandbox-payments'));
  src(v1, 1)['url'] = 'http://user:s3cr3tpw@127.0.0.1:47170/v1/accounts/{account}/payments/{reference}';
  refusedAt(v1, '$.statusSources[1].url');
  assert.throws(
    () => validateProfile(v1),
    (e: unknown) => isBatonError(e, 'profile_invalid') && !JSON.stringify(e).includes('s3cr3tpw'),
    'the refusal does not echo the password',
  );
});

test('reference patterns: exponential backtracking is refused; a reference is tested only up to 256 characters', () => {
  for (const pattern of ['^(a+)+$', '^([a-z]+:)*x$', '^(pi_[a-z]*)*$']) {
    const p = clone(loadProfile('stripe-payment-intents'));
    (p['reference'] as JsonObject)['pattern'] = pattern;
    refusedAt(p, '$.reference.pattern');
  }
  const p = clone(loadProfile('stripe-payment-intents'));
  (p['reference'] as JsonObject)['pattern'] = '^pi_[A-Za-z0-9]+$';
  const open = validateProfile(p);
  assert.equal(referenceMatches(open, 'pi_' + 'a'.repeat(253)), true, '256 characters are tested');
  assert.equal(referenceMatches(open, 'pi_' + 'a'.repeat(254)), false, 'a longer reference is malformed');
  const v1 = clone(loadProfile('sandbox-payments'));
  (v1['reference'] as JsonObject)['pattern'] = '^pay_[A-Za-z0-9]+$';
  const sandbox = validateProfile(v1);
  assert.deepEqual(readProviderReference(sandbox, { reference: 'pay_' + 'a'.repeat(300) }), {
    kind: 'malformed',
  });
  assert.deepEqual(readProviderReference(sandbox, { reference: 'pay_abc' }), {
    kind: 'found',
    value: 'pay_abc',
  });
});

function event(key: string, amount: number, over: JsonObject = {}): string {
  return JSON.stringify({
    type: 'payment.succeeded',
    timestamp: new Date().toISOString(),
    data: {
      id: 'pay_123',
      status: 'succeeded',
      idempotency_key: key,
      amount,
      currency: 'usd',
      account: 'acct_reference_deployment',
      ...over,
    },
  });
}

test('Standard Webhooks v1 (signed by the standardwebhooks package) settles; tampered and stale ones do not', async (t) => {
  const w = await openStripeWorld(t, 'standard-webhooks-v1');
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const keys = staticKeys({ 'standard-webhooks-secret': Buffer.from(secret) });
  const source = findStatusSource(w.profile.document, 'webhook');
  assert.ok(source);
  const signer = new Webhook(secret);
  const deliver = (body: string, id: string, when = new Date(), sigBody = body) => {
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(when.getTime() / 1000)),
      'webhook-signature': signer.sign(id, when, sigBody),
    };
    return readDelivery({ profile: w.profile.document, source, body, headers, keys, nowMs: Date.now() });
  };
  const ticket = await enterOne(w, 'sw-1', { amount: 700, currency: 'usd' }, 700);
  const key = ticket.nativeKey ?? '';
  const body = event(key, 700);
  const tampered = deliver(event(key, 7), 'msg_1', new Date(), body);
  assert.equal(tampered.refusal, 'bad_signature');
  const stale = deliver(body, 'msg_2', new Date(Date.now() - 600_000));
  assert.equal(stale.refusal, 'stale');
  const other = deliver(event(key, 700, { account: 'acct_other' }), 'msg_3');
  for (const d of [tampered, stale, other]) {
    const r = await w.svc.observe(deliveryObservation(ticket.occurrence.id, source, d, Date.now()));
    assert.equal(r.effective, false);
    assert.equal(r.occurrence.unresolved, true);
  }
  const good = deliver(body, 'msg_4');
  assert.equal(good.verified, true);
  assert.equal(good.eventId, 'msg_4', 'the webhook-id header is the event id');
  const r = await w.svc.observe(deliveryObservation(ticket.occurrence.id, source, good, Date.now()));
  assert.equal(r.effective, true);
  assert.equal(r.occurrence.effect, 'occurred');
});

test('Standard Webhooks v1a (Ed25519, signed with node:crypto) settles; another key does not', async (t) => {
  const pair = generateKeyPairSync('ed25519');
  const raw = publicKeyRaw(pair.publicKey);
  const pin = {
    kind: 'standard-webhooks',
    version: 'v1a',
    kid: `sha256:${createHash('sha256').update(raw).digest('hex')}`,
    publicKey: `whpk_${Buffer.from(raw).toString('base64')}`,
    toleranceSeconds: 300,
  };
  const w = await openStripeWorld(t, 'standard-webhooks-v1a', (p) => {
    const doc = clone(p);
    src(doc, 0)['authentication'] = pin;
    return validateProfile(doc);
  });
  const source = findStatusSource(w.profile.document, 'webhook');
  assert.ok(source);
  const ticket = await enterOne(w, 'sw-a', { amount: 900, currency: 'usd' }, 900);
  const body = event(ticket.nativeKey ?? '', 900);
  const ts = Math.floor(Date.now() / 1000);
  const headers = (privateKey: typeof pair.privateKey) => ({
    'webhook-id': 'msg_a',
    'webhook-timestamp': String(ts),
    'webhook-signature': signStandardWebhook({ kind: 'v1a', privateKey }, 'msg_a', ts, body),
  });
  const stranger = generateKeyPairSync('ed25519').privateKey;
  const forged = readDelivery({
    profile: w.profile.document,
    source,
    body,
    headers: headers(stranger),
    keys: staticKeys({}),
    nowMs: Date.now(),
  });
  assert.equal(forged.refusal, 'bad_signature');
  const good = readDelivery({
    profile: w.profile.document,
    source,
    body,
    headers: headers(pair.privateKey),
    keys: staticKeys({}),
    nowMs: Date.now(),
  });
  assert.equal(good.verified, true);
  const r = await w.svc.observe(deliveryObservation(ticket.occurrence.id, source, good, Date.now()));
  assert.equal(r.effective, true);
});
