/**
 * The producer pin reader (OBS-12 ¶25; src/observations/producer-pin.ts), which the API, the config
 * file and the store target all go through: a producer outside Baton's namespace and one to
 * sixteen Ed25519 public keys, each a JWK or a PEM passing core's key policy. Every refusal is
 * typed and names its JSON path.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { generateKeyPairSync } from 'node:crypto';
import {
  ed25519Kid,
  exportEd25519PublicJwk,
  exportPublicPem,
  generateEd25519KeyPair,
} from '../../src/core/ed25519.js';
import { isBatonError } from '../../src/core/errors.js';
import {
  MAX_PRODUCER_ID,
  producerKeysDigest,
  readProducerId,
  readProducerPin,
  readRecordValue,
} from '../../src/observations/index.js';
import { example } from './support.js';

const acme = generateEd25519KeyPair();
const jwk = exportEd25519PublicJwk(acme.publicKey);
const pin = (keys: unknown[], producer = 'urn:example:acme') => readProducerPin({ producer, keys });
const refused = (code: string, path: string) => (e: unknown) =>
  isBatonError(e) && e.code === code && e.details['path'] === path;

test('OBS-12: a JWK (with or without its kid, alg, use) and a PEM of the same key read as the same JWK', () => {
  const bare = { kty: 'OKP', crv: 'Ed25519', x: jwk.x };
  for (const key of [
    jwk,
    bare,
    { ...jwk, alg: 'EdDSA', use: 'sig' },
    { pem: exportPublicPem(acme.publicKey) },
  ]) {
    assert.deepEqual(pin([key]).keys, [jwk]);
  }
  assert.equal(jwk.kid, ed25519Kid(acme.publicKey), 'the kid is the kid rule’s');
});

test('several keys are kept in kid order, and the digest names the set whatever the order', () => {
  const other = exportEd25519PublicJwk(generateEd25519KeyPair().publicKey);
  const a = pin([jwk, other]);
  const b = pin([other, jwk]);
  assert.deepEqual(a, b);
  assert.deepEqual(
    a.keys.map((k) => k.kid),
    [jwk.kid, other.kid].sort(),
  );
  assert.equal(producerKeysDigest(a.keys), producerKeysDigest([other, jwk]));
  assert.notEqual(producerKeysDigest(a.keys), producerKeysDigest([jwk]));
});

test('B7-12: a producer in Baton’s own namespace, the local producer, or a non-URI cannot be pinned', () => {
  for (const producer of ['urn:baton:local', 'URN:Baton:Local', 'urn:baton:test-domain', 'urn:baton:x:y']) {
    assert.throws(() => pin([jwk], producer), refused('input_invalid', '$.producer'), producer);
  }
  for (const producer of ['', 'acme', 'urn:example: acme', 'urn:example:a\u0000b', 'x'.repeat(513)]) {
    assert.throws(() => pin([jwk], producer), refused('input_invalid', '$.producer'), producer);
  }
});

test('one producer id limit: what a record may name, the API and the config file may pin, and one character more is refused by all three at the producer’s path', () => {
  const ofLength = (n: number) => `urn:example:${'p'.repeat(n - 'urn:example:'.length)}`;
  const longest = ofLength(MAX_PRODUCER_ID);
  assert.equal(pin([jwk], longest).producer, longest);
  assert.equal(readProducerId(longest, '$.producers[0].producer', 'config_invalid'), longest);
  assert.equal(readRecordValue({ ...example(), producer: longest }).record.producer, longest);
  const tooLong = ofLength(MAX_PRODUCER_ID + 1);
  assert.throws(() => pin([jwk], tooLong), refused('input_invalid', '$.producer'));
  assert.throws(
    () => readProducerId(tooLong, '$.producers[0].producer', 'config_invalid'),
    refused('config_invalid', '$.producers[0].producer'),
  );
  assert.throws(
    () => readRecordValue({ ...example(), producer: tooLong }),
    (e) =>
      refused('observation_record_invalid', '$.producer')(e) &&
      isBatonError(e) &&
      e.details['rule'] === 'string_length',
  );
});

test('malformed, non-Ed25519, private and policy-refused keys are refused with their key code and path', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' });
  const x25519 = generateKeyPairSync('x25519').publicKey.export({ format: 'pem', type: 'spki' }).toString();
  const smallOrder = Buffer.from(`01${'00'.repeat(31)}`, 'hex').toString('base64url');
  const cases: [unknown, string, string][] = [
    [rsa, 'key_unsupported', '$.keys[0]'],
    [{ kty: 'OKP', crv: 'X25519', x: jwk.x }, 'key_unsupported', '$.keys[0]'],
    [{ pem: x25519 }, 'key_unsupported', '$.keys[0].pem'],
    [{ ...jwk, d: jwk.x }, 'key_invalid', '$.keys[0]'],
    [
      { pem: acme.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() },
      'key_invalid',
      '$.keys[0].pem',
    ],
    [{ pem: 'not a pem' }, 'key_invalid', '$.keys[0].pem'],
    [{ ...jwk, x: 'AAAA' }, 'key_invalid', '$.keys[0]'],
    [{ kty: 'OKP', crv: 'Ed25519', x: smallOrder }, 'key_invalid', '$.keys[0]'],
    [{ ...jwk, kid: `sha256:${'0'.repeat(64)}` }, 'key_invalid', '$.keys[0].kid'],
    [{ ...jwk, alg: 'ES256' }, 'input_invalid', '$.keys[0].alg'],
    [{ ...jwk, n: 'x' }, 'input_invalid', '$.keys[0].n'],
    [{ pem: exportPublicPem(acme.publicKey), file: 'k.pem' }, 'input_invalid', '$.keys[0]'],
    ['a string', 'input_invalid', '$.keys[0]'],
  ];
  for (const [key, code, path] of cases) {
    assert.throws(
      () => pin([key]),
      refused(code, path),
      `${code} ${path} ${JSON.stringify(key).slice(0, 60)}`,
    );
  }
  assert.throws(() => pin([]), refused('input_invalid', '$.keys'), 'no key: unpin instead');
  assert.throws(() => pin(Array.from({ length: 17 }, () => jwk)), refused('input_invalid', '$.keys'));
  assert.throws(
    () => pin([jwk, { pem: exportPublicPem(acme.publicKey) }]),
    refused('input_invalid', '$.keys[1]'),
  );
  assert.throws(
    () => readProducerPin({ producer: 'urn:example:a', keys: [jwk], extra: 1 }),
    refused('input_invalid', '$.extra'),
  );
});

test('in a config file every refusal is config_invalid at its path', () => {
  assert.throws(
    () =>
      readProducerPin(
        { producer: 'urn:example:a', keys: [{ kty: 'RSA' }] },
        'config_invalid',
        '$.producers[2]',
      ),
    refused('config_invalid', '$.producers[2].keys[0]'),
  );
  assert.throws(
    () => readProducerPin({ producer: 'urn:baton:local', keys: [jwk] }, 'config_invalid', '$.producers[0]'),
    refused('config_invalid', '$.producers[0].producer'),
  );
});
