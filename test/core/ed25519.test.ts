import assert from 'node:assert/strict';
import {
  createHash,
  createPublicKey,
  generateKeyPairSync,
  verify as nodeVerify,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  ed25519Kid,
  ed25519Sign,
  ed25519Verify,
  exportEd25519PublicJwk,
  exportPrivatePem,
  exportPublicPem,
  generateEd25519KeyPair,
  importEd25519PrivateKey,
  importEd25519PublicKey,
  publicKeyRaw,
} from '../../src/core/ed25519.js';
import {
  ED25519_D,
  isOnCurve,
  publicKeyDefect,
  signatureDefect,
  SMALL_ORDER_ENCODINGS,
} from '../../src/core/ed25519-policy.js';
import { isBatonError } from '../../src/core/errors.js';
import { vectorsDir } from '../support/paths.js';
import { D, decodeLoose, encode, L, multiply, P, smallOrder } from './edwards25519-reference.js';

const WYCHEPROOF = join(vectorsDir, 'ed25519-wycheproof');
const CCTV = join(vectorsDir, 'ed25519-cctv-edge-cases', 'ed25519vectors.json');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

interface WycheproofTest {
  tcId: number;
  msg: string;
  sig: string;
  result: 'valid' | 'invalid' | 'acceptable';
  flags: string[];
}

const hex = (text: string): Buffer => Buffer.from(text, 'hex');
const readJson = (path: string): unknown => JSON.parse(readFileSync(path, 'utf8'));

/** A KeyObject straight from raw bytes, bypassing importEd25519PublicKey's checks on purpose. */
const unchecked = (raw: Buffer): KeyObject =>
  createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });

const derToPem = (der: Buffer): string =>
  `-----BEGIN PUBLIC KEY-----\n${der.toString('base64')}\n-----END PUBLIC KEY-----\n`;

function throwsCode(fn: () => unknown, code: 'key_invalid' | 'key_unsupported'): void {
  assert.throws(fn, (error: unknown) => isBatonError(error, code));
}

test('Wycheproof ed25519_test.json: valid verifies, invalid is rejected, key forms agree', (t) => {
  const file = readJson(join(WYCHEPROOF, 'ed25519_test.json')) as {
    numberOfTests: number;
    testGroups: {
      publicKey: { pk: string };
      publicKeyDer: string;
      publicKeyPem: string;
      publicKeyJwk: JsonWebKey;
      tests: WycheproofTest[];
    }[];
  };
  const seen = { valid: 0, invalid: 0, wrongLength: 0, groups: 0 };
  for (const group of file.testGroups) {
    const raw = hex(group.publicKey.pk);
    const key = importEd25519PublicKey({ raw });
    for (const form of [
      { jwk: group.publicKeyJwk },
      { pem: group.publicKeyPem },
      { pem: derToPem(hex(group.publicKeyDer)) },
    ]) {
      assert.deepEqual(publicKeyRaw(importEd25519PublicKey(form)), raw);
    }
    assert.equal(exportPublicPem(key), group.publicKeyPem);
    assert.equal(exportEd25519PublicJwk(key).x, group.publicKeyJwk.x);
    seen.groups++;
    for (const tc of group.tests) {
      assert.notEqual(tc.result, 'acceptable', 'SOURCE.md: this file has no acceptable cases');
      const ok = ed25519Verify(key, hex(tc.msg), hex(tc.sig));
      assert.equal(ok, tc.result === 'valid', `tcId ${tc.tcId}`);
      if (tc.result === 'valid') seen.valid++;
      else seen.invalid++;
      if (tc.sig.length !== 128) seen.wrongLength++;
    }
  }
  assert.equal(seen.valid + seen.invalid, file.numberOfTests);
  assert.ok(seen.wrongLength > 0);
  t.diagnostic(
    `checked ${file.numberOfTests} cases in ${seen.groups} groups: ${seen.valid} valid, ${seen.invalid} invalid (${seen.wrongLength} of wrong length)`,
  );
});

test('Wycheproof legacy file: seeds derive pk, signing is byte-exact, invalid rejected', (t) => {
  const file = readJson(join(WYCHEPROOF, 'legacy_eddsa_test_with_sk.json')) as {
    numberOfTests: number;
    testGroups: { key: { sk: string; pk: string }; jwk: JsonWebKey; tests: WycheproofTest[] }[];
  };
  let signed = 0;
  let rejected = 0;
  let total = 0;
  for (const group of file.testGroups) {
    const privateKey = importEd25519PrivateKey({ seed: hex(group.key.sk) });
    assert.equal(publicKeyRaw(privateKey).toString('hex'), group.key.pk);
    assert.equal(publicKeyRaw(importEd25519PrivateKey({ jwk: group.jwk })).toString('hex'), group.key.pk);
    const publicKey = importEd25519PublicKey({ raw: hex(group.key.pk) });
    for (const tc of group.tests) {
      total++;
      if (tc.result === 'valid') {
        assert.equal(ed25519Sign(privateKey, hex(tc.msg)).toString('hex'), tc.sig, `tcId ${tc.tcId}`);
        assert.equal(ed25519Verify(publicKey, hex(tc.msg), hex(tc.sig)), true);
        signed++;
      } else {
        assert.equal(ed25519Verify(publicKey, hex(tc.msg), hex(tc.sig)), false, `tcId ${tc.tcId}`);
        rejected++;
      }
    }
  }
  assert.equal(total, file.numberOfTests);
  t.diagnostic(
    `checked ${total} cases in ${file.testGroups.length} groups: ${signed} signed byte-exact, ${rejected} rejected`,
  );
});

test('the small-order list is exactly the 8-torsion, recomputed', (t) => {
  assert.equal(ED25519_D, D);
  const torsion = new Map<string, number>();
  for (let y = 2; torsion.size < 8 && y < 100; y++) {
    const point = decodeLoose(Buffer.from([y, ...new Array<number>(31).fill(0)]));
    if (point === undefined) continue;
    const t8 = multiply(L, point); // [L]P kills the prime-order part, leaving a torsion point
    for (let k = 0n; k < 8n; k++) {
      const q = multiply(k, t8);
      torsion.set(encode(q), smallOrder(q) ?? -1);
    }
  }
  assert.deepEqual([...torsion.keys()].sort(), [...SMALL_ORDER_ENCODINGS].sort());
  assert.deepEqual([...torsion.values()].sort(), [1, 2, 4, 4, 8, 8, 8, 8]);
  t.diagnostic(`recomputed ${torsion.size} small-order points`);
});

test('isOnCurve agrees with the reference decoder', (t) => {
  let on = 0;
  for (let y = 0; y < 300; y++) {
    const encoded = Buffer.alloc(32);
    encoded.writeUInt16LE(y);
    const expected = decodeLoose(encoded) !== undefined;
    assert.equal(isOnCurve(encoded), expected, `y = ${y}`);
    if (expected) on++;
  }
  assert.ok(on > 0 && on < 300);
  t.diagnostic(`checked 300 y values (${on} on the curve)`);
});

/**
 * Baton's policy (docs/crypto.md), stated in CCTV's flags: reject a non-canonical R or A (RFC 8032),
 * a small-order A in any encoding (weak key), and whatever the cofactorless equation rejects — which
 * is exactly `low_order_residue`. Low-order R and mixed-order ("low_order_component") points are
 * accepted when the cofactorless equation holds.
 */
const POLICY_REJECTS = ['non_canonical_R', 'non_canonical_A', 'low_order_A', 'low_order_residue'];
/** 208 pass OpenSSL's ref10 rule; 122 of them use a small-order A (36 of those non-canonically). */
const POLICY_ACCEPTED = 86;

test('CCTV edge cases: every vector matches the policy computed from its flags', (t) => {
  const vectors = readJson(CCTV) as {
    number: number;
    key: string;
    sig: string;
    msg: string;
    flags: string[] | null;
  }[];
  let accepted = 0;
  let opensslAccepted = 0;
  const keyVerdicts = new Map<string, boolean>();
  for (const v of vectors) {
    const flags = v.flags ?? [];
    const expected = !flags.some((flag) => POLICY_REJECTS.includes(flag));
    const message = Buffer.from(v.msg, 'utf8');
    const ok = ed25519Verify(unchecked(hex(v.key)), message, hex(v.sig));
    assert.equal(ok, expected, `vector ${v.number} [${flags.join(', ')}]`);
    if (ok) accepted++;
    // The baseline we build on: OpenSSL alone is the ref10 rule (rejects non-canonical R and residues).
    const openssl = nodeVerify(null, message, unchecked(hex(v.key)), hex(v.sig));
    assert.equal(openssl, !flags.includes('non_canonical_R') && !flags.includes('low_order_residue'));
    if (openssl) opensslAccepted++;
    keyVerdicts.set(v.key, !flags.includes('non_canonical_A') && !flags.includes('low_order_A'));
  }
  assert.equal(accepted, POLICY_ACCEPTED);
  for (const [key, acceptable] of keyVerdicts) {
    if (acceptable) assert.equal(publicKeyDefect(hex(key)), undefined, key);
    else throwsCode(() => importEd25519PublicKey({ raw: hex(key) }), 'key_invalid');
  }
  t.diagnostic(
    `checked ${vectors.length} vectors: ${accepted} accepted under the policy, ${opensslAccepted} by OpenSSL alone; ${keyVerdicts.size} distinct keys`,
  );
});

test('signature defects: length, non-canonical R, S >= L', () => {
  const { privateKey, publicKey } = generateEd25519KeyPair();
  const message = Buffer.from('baton');
  const sig = ed25519Sign(privateKey, message);
  assert.equal(signatureDefect(sig), undefined);
  for (const length of [0, 63, 65, 128]) {
    assert.equal(ed25519Verify(publicKey, message, Buffer.alloc(length)), false);
  }
  const sPlusL = Buffer.from(sig);
  let s = 0n;
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(sig[i] ?? 0);
  let word = s + L;
  for (let i = 32; i < 64; i++, word >>= 8n) sPlusL[i] = Number(word & 255n);
  assert.equal(signatureDefect(sPlusL), 's_out_of_range');
  assert.equal(ed25519Verify(publicKey, message, sPlusL), false);
  const yAboveP = Buffer.from(sig);
  word = P + 1n; // y = p + 1: a non-canonical encoding of the identity
  for (let i = 0; i < 32; i++, word >>= 8n) yAboveP[i] = Number(word & 255n);
  assert.equal(signatureDefect(yAboveP), 'non_canonical_r');
  assert.equal(ed25519Verify(publicKey, message, yAboveP), false);
});

test('kid rule: sha256: + lowercase hex SHA-256 of the raw public key', () => {
  const rfc8032Test1 = hex('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
  const expected = `sha256:${createHash('sha256').update(rfc8032Test1).digest('hex')}`;
  assert.equal(ed25519Kid(rfc8032Test1), expected);
  const key = importEd25519PublicKey({ raw: rfc8032Test1 });
  assert.equal(ed25519Kid(key), expected);
  assert.equal(exportEd25519PublicJwk(key).kid, expected);
  const seed = hex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60');
  assert.equal(ed25519Kid(importEd25519PrivateKey({ seed })), expected);
  const pair = generateEd25519KeyPair();
  assert.match(pair.kid, /^sha256:[0-9a-f]{64}$/);
  assert.equal(pair.kid, ed25519Kid(pair.publicKey));
  throwsCode(() => ed25519Kid(Buffer.alloc(31)), 'key_invalid');
});

test('JWK and PEM round trips', () => {
  const { publicKey, privateKey } = generateEd25519KeyPair();
  const jwk = exportEd25519PublicJwk(publicKey);
  assert.deepEqual(Object.keys(jwk).sort(), ['crv', 'kid', 'kty', 'x']);
  assert.equal(jwk.kty, 'OKP');
  assert.equal(jwk.crv, 'Ed25519');
  assert.ok(importEd25519PublicKey({ jwk }).equals(publicKey));
  assert.ok(importEd25519PublicKey({ pem: exportPublicPem(publicKey) }).equals(publicKey));
  assert.ok(importEd25519PrivateKey({ pem: exportPrivatePem(privateKey) }).equals(privateKey));
  const privateJwk = privateKey.export({ format: 'jwk' });
  assert.ok(importEd25519PrivateKey({ jwk: privateJwk }).equals(privateKey));
  assert.ok(importEd25519PublicKey({ raw: publicKeyRaw(privateKey) }).equals(publicKey));
  assert.equal(exportPublicPem(privateKey), exportPublicPem(publicKey));
});

test('refused key inputs', () => {
  const { publicKey, privateKey } = generateEd25519KeyPair();
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const x25519 = generateKeyPairSync('x25519');
  throwsCode(
    () => importEd25519PublicKey({ pem: rsa.publicKey.export({ format: 'pem', type: 'spki' }).toString() }),
    'key_unsupported',
  );
  throwsCode(
    () => importEd25519PublicKey({ jwk: x25519.publicKey.export({ format: 'jwk' }) }),
    'key_unsupported',
  );
  throwsCode(() => importEd25519PublicKey({ jwk: privateKey.export({ format: 'jwk' }) }), 'key_invalid');
  throwsCode(() => importEd25519PublicKey({ pem: exportPrivatePem(privateKey) }), 'key_invalid');
  const both = exportPrivatePem(privateKey) + exportPublicPem(publicKey);
  throwsCode(() => importEd25519PublicKey({ pem: both }), 'key_invalid');
  throwsCode(
    () => importEd25519PublicKey({ pem: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n' }),
    'key_invalid',
  );
  throwsCode(() => importEd25519PublicKey({ raw: Buffer.alloc(33) }), 'key_invalid');
  throwsCode(() => importEd25519PublicKey({ jwk: { kty: 'OKP', crv: 'Ed25519', x: 'AAAA' } }), 'key_invalid');
  throwsCode(() => importEd25519PrivateKey({ seed: Buffer.alloc(16) }), 'key_invalid');
  const other = generateEd25519KeyPair();
  const mixed = { ...privateKey.export({ format: 'jwk' }), x: exportEd25519PublicJwk(other.publicKey).x };
  throwsCode(() => importEd25519PrivateKey({ jwk: mixed }), 'key_invalid');
  throwsCode(() => importEd25519PrivateKey({ pem: exportPublicPem(publicKey) }), 'key_invalid');
  throwsCode(() => ed25519Sign(rsa.privateKey, Buffer.from('x')), 'key_unsupported');
  throwsCode(() => ed25519Sign(publicKey, Buffer.from('x')), 'key_invalid');
  throwsCode(() => ed25519Verify(privateKey, Buffer.from('x'), Buffer.alloc(64)), 'key_invalid');
  const offCurve = Buffer.alloc(32);
  while (decodeLoose(offCurve) !== undefined) offCurve[0] = (offCurve[0] ?? 0) + 1;
  throwsCode(() => importEd25519PublicKey({ raw: offCurve }), 'key_invalid');
});

test('generated keys sign and verify; a tampered message or signature fails', () => {
  const { publicKey, privateKey } = generateEd25519KeyPair();
  const message = Buffer.from('the message');
  const sig = ed25519Sign(privateKey, message);
  assert.equal(sig.length, 64);
  assert.equal(ed25519Verify(publicKey, message, sig), true);
  assert.equal(ed25519Verify(publicKey, Buffer.from('the messagE'), sig), false);
  const flipped = Buffer.from(sig);
  flipped[10] = (flipped[10] ?? 0) ^ 1;
  assert.equal(ed25519Verify(publicKey, message, flipped), false);
  assert.equal(ed25519Verify(generateEd25519KeyPair().publicKey, message, sig), false);
});
