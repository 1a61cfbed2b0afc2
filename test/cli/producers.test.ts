/**
 * `baton producers list|get|pin|unpin` (docs/observations.md "Pinned producer keys"; OBS-12 ¶25)
 * against a REAL server on 127.0.0.1 (the HTTP API `baton serve` builds, over a SQLite file, with
 * the domain signing key so /v1/continuity answers): pin → get → list → unpin → get is not found;
 * a keys file that is not a key set the API takes is refused (exit 2) before any request, nothing
 * pinned; an operator token cannot pin or unpin (forbidden, exit 1).
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { exportEd25519PublicJwk, exportPublicPem, generateEd25519KeyPair } from '../../src/core/ed25519.js';
import type { JsonObject } from '../../src/core/json.js';
import { startApi } from '../server/helpers.js';
import { tempDir } from '../store/support.js';
import { runBaton } from './run.js';

const PRODUCER = 'urn:example:acme';

function producers(argv: string[], env: Record<string, string> = {}) {
  return runBaton(['producers', ...argv], env);
}

function file(dir: string, name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
}

test('producers pin → get → list → unpin → get: not found; --json is the API’s answer', async (t) => {
  const api = await startApi(t, { continuity: true });
  const dir = tempDir(t);
  const [a, b] = [generateEd25519KeyPair(), generateEd25519KeyPair()];
  const [ja, jb] = [exportEd25519PublicJwk(a.publicKey), exportEd25519PublicJwk(b.publicKey)];
  const admin = ['--url', api.url, '--token', api.admin];
  const operator = ['--url', api.url, '--token', api.operator];

  // A JSON array holding a JWK (with the optional labels) and a PEM.
  const arrayFile = file(dir, 'keys.json', [
    { ...jb, alg: 'EdDSA', use: 'sig' },
    { pem: exportPublicPem(a.publicKey) },
  ]);
  const pinned = await producers(['pin', PRODUCER, '--keys', arrayFile, ...admin]);
  assert.equal(pinned.code, 0, pinned.err);
  assert.equal(pinned.err, `producer ${PRODUCER}: created\n`);
  const kids = [ja.kid, jb.kid].sort();
  const lineOf = new RegExp(
    `^${PRODUCER}  ${kids.join(',')}  \\d{4}-\\d{2}-\\d{2}T\\S+Z  admin:tok_\\S+\\n$`,
  );
  assert.match(pinned.out, lineOf);

  // The same keys as a JWKS: unchanged; --json is the PUT answer.
  const jwks = await producers([
    'pin',
    PRODUCER,
    '--keys',
    file(dir, 'jwks.json', { keys: [ja, jb] }),
    '--json',
    ...admin,
  ]);
  assert.equal(jwks.code, 0, jwks.err);
  const put = JSON.parse(jwks.out) as { status: string; pinned: JsonObject };
  assert.equal(put.status, 'unchanged');
  assert.deepEqual(
    put.pinned['keys'],
    [ja, jb].sort((x, y) => (x.kid < y.kid ? -1 : 1)),
  );

  const got = await producers(['get', PRODUCER, ...operator]);
  assert.equal(got.code, 0, got.err);
  assert.equal(got.out, pinned.out, 'get prints the line pin printed');
  const gotJson = await producers(['get', PRODUCER, '--json', ...operator]);
  assert.deepEqual(JSON.parse(gotJson.out), put.pinned);

  const listed = await producers(['list'], { BATON_URL: api.url, BATON_TOKEN: api.operator });
  assert.equal(listed.code, 0, listed.err);
  assert.equal(listed.out, pinned.out, 'one line per producer');
  const listJson = await producers(['list', '--json', ...operator]);
  const fromApi = await api.call('GET', '/v1/continuity/producers', { token: api.operator });
  assert.deepEqual(JSON.parse(listJson.out), fromApi.body, 'the API’s body');

  const unpinned = await producers(['unpin', PRODUCER, ...admin]);
  assert.deepEqual([unpinned.code, unpinned.out], [0, `${PRODUCER}  removed\n`], unpinned.err);
  const again = await producers(['unpin', PRODUCER, '--json', ...admin]);
  assert.deepEqual(JSON.parse(again.out), { producer: PRODUCER, status: 'absent' });

  const gone = await producers(['get', PRODUCER, ...operator]);
  assert.equal(gone.code, 1);
  assert.equal(gone.out, '');
  assert.match(gone.err, /^error: not_found: producer urn:example:acme has no pinned keys\n$/);
  assert.equal((await producers(['list', ...operator])).out, '');
});

test('producers pin: a keys file the API would not take is refused (exit 2) before any request; nothing pinned', async (t) => {
  const api = await startApi(t, { continuity: true });
  const dir = tempDir(t);
  const good = exportEd25519PublicJwk(generateEd25519KeyPair().publicKey);
  const privateJwk = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }) as JsonObject;
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' });
  const cases: [string, unknown, RegExp][] = [
    ['private.json', [privateJwk], /^error: key_invalid: .*private\.json: \$\[0\]: /],
    ['rsa.json', { keys: [rsa] }, /^error: key_unsupported: .*rsa\.json: \$\.keys\[0\]: /],
    ['bad-x.json', [{ ...good, x: 'AAAA' }], /^error: key_invalid: .*bad-x\.json: \$\[0\]: /],
    ['bad-kid.json', [{ ...good, kid: 'key-1' }], /^error: key_invalid: .*bad-kid\.json: \$\[0\]\.kid: /],
    ['twice.json', [good, good], /^error: input_invalid: .*twice\.json: \$\[1\]: repeats an earlier key/],
    ['empty.json', [], /^error: input_invalid: .*empty\.json: \$: must be an array of 1\.\.16 keys/],
    ['one-jwk.json', good, /^error: input_invalid: .*one-jwk\.json: must hold a JSON array .* or a JWKS/],
    [
      'extra.json',
      { keys: [good], other: 1 },
      /^error: input_invalid: .*extra\.json: must hold a JSON array/,
    ],
    ['string.json', '"x"', /^error: input_invalid: .*string\.json: must hold a JSON array/],
    [
      'dup.json',
      `{"keys":[${JSON.stringify(good)}],"keys":[]}`,
      /^error: json_duplicate_member: .*dup\.json line 1, column \d+ \(byte \d+\): /,
    ],
    ['broken.json', '[{', /^error: json_malformed: .*broken\.json line 1, column 3 \(byte 2\): /],
  ];
  const before = await api.snapshot();
  for (const [name, value, refusal] of cases) {
    const keys = file(dir, name, value);
    const r = await producers(['pin', PRODUCER, '--keys', keys, '--url', api.url, '--token', api.admin]);
    assert.deepEqual([r.code, r.out], [2, ''], `${name}: ${r.err}`);
    assert.match(r.err, refusal, name);
    // Against no server at all: the same refusal, so it came before any request.
    const offline = await producers([
      'pin',
      PRODUCER,
      '--keys',
      keys,
      '--url',
      'http://127.0.0.1:9',
      '--token',
      'btk.x',
    ]);
    assert.deepEqual([offline.code, offline.err], [2, r.err], `${name} offline`);
  }
  const missing = await producers([
    'pin',
    PRODUCER,
    '--keys',
    join(dir, 'none.json'),
    '--url',
    api.url,
    '--token',
    api.admin,
  ]);
  assert.equal(missing.code, 2);
  assert.match(missing.err, /^error: usage: cannot read .*none\.json/);
  const goodFile = file(dir, 'good.json', [good]);
  for (const producer of ['urn:baton:local', 'URN:BATON:acme', 'not a uri']) {
    const r = await producers([
      'pin',
      producer,
      '--keys',
      goodFile,
      '--url',
      'http://127.0.0.1:9',
      '--token',
      'btk.x',
    ]);
    assert.equal(r.code, 2, `${producer}: ${r.err}`);
    assert.match(r.err, /^error: input_invalid: PRODUCER: /, producer);
  }
  for (const argv of [
    ['pin', PRODUCER],
    ['pin', '--keys', goodFile],
    ['list', '--keys', goodFile],
    ['get'],
    ['unpin', PRODUCER, 'urn:example:other'],
  ]) {
    const r = await producers([...argv, '--url', api.url, '--token', api.admin]);
    assert.equal(r.code, 2, `${argv.join(' ')}: ${r.err}`);
    assert.match(r.err, /^error: usage: /, argv.join(' '));
  }
  assert.equal(await api.snapshot(), before, 'nothing pinned, nothing written');
});

test('producers pin and unpin need an admin token: an operator is forbidden (exit 1), nothing changes', async (t) => {
  const api = await startApi(t, { continuity: true });
  const dir = tempDir(t);
  const keys = file(dir, 'keys.json', [exportEd25519PublicJwk(generateEd25519KeyPair().publicKey)]);
  const operator = ['--url', api.url, '--token', api.operator];
  const before = await api.snapshot();
  const pin = await producers(['pin', PRODUCER, '--keys', keys, ...operator]);
  assert.deepEqual([pin.code, pin.out], [1, ''], pin.err);
  assert.match(pin.err, /^error: forbidden: /);
  assert.equal(await api.snapshot(), before, 'nothing pinned');

  const admin = await producers(['pin', PRODUCER, '--keys', keys, '--url', api.url, '--token', api.admin]);
  assert.equal(admin.code, 0, admin.err);
  const pinned = await api.snapshot();
  const unpin = await producers(['unpin', PRODUCER, ...operator]);
  assert.equal(unpin.code, 1);
  assert.match(unpin.err, /^error: forbidden: /);
  assert.equal(await api.snapshot(), pinned, 'still pinned');
  const bogus = await producers(['list', '--url', api.url, '--token', `${api.operator}x`]);
  assert.equal(bogus.code, 1);
  assert.match(bogus.err, /^error: unauthenticated: /);
  assert.doesNotMatch(bogus.err, /btk\.tok_[A-Za-z0-9]+\.[A-Za-z0-9_-]/, 'no secret echoed');
});
