import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { generateEd25519KeyPair } from '../../src/core/ed25519.js';
import {
  hmacSecretId,
  sandboxSignedString,
  signSandboxMessage,
  verifySandboxSignature,
  type SandboxPin,
  type SandboxSigningKey,
} from '../../src/providers/sandbox/index.js';

const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);
const secret = randomBytes(32);
const pair = generateEd25519KeyPair();
const keys: Record<'hmac' | 'ed25519', { key: SandboxSigningKey; pin: SandboxPin }> = {
  hmac: {
    key: { kind: 'hmac', secretId: hmacSecretId(secret), secret },
    pin: { kind: 'hmac', secretId: hmacSecretId(secret), secret },
  },
  ed25519: {
    key: { kind: 'ed25519', kid: pair.kid, privateKey: pair.privateKey },
    pin: { kind: 'ed25519', kid: pair.kid, publicKey: pair.publicKey },
  },
};
const message = sandboxSignedString({
  method: 'get',
  path: '/v1/accounts/acct_sandbox/payments/by-key/k-1',
  body: '{"status":"succeeded"}',
});

for (const kind of ['hmac', 'ed25519'] as const) {
  const { key, pin } = keys[kind];
  const verify = (header: string | undefined, signedString = message, nowMs = NOW) =>
    verifySandboxSignature({ header, signedString, pin, nowMs, toleranceMs: 60_000 });

  test(`${kind}: a fresh signature over the exact message verifies`, () => {
    const header = signSandboxMessage(key, message, NOW);
    const result = verify(header);
    assert.deepEqual(result, {
      ok: true,
      kind,
      kid: kind === 'hmac' ? hmacSecretId(secret) : pair.kid,
      timestampMs: NOW,
    });
    assert.ok(message.startsWith('GET /v1/'), 'the method is upper-cased in the signed string');
  });

  test(`${kind}: any change to the body, path, method or timestamp is refused`, (t) => {
    const header = signSandboxMessage(key, message, NOW);
    const variants = [
      message.replace('succeeded', 'failed'),
      message.replace('k-1', 'k-2'),
      message.replace('GET', 'POST'),
      `${message} `,
      message.replace('/by-key/', '/'),
    ];
    for (const v of variants) assert.deepEqual(verify(header, v), { ok: false, reason: 'bad_signature' }, v);
    const t0 = Math.floor(NOW / 1000);
    const shifted = header.replace(`t=${t0}`, `t=${t0 + 1}`);
    assert.deepEqual(verify(shifted), { ok: false, reason: 'bad_signature' }, 'the timestamp is signed');
    t.diagnostic(`checked ${variants.length + 1} tampered messages`);
  });

  test(`${kind}: missing, malformed, unknown-key and stale headers give their reasons`, (t) => {
    const header = signSandboxMessage(key, message, NOW);
    const cases: [string | undefined, string][] = [
      [undefined, 'unsigned'],
      ['', 'unsigned'],
      ['  ', 'unsigned'],
      ['garbage', 'bad_signature'],
      [header.replace(/^t=\d+,/, ''), 'bad_signature'],
      [`${header},t=1`, 'bad_signature'],
      [header.replace(/^t=/, 't=-'), 'bad_signature'],
      [`${header},extra=1`, 'bad_signature'],
      [header.replace(/kid=[^,]+/, 'kid=someone-else'), 'unknown_key'],
      [header.replace(/(v1|sig)=.*$/, '$1='), 'bad_signature'],
      [
        header.replace(/(v1|sig)=(.)/, (_m, p: string, c: string) => `${p}=${c === 'a' ? 'b' : 'a'}`),
        'bad_signature',
      ],
    ];
    for (const [h, reason] of cases) assert.deepEqual(verify(h), { ok: false, reason }, String(h));
    assert.deepEqual(verify(header, message, NOW + 61_000), { ok: false, reason: 'stale' });
    assert.deepEqual(verify(header, message, NOW - 61_000), { ok: false, reason: 'stale' }, 'future-dated');
    const oldForgery = header.replace(
      /(v1|sig)=(.)/,
      (_m, p: string, c: string) => `${p}=${c === 'A' ? 'B' : 'A'}`,
    );
    assert.deepEqual(verify(oldForgery, message, NOW + 61_000), { ok: false, reason: 'bad_signature' });
    t.diagnostic(`checked ${cases.length + 3} headers`);
  });
}

test('an HMAC pin with the right id but another secret refuses the signature', () => {
  const header = signSandboxMessage(keys.hmac.key, message, NOW);
  const wrong: SandboxPin = { kind: 'hmac', secretId: hmacSecretId(secret), secret: randomBytes(32) };
  assert.deepEqual(verifySandboxSignature({ header, signedString: message, pin: wrong, nowMs: NOW }), {
    ok: false,
    reason: 'bad_signature',
  });
});

test('a header of one kind never verifies under a pin of the other kind', () => {
  const hmacHeader = signSandboxMessage(keys.hmac.key, message, NOW);
  const edHeader = signSandboxMessage(keys.ed25519.key, message, NOW);
  const both = [keys.hmac.pin, keys.ed25519.pin];
  // Pinned under the other's id, the parameter set (v1 vs sig) no longer fits: refused.
  const edPinAsHmacId: SandboxPin = { kind: 'ed25519', kid: hmacSecretId(secret), publicKey: pair.publicKey };
  assert.equal(
    verifySandboxSignature({ header: hmacHeader, signedString: message, pin: edPinAsHmacId, nowMs: NOW }).ok,
    false,
  );
  assert.equal(
    verifySandboxSignature({ header: edHeader, signedString: message, pin: keys.hmac.pin, nowMs: NOW }).ok,
    false,
  );
  assert.equal(
    verifySandboxSignature({ header: hmacHeader, signedString: message, pin: both, nowMs: NOW }).ok,
    true,
  );
  assert.equal(
    verifySandboxSignature({ header: edHeader, signedString: message, pin: both, nowMs: NOW }).ok,
    true,
  );
});
