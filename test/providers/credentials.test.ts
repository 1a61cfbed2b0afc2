/**
 * Credential references (docs/providers.md "Credentials"): strict documents, resolution at start
 * from the environment or a file, and start errors that name the reference, never a value.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isBatonError } from '../../src/core/errors.js';
import {
  credentialOrigins,
  resolveCredentials,
  staticKeys,
  validateCredentials,
} from '../../src/providers/index.js';

const SECRET = 'sk_test_never-shown-4f1c9a';

function refused(f: () => unknown, code: string, path?: string): void {
  assert.throws(f, (e: unknown) => {
    assert.ok(isBatonError(e), String(e));
    assert.equal(e.code, code);
    if (path !== undefined) assert.equal(e.details['path'], path);
    assert.ok(!e.message.includes(SECRET) && !JSON.stringify(e.details).includes(SECRET));
    return true;
  });
}

test('a credentials document is validated strictly, with the path of what is wrong', () => {
  const ok = validateCredentials({
    format: 'baton.credentials/1',
    credentials: {
      'stripe-api': { env: 'STRIPE_KEY', origins: ['https://api.stripe.com'] },
      whsec: { file: '/run/whsec', encoding: 'utf8', origins: [] },
    },
  });
  assert.deepEqual(Object.keys(ok.credentials), ['stripe-api', 'whsec']);
  assert.deepEqual(credentialOrigins(ok), { 'stripe-api': ['https://api.stripe.com'], whsec: [] });
  const none: string[] = [];
  const doc = (a: object) => ({ format: 'baton.credentials/1', credentials: { a } });
  const bad: [unknown, string][] = [
    [{ format: 'baton.credentials/2', credentials: {} }, '$.format'],
    [{ format: 'baton.credentials/1' }, '$.credentials'],
    [doc({ env: 'X', file: '/y', origins: none }), '$.credentials.a'],
    [doc({ origins: none }), '$.credentials.a'],
    [doc({ file: 'relative', origins: none }), '$.credentials.a.file'],
    [doc({ env: '1BAD', origins: none }), '$.credentials.a.env'],
    [doc({ env: 'X', value: SECRET, origins: none }), '$.credentials.a.value'],
    [doc({ env: 'X', encoding: 'hex', origins: none }), '$.credentials.a.encoding'],
    [{ ...doc({ env: 'X', origins: none }), extra: 1 }, '$.extra'],
  ];
  for (const [d, path] of bad) refused(() => validateCredentials(d), 'credentials_invalid', path);
});

test('every credential declares the exact origins it may be sent to; an entry without them refuses the document', () => {
  // Fail closed: a document written before origins existed is refused at load, and says what to add.
  assert.throws(
    () => validateCredentials({ format: 'baton.credentials/1', credentials: { api: { env: 'STRIPE_KEY' } } }),
    (e: unknown) => {
      assert.ok(isBatonError(e), String(e));
      assert.equal(e.code, 'credentials_invalid');
      assert.equal(e.details['path'], '$.credentials.api.origins');
      assert.match(
        e.message,
        /origins this credential may be sent to, e\.g\. \["https:\/\/api\.stripe\.com"\]/,
      );
      return true;
    },
  );
  const doc = (origins: unknown) =>
    validateCredentials({ format: 'baton.credentials/1', credentials: { api: { env: 'K', origins } } });
  const bad: [unknown, string][] = [
    ['https://api.stripe.com', '$.credentials.api.origins'],
    [['https://api.stripe.com/'], '$.credentials.api.origins[0]'],
    [['https://api.stripe.com/v1'], '$.credentials.api.origins[0]'],
    [['https://API.stripe.com'], '$.credentials.api.origins[0]'],
    [['https://api.stripe.com:443'], '$.credentials.api.origins[0]'],
    [['https://user@api.stripe.com'], '$.credentials.api.origins[0]'],
    [['api.stripe.com'], '$.credentials.api.origins[0]'],
    [['http://api.stripe.com'], '$.credentials.api.origins[0]'],
    [['ftp://api.stripe.com'], '$.credentials.api.origins[0]'],
    [['*'], '$.credentials.api.origins[0]'],
    [[1], '$.credentials.api.origins[0]'],
    [['https://api.stripe.com', 'https://api.stripe.com'], '$.credentials.api.origins'],
    [Array.from({ length: 17 }, (_, i) => `https://h${i}.example`), '$.credentials.api.origins'],
  ];
  for (const [origins, path] of bad) refused(() => doc(origins), 'credentials_invalid', path);
  // https anywhere; plain http only on the loopback interface (the sandbox, tests).
  const good = [
    'https://api.stripe.com',
    'https://api.example:8443',
    'http://127.0.0.1:4160',
    'http://[::1]:9',
  ];
  assert.deepEqual(doc(good).credentials['api']?.origins, good);
});

test('a held secret is sendable only to the origins given with it; without any it only verifies', () => {
  const secret = Buffer.from(SECRET);
  const keys = staticKeys({ api: secret, hmac: secret }, { api: ['https://api.stripe.com'] });
  assert.deepEqual(keys.origins('api'), ['https://api.stripe.com']);
  assert.deepEqual(keys.origins('hmac'), [], 'no origins: never sent');
  assert.deepEqual(keys.origins('absent'), []);
  assert.deepEqual(staticKeys({ api: secret }).origins('api'), [], 'origins default to none');
  assert.equal(keys.hmacSecret('hmac'), secret, 'a secret without origins still verifies');
});

test('references resolve from the environment and from files; missing ones are named start errors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-cred-'));
  writeFileSync(join(dir, 'whsec'), 'whsec_abc\n');
  writeFileSync(join(dir, 'hmac'), Buffer.alloc(32, 7).toString('base64url'));
  const doc = validateCredentials({
    format: 'baton.credentials/1',
    credentials: {
      api: { env: 'STRIPE_KEY', origins: ['https://api.stripe.com'] },
      whsec: { file: join(dir, 'whsec'), origins: [] },
      hmac: { file: join(dir, 'hmac'), encoding: 'base64url', origins: [] },
    },
  });
  const readFile = (p: string): string | undefined => {
    try {
      return readFileSync(p, 'utf8');
    } catch {
      return undefined;
    }
  };
  const secrets = resolveCredentials(doc, { env: { STRIPE_KEY: SECRET }, readFile });
  const keys = staticKeys(secrets);
  assert.equal(Buffer.from(keys.secret('api') ?? []).toString(), SECRET);
  assert.equal(
    Buffer.from(keys.secret('whsec') ?? []).toString(),
    'whsec_abc',
    'one trailing newline dropped',
  );
  assert.deepEqual(Buffer.from(keys.hmacSecret('hmac') ?? []), Buffer.alloc(32, 7));
  assert.equal(keys.secret('absent'), undefined);

  refused(() => resolveCredentials(doc, { env: {}, readFile }), 'credential_unresolved');
  try {
    resolveCredentials(doc, { env: {}, readFile });
  } catch (e) {
    assert.ok(isBatonError(e));
    assert.deepEqual(e.details, { id: 'api', env: 'STRIPE_KEY' });
  }
  const gone = validateCredentials({
    format: 'baton.credentials/1',
    credentials: { w: { file: join(dir, 'nope'), origins: [] } },
  });
  refused(() => resolveCredentials(gone, { env: {}, readFile }), 'credential_unresolved');
  refused(() => resolveCredentials(doc, { env: { STRIPE_KEY: '' }, readFile }), 'credential_unresolved');
});

test('a value with a control character is refused at start, naming the reference, never the value', () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-cred-'));
  writeFileSync(join(dir, 'two-newlines'), `${SECRET}\n\n`);
  writeFileSync(join(dir, 'crlf'), `${SECRET}\r\n`);
  const doc = (ref: object) =>
    validateCredentials({ format: 'baton.credentials/1', credentials: { api: { ...ref, origins: [] } } });
  const readFile = (p: string): string => readFileSync(p, 'utf8');
  // The CRLF file loses its one line ending (as an editor's LF does) and resolves.
  const crlf = resolveCredentials(doc({ file: join(dir, 'crlf') }), { env: {}, readFile });
  assert.equal(Buffer.from(crlf['api'] ?? []).toString(), SECRET);
  const cases: [object, Record<string, string>, Record<string, string>][] = [
    [{ env: 'STRIPE_KEY' }, { STRIPE_KEY: `${SECRET}\n` }, { id: 'api', env: 'STRIPE_KEY' }],
    [{ env: 'STRIPE_KEY' }, { STRIPE_KEY: `${SECRET}\r` }, { id: 'api', env: 'STRIPE_KEY' }],
    [{ env: 'STRIPE_KEY' }, { STRIPE_KEY: `sk\u0000${SECRET}` }, { id: 'api', env: 'STRIPE_KEY' }],
    [{ env: 'STRIPE_KEY' }, { STRIPE_KEY: `${SECRET}\u007f` }, { id: 'api', env: 'STRIPE_KEY' }],
    [{ file: join(dir, 'two-newlines') }, {}, { id: 'api', file: join(dir, 'two-newlines') }],
  ];
  for (const [ref, env, details] of cases) {
    refused(() => resolveCredentials(doc(ref), { env, readFile }), 'credential_unresolved');
    assert.throws(
      () => resolveCredentials(doc(ref), { env, readFile }),
      (e: unknown) => {
        assert.ok(isBatonError(e) && /control character/.test(e.message), String(e));
        assert.deepEqual(e.details, details);
        return true;
      },
    );
  }
});

test('a base64url value that may be sent is checked after decoding; a verify-only key stays any bytes', () => {
  const origins = ['https://api.stripe.com'];
  const doc = (sent: boolean) =>
    validateCredentials({
      format: 'baton.credentials/1',
      credentials: { api: { env: 'K', encoding: 'base64url', origins: sent ? origins : [] } },
    });
  const readFile = (): undefined => undefined;
  const b64 = (bytes: string | Buffer) => Buffer.from(bytes).toString('base64url');
  // The encoded text is clean; what it decodes to would go into the Authorization header and make
  // node:http refuse every send, after the occurrence was entered. Refused at start instead.
  const bad: [string, RegExp][] = [
    [b64(`${SECRET}\r\nX-Injected: 1`), /control character/],
    [b64(`${SECRET}\n`), /control character/],
    [b64(`${SECRET}\u0085`), /control character/],
    [b64(Buffer.from([0x73, 0x6b, 0xff, 0xfe])), /not UTF-8/],
  ];
  for (const [K, why] of bad) {
    assert.throws(
      () => resolveCredentials(doc(true), { env: { K }, readFile }),
      (e: unknown) => {
        assert.ok(isBatonError(e) && e.code === 'credential_unresolved', String(e));
        assert.match(e.message, why);
        assert.deepEqual(e.details, { id: 'api', env: 'K' });
        assert.ok(!e.message.includes(SECRET));
        return true;
      },
    );
  }
  const sendable = resolveCredentials(doc(true), { env: { K: b64(SECRET) }, readFile });
  assert.equal(Buffer.from(sendable['api'] ?? []).toString(), SECRET);
  // An HMAC key is only verified with: control bytes and non-UTF-8 are just key material.
  const binary = Buffer.from([0x00, 0x0a, 0x0d, 0xff, 0x07, 0x85]);
  const key = resolveCredentials(doc(false), { env: { K: b64(binary) }, readFile });
  assert.deepEqual(Buffer.from(key['api'] ?? []), binary);
});
