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
import { resolveCredentials, staticKeys, validateCredentials } from '../../src/providers/index.js';

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
    credentials: { 'stripe-api': { env: 'STRIPE_KEY' }, whsec: { file: '/run/whsec', encoding: 'utf8' } },
  });
  assert.deepEqual(Object.keys(ok.credentials), ['stripe-api', 'whsec']);
  const bad: [unknown, string][] = [
    [{ format: 'baton.credentials/2', credentials: {} }, '$.format'],
    [{ format: 'baton.credentials/1' }, '$.credentials'],
    [{ format: 'baton.credentials/1', credentials: { a: { env: 'X', file: '/y' } } }, '$.credentials.a'],
    [{ format: 'baton.credentials/1', credentials: { a: {} } }, '$.credentials.a'],
    [{ format: 'baton.credentials/1', credentials: { a: { file: 'relative' } } }, '$.credentials.a.file'],
    [{ format: 'baton.credentials/1', credentials: { a: { env: '1BAD' } } }, '$.credentials.a.env'],
    [
      { format: 'baton.credentials/1', credentials: { a: { env: 'X', value: SECRET } } },
      '$.credentials.a.value',
    ],
    [
      { format: 'baton.credentials/1', credentials: { a: { env: 'X', encoding: 'hex' } } },
      '$.credentials.a.encoding',
    ],
    [{ format: 'baton.credentials/1', credentials: { a: { env: 'X' } }, extra: 1 }, '$.extra'],
  ];
  for (const [doc, path] of bad) refused(() => validateCredentials(doc), 'credentials_invalid', path);
});

test('references resolve from the environment and from files; missing ones are named start errors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-cred-'));
  writeFileSync(join(dir, 'whsec'), 'whsec_abc\n');
  writeFileSync(join(dir, 'hmac'), Buffer.alloc(32, 7).toString('base64url'));
  const doc = validateCredentials({
    format: 'baton.credentials/1',
    credentials: {
      api: { env: 'STRIPE_KEY' },
      whsec: { file: join(dir, 'whsec') },
      hmac: { file: join(dir, 'hmac'), encoding: 'base64url' },
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
    credentials: { w: { file: join(dir, 'nope') } },
  });
  refused(() => resolveCredentials(gone, { env: {}, readFile }), 'credential_unresolved');
  refused(() => resolveCredentials(doc, { env: { STRIPE_KEY: '' }, readFile }), 'credential_unresolved');
});

test('a value with a control character is refused at start, naming the reference, never the value', () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-cred-'));
  writeFileSync(join(dir, 'two-newlines'), `${SECRET}\n\n`);
  writeFileSync(join(dir, 'crlf'), `${SECRET}\r\n`);
  const doc = (ref: object) =>
    validateCredentials({ format: 'baton.credentials/1', credentials: { api: ref } });
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
