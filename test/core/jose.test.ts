import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { test } from 'node:test';
import { CompactSign, SignJWT } from 'jose';
import { ManualClock } from '../../src/core/clock.js';
import { generateEd25519KeyPair, ed25519Kid, exportEd25519PublicJwk } from '../../src/core/ed25519.js';
import { ED25519_L } from '../../src/core/ed25519-policy.js';
import { isBatonError, type BatonErrorCode } from '../../src/core/errors.js';
import {
  createLocalJwks,
  publishJwks,
  signJws,
  signJwt,
  verifyJws,
  verifyJwt,
  type VerificationKey,
  type VerifyJwtOptions,
} from '../../src/core/jose.js';

const T0 = Date.parse('2026-11-02T08:00:00Z');
const TYP = 'baton-test+jwt';
const SECRET_CLAIM = 'do-not-leak-this-claim-value';

async function rejectsWith(promise: Promise<unknown>, code: BatonErrorCode, token?: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(isBatonError(error, code), `expected ${code}, got ${String(error)}`);
    // Nothing of the token or its claims may appear in what the error exposes.
    const exposed = `${error.message} ${JSON.stringify(error.details)} ${JSON.stringify(error)}`;
    assert.ok(!exposed.includes(SECRET_CLAIM));
    if (token !== undefined)
      for (const part of token.split('.')) if (part) assert.ok(!exposed.includes(part));
    return true;
  });
}

function setup() {
  const clock = new ManualClock(T0);
  const signer = generateEd25519KeyPair();
  const options: VerifyJwtOptions = { clock, typ: TYP, issuer: 'https://baton.example', audience: 'worker' };
  const issue = () =>
    signJwt({ secret: SECRET_CLAIM }, signer.privateKey, {
      clock,
      typ: TYP,
      expiresInSec: 60,
      issuer: 'https://baton.example',
      audience: 'worker',
      subject: 'lineage-1',
    });
  return { clock, signer, options, issue };
}

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

test('JWS round trip: payload bytes, header alg/typ/kid by the kid rule', async () => {
  const { signer } = setup();
  const payload = Buffer.from('{"a":1}');
  const jws = await signJws(payload, signer.privateKey, { typ: 'application/baton-test+json' });
  const verified = await verifyJws(jws, signer.publicKey, { typ: 'baton-test+json' });
  assert.deepEqual(Buffer.from(verified.payload), payload);
  assert.equal(verified.header.alg, 'EdDSA');
  assert.equal(verified.header.kid, signer.kid);
  await rejectsWith(verifyJws(jws, signer.publicKey, { typ: 'other+json' }), 'jose_claim_invalid');
});

test('JWT round trip with a KeyObject and with a published local JWKS', async (t) => {
  const { signer, options, issue } = setup();
  const token = await issue();
  const direct = await verifyJwt(token, signer.publicKey, options);
  assert.equal(direct.payload['secret'], SECRET_CLAIM);
  assert.equal(direct.payload.iat, T0 / 1000);
  assert.equal(direct.payload.exp, T0 / 1000 + 60);
  assert.equal(direct.payload.sub, 'lineage-1');
  const other = generateEd25519KeyPair();
  const jwks = publishJwks([other.publicKey, signer.publicKey]);
  assert.deepEqual(
    jwks.keys.map((jwk) => jwk.kid),
    [other.kid, signer.kid],
  );
  assert.ok(jwks.keys.every((jwk) => jwk.use === 'sig' && jwk.alg === 'EdDSA'));
  const viaJwks = await verifyJwt(token, createLocalJwks(jwks), options);
  assert.deepEqual(viaJwks.payload, direct.payload);
  await rejectsWith(
    verifyJwt(token, createLocalJwks(publishJwks([other.publicKey])), options),
    'kid_mismatch',
  );
  t.diagnostic('checked KeyObject and JWKS verification');
});

test('alg none, HS256 and RS256 are refused by the default allowlist', async (t) => {
  const { signer, options } = setup();
  const claims = { iss: 'https://baton.example', aud: 'worker', exp: T0 / 1000 + 60 };
  const none = `${b64({ alg: 'none', typ: TYP, kid: signer.kid })}.${b64(claims)}.`;
  const secret = new Uint8Array(32).fill(7);
  const hs256 = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: TYP, kid: signer.kid })
    .sign(secret);
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const rs256 = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', typ: TYP, kid: 'rsa-1' })
    .sign(rsa.privateKey);
  const keys: [string, VerificationKey][] = [
    [none, signer.publicKey],
    [hs256, signer.publicKey],
    [rs256, rsa.publicKey],
  ];
  for (const [token, key] of keys) {
    await rejectsWith(verifyJwt(token, key, options), 'jose_algorithm_not_allowed', token);
    await rejectsWith(verifyJws(token, key, { typ: TYP }), 'jose_algorithm_not_allowed', token);
  }
  // The allowlist is what decides: naming RS256 lets the RS256 token through …
  const allowed = await verifyJwt(rs256, rsa.publicKey, { ...options, algorithms: ['RS256'] });
  assert.equal(allowed.header.alg, 'RS256');
  // … while an allowlist naming HMAC or none is itself refused.
  for (const alg of ['HS256', 'none']) {
    const algorithms = [alg] as unknown as VerifyJwtOptions['algorithms'];
    await rejectsWith(
      verifyJwt(hs256, signer.publicKey, { ...options, algorithms }),
      'jose_algorithm_not_allowed',
    );
  }
  t.diagnostic(`checked ${keys.length} refused algorithms`);
});

test('expiry uses the injected clock and its tolerance', async () => {
  const { clock, signer, options, issue } = setup();
  const token = await issue();
  clock.advance(61_000);
  await rejectsWith(verifyJwt(token, signer.publicKey, options), 'jose_expired', token);
  const tolerant = await verifyJwt(token, signer.publicKey, { ...options, clockToleranceSec: 5 });
  assert.equal(tolerant.payload.sub, 'lineage-1');
  clock.advance(5_000);
  await rejectsWith(verifyJwt(token, signer.publicKey, { ...options, clockToleranceSec: 5 }), 'jose_expired');
});

test('wrong issuer, audience, subject or typ, and a missing exp, are claim failures', async () => {
  const { clock, signer, options, issue } = setup();
  const token = await issue();
  const cases: [Partial<VerifyJwtOptions>, string][] = [
    [{ issuer: 'https://evil.example' }, 'iss'],
    [{ audience: 'someone-else' }, 'aud'],
    [{ subject: 'lineage-2' }, 'sub'],
    [{ typ: 'JWT' }, 'typ'],
  ];
  for (const [override, claim] of cases) {
    await assert.rejects(
      verifyJwt(token, signer.publicKey, { ...options, ...override }),
      (error: unknown) => {
        assert.ok(isBatonError(error, 'jose_claim_invalid'));
        assert.equal(error.details['claim'], claim);
        return true;
      },
    );
  }
  const noExp = await new SignJWT({ iss: 'https://baton.example', aud: 'worker' })
    .setProtectedHeader({ alg: 'EdDSA', typ: TYP, kid: signer.kid })
    .sign(signer.privateKey);
  await rejectsWith(verifyJwt(noExp, signer.publicKey, { ...options, clock }), 'jose_claim_invalid');
});

test('tampering, another key, a lying kid, missing kid and garbage are refused', async () => {
  const { signer, options, issue } = setup();
  const token = await issue();
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
  const tampered = `${header}.${b64({ ...claims, sub: 'lineage-2' })}.${signature}`;
  await rejectsWith(verifyJwt(tampered, signer.publicKey, options), 'signature_invalid', tampered);

  // S + L: the same signature in a malleable form (RFC 8032 §5.1.7), and a truncated one.
  const sig = Buffer.from(signature, 'base64url');
  let word = BigInt(`0x${Buffer.from(sig.subarray(32)).reverse().toString('hex')}`) + ED25519_L;
  for (let i = 32; i < 64; i++, word >>= 8n) sig[i] = Number(word & 255n);
  for (const bad of [sig, sig.subarray(0, 63)]) {
    const forged = `${header}.${payload}.${bad.toString('base64url')}`;
    await rejectsWith(verifyJwt(forged, signer.publicKey, options), 'signature_invalid', forged);
  }

  const other = generateEd25519KeyPair();
  await rejectsWith(verifyJwt(token, other.publicKey, options), 'kid_mismatch', token);
  // Signed by `other` but claiming the signer's kid: the kid matches, the signature does not.
  const liar = await new CompactSign(Buffer.from(payload, 'base64url'))
    .setProtectedHeader({ alg: 'EdDSA', typ: TYP, kid: signer.kid })
    .sign(other.privateKey);
  await rejectsWith(verifyJwt(liar, signer.publicKey, options), 'signature_invalid', liar);

  const noKid = await new SignJWT({ exp: T0 / 1000 + 60 })
    .setProtectedHeader({ alg: 'EdDSA', typ: TYP })
    .sign(signer.privateKey);
  await rejectsWith(verifyJwt(noKid, signer.publicKey, options), 'jose_invalid');
  for (const garbage of ['', 'a.b', 'not-a-token', `${header}.${payload}`]) {
    await rejectsWith(verifyJwt(garbage, signer.publicKey, options), 'jose_invalid');
  }
});

test('createLocalJwks enforces public keys, unique kids, the key policy and the kid rule', () => {
  const a = generateEd25519KeyPair();
  const jwk = exportEd25519PublicJwk(a.publicKey);
  const throwsCode = (fn: () => unknown, code: BatonErrorCode) =>
    assert.throws(fn, (error: unknown) => isBatonError(error, code));
  throwsCode(() => createLocalJwks({ keys: [{ ...jwk, kid: 'key-1' }] }), 'kid_mismatch');
  assert.equal(
    typeof createLocalJwks({ keys: [{ ...jwk, kid: 'key-1' }] }, { enforceKidRule: false }),
    'function',
  );
  throwsCode(() => createLocalJwks({ keys: [{ ...jwk, kid: undefined }] }), 'key_invalid');
  throwsCode(() => createLocalJwks({ keys: [jwk, jwk] }), 'key_invalid');
  throwsCode(() => createLocalJwks({ keys: [a.privateKey.export({ format: 'jwk' })] }), 'key_invalid');
  const identity = Buffer.alloc(32);
  identity[0] = 1; // the identity point: small order, refused by the key policy
  throwsCode(
    () =>
      createLocalJwks({
        keys: [{ kty: 'OKP', crv: 'Ed25519', x: identity.toString('base64url'), kid: ed25519Kid(identity) }],
      }),
    'key_invalid',
  );
  throwsCode(() => publishJwks([a.publicKey, a.publicKey]), 'key_invalid');
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
  assert.equal(typeof createLocalJwks({ keys: [{ ...ec, kid: 'issuer-es256' }] }), 'function');
});

test('signing refuses keys that are not Ed25519 private keys', async () => {
  const rsa: KeyObject = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const { signer } = setup();
  await rejectsWith(signJws(Buffer.from('x'), rsa, { typ: TYP }), 'key_unsupported');
  await rejectsWith(signJws(Buffer.from('x'), signer.publicKey, { typ: TYP }), 'key_unsupported');
});

test('signJws writes exactly the bytes jose CompactSign writes for {alg, typ, kid}, and they verify', async () => {
  const signer = generateEd25519KeyPair();
  for (const payload of [Buffer.from('{"a":1}'), Buffer.alloc(0), Buffer.from('é€😀'.repeat(50))]) {
    const ours = await signJws(payload, signer.privateKey, { typ: TYP });
    const theirs = await new CompactSign(payload)
      .setProtectedHeader({ alg: 'EdDSA', typ: TYP, kid: ed25519Kid(signer.publicKey) })
      .sign(signer.privateKey);
    assert.equal(ours, theirs);
    const { payload: back } = await verifyJws(ours, signer.publicKey, { typ: TYP });
    assert.deepEqual(Buffer.from(back), payload);
  }
});

test('verifyJws on the direct Ed25519 path refuses an edited payload or signature as signature_invalid', async () => {
  const signer = generateEd25519KeyPair();
  const jws = await signJws(Buffer.from('{"a":1}'), signer.privateKey, { typ: TYP });
  const [h, p, s] = jws.split('.') as [string, string, string];
  const otherPayload = Buffer.from('{"a":2}').toString('base64url');
  await rejectsWith(
    verifyJws(`${h}.${otherPayload}.${s}`, signer.publicKey, { typ: TYP }),
    'signature_invalid',
  );
  const flipped = Buffer.from(s, 'base64url');
  flipped[0] = (flipped[0] ?? 0) ^ 1;
  await rejectsWith(
    verifyJws(`${h}.${p}.${flipped.toString('base64url')}`, signer.publicKey, { typ: TYP }),
    'signature_invalid',
  );
});
