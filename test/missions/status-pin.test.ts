/**
 * The issuer pin `baton.mission-issuer/1` (A5, C-A12, C-A13): closed and strict, HTTPS outside
 * loopback tests, private_key_jwt only, asymmetric algorithms only, a JCS digest that changes with any
 * member; the key archive port refusing a reused kid; and an EdDSA reference issuer end to end.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  advertisedReliance,
  InMemoryKeyArchive,
  issuerPinDigest,
  parseIssuerPin,
  parseIssuerPinText,
  pinFromMetadata,
} from '../../src/missions/index.js';
import { startWorld } from './issuer-support.js';

const PIN = {
  format: 'baton.mission-issuer/1',
  issuer: 'https://as.example.com',
  jwks_uri: 'https://as.example.com/.well-known/jwks.json',
  endpoints: { status: 'https://as.example.com/as/mission/status' },
  algorithms: ['ES256', 'EdDSA'],
  client: {
    client_id: 'client_erp-recon-agent',
    auth_method: 'private_key_jwt',
    key_ref: 'file:client.pem',
    alg: 'ES256',
  },
  audience: 'https://erp.example.com',
  bounds: { max_stale_seconds: 60 },
  stream: { delivery: 'urn:ietf:rfc:8935' },
};

const refused = (doc: unknown, member?: string) =>
  assert.throws(
    () => parseIssuerPin(doc),
    (e: { code?: string; details?: { member?: string } }) =>
      e.code === 'mission_issuer_pin_invalid' && (member === undefined || e.details?.member === member),
  );

test('issuer pin: a complete pin parses and its digest names it', () => {
  const pin = parseIssuerPin(PIN);
  assert.equal(pin.issuer, PIN.issuer);
  assert.match(issuerPinDigest(pin), /^sha-256:[A-Za-z0-9_-]{43}$/);
  assert.notEqual(
    issuerPinDigest(pin),
    issuerPinDigest(parseIssuerPin({ ...PIN, audience: 'https://other.example' })),
  );
});

test('issuer pin: unknown or missing members, duplicate members, other formats are refused', () => {
  refused({ ...PIN, extra: 1 }, 'extra');
  refused({ ...PIN, client: { ...PIN.client, client_secret: 's' } }, 'client_secret');
  const { audience: _a, ...noAudience } = PIN;
  refused(noAudience, 'audience');
  refused({ ...PIN, format: 'baton.mission-issuer/2' }, 'format');
  assert.throws(
    () => parseIssuerPinText(JSON.stringify(PIN).replace('"audience":', '"audience":"x","audience":')),
    { code: 'json_duplicate_member' },
  );
});

test('C-A13: only private_key_jwt; C-A27: only asymmetric algorithms', () => {
  refused({ ...PIN, client: { ...PIN.client, auth_method: 'client_secret_basic' } }, 'auth_method');
  for (const algorithms of [['HS256'], ['none'], [], ['ES256', 'ES256']])
    refused({ ...PIN, algorithms }, 'algorithms');
});

test('issuer pin: HTTPS only, plain HTTP only to loopback and only when allowed', () => {
  refused({ ...PIN, jwks_uri: 'http://as.example.com/jwks' }, 'jwks_uri');
  refused({ ...PIN, issuer: 'http://127.0.0.1:8788' }, 'issuer');
  const local = {
    ...PIN,
    issuer: 'http://127.0.0.1:8788',
    jwks_uri: 'http://127.0.0.1:8788/jwks',
    endpoints: { status: 'http://127.0.0.1:8788/s' },
  };
  assert.equal(parseIssuerPin(local, { allowLoopbackHttp: true }).issuer, 'http://127.0.0.1:8788');
  assert.throws(() =>
    parseIssuerPin({ ...local, jwks_uri: 'http://10.0.0.1/jwks' }, { allowLoopbackHttp: true }),
  );
});

test('RFC 8414 §3.3: metadata whose issuer is not the expected one is refused', () => {
  const metadata = {
    issuer: 'https://evil.example',
    jwks_uri: PIN.jwks_uri,
    mission_status_endpoint: PIN.endpoints.status,
  };
  assert.throws(
    () =>
      pinFromMetadata(metadata, { issuer: PIN.issuer, clientId: 'c', keyRef: 'k', audience: PIN.audience }),
    { code: 'mission_issuer_pin_invalid' },
  );
  const pin = pinFromMetadata(
    { ...metadata, issuer: PIN.issuer, mission_max_stale_seconds: 45 },
    { issuer: PIN.issuer, clientId: 'c', keyRef: 'k', audience: PIN.audience },
  );
  assert.equal(pin.bounds.max_stale_seconds, 45);
});

test('MSG-03: an absent mission_max_stale_seconds pins null, an explicit 0 pins 0, a non-integer (null too) is refused', () => {
  const metadata = {
    issuer: PIN.issuer,
    jwks_uri: PIN.jwks_uri,
    mission_status_endpoint: PIN.endpoints.status,
  };
  const input = { issuer: PIN.issuer, clientId: 'c', keyRef: 'k', audience: PIN.audience };
  const absent = pinFromMetadata(metadata, input);
  assert.equal(absent.bounds.max_stale_seconds, null);
  assert.equal(advertisedReliance(absent), undefined);
  const zero = pinFromMetadata({ ...metadata, mission_max_stale_seconds: 0 }, input);
  assert.equal(zero.bounds.max_stale_seconds, 0);
  assert.equal(advertisedReliance(zero), 0, 'the strictest bound, not "not advertised"');
  assert.throws(() => pinFromMetadata({ ...metadata, mission_max_stale_seconds: '60' }, input), {
    code: 'mission_issuer_pin_invalid',
  });
  // Present but null is malformed metadata (MSG-03: a number), not "not advertised".
  assert.throws(() => pinFromMetadata({ ...metadata, mission_max_stale_seconds: null }, input), {
    code: 'mission_issuer_pin_invalid',
  });
  assert.deepEqual(parseIssuerPin({ ...PIN, bounds: { max_stale_seconds: null } }).bounds, {
    max_stale_seconds: null,
  });
});

test('MST-06: the key archive keeps one key per (origin, kid) and refuses a reused kid', async () => {
  const archive = new InMemoryKeyArchive();
  const jwk = { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid: 'k1' };
  await archive.saveKey('https://as.example.com', 'k1', jwk, 'tp-1');
  await archive.saveKey('https://as.example.com', 'k1', jwk, 'tp-1');
  assert.equal(archive.size, 1);
  await assert.rejects(archive.saveKey('https://as.example.com', 'k1', jwk, 'tp-2'), { code: 'key_invalid' });
  assert.equal((await archive.getKey('https://as.example.com', 'k1'))?.thumbprint, 'tp-1');
  assert.equal(await archive.getKey('https://other.example', 'k1'), undefined);
  await assert.rejects(archive.saveKey('o', 'k2', { ...jwk, d: 'private' }, 'tp'), { code: 'key_invalid' });
});

test('C-A27: an EdDSA reference issuer is verified end to end under the default allowlist', async () => {
  const world = await startWorld({ alg: 'EdDSA' });
  try {
    const result = await world.client.check(await world.createMission());
    assert.equal(result.kind, 'verified', JSON.stringify(result));
    assert.equal(world.issuer.state.keys.current.alg, 'EdDSA');
  } finally {
    await world.close();
  }
});
