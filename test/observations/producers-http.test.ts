/**
 * `PUT|GET|DELETE /v1/continuity/producers` on a real server (127.0.0.1, SQLite file; OBS-12 ¶25):
 * admins pin and unpin, operators read; a malformed, non-Ed25519 or private key, a producer in
 * Baton's own namespace (or `urn:baton:local`), or an operator token is refused with its typed
 * code and changes no row. A producer id has one length limit, the pin's and the record's.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import test from 'node:test';
import { exportEd25519PublicJwk, exportPublicPem, generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { isBatonError } from '../../src/core/errors.js';
import type { JsonObject } from '../../src/core/json.js';
import { MAX_PRODUCER_ID, OBSERVATION_PROFILE, signRecord } from '../../src/observations/index.js';
import { assertProblem, domainConfig, startApi, type Answer } from '../server/helpers.js';
import { decidedRecord } from './support.js';

const URL_ = '/v1/continuity/producers';

test('OBS-12 over HTTP: an admin pins, replaces and unpins a producer’s keys; an operator reads them; each change is evidence', async (t) => {
  const api = await startApi(t, { continuity: true });
  assert.equal((await api.call('PUT', '/v1/domain', { token: api.admin, body: domainConfig() })).status, 200);
  const [a, b] = [generateEd25519KeyPair(), generateEd25519KeyPair()];
  const put = (keys: unknown[], token = api.admin) =>
    api.call('PUT', URL_, { token, body: { producer: 'urn:example:acme', keys } });

  const created = await put([{ pem: exportPublicPem(a.publicKey) }]);
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body['status'], 'created');
  const pinned = created.body['pinned'] as JsonObject;
  assert.deepEqual(
    pinned['keys'],
    [exportEd25519PublicJwk(a.publicKey)],
    'kept as its JWK, kid by the kid rule',
  );
  assert.match(pinned['pinnedBy'] as string, /^admin:tok_/);

  const same = await put([exportEd25519PublicJwk(a.publicKey)]);
  assert.deepEqual([same.status, same.body['status']], [200, 'unchanged'], 'a PEM and its JWK are one key');
  const rotated = await put([exportEd25519PublicJwk(b.publicKey), exportEd25519PublicJwk(a.publicKey)]);
  assert.deepEqual([rotated.status, rotated.body['status']], [200, 'updated']);

  const listed = await api.call('GET', URL_, { token: api.operator });
  assert.equal(listed.status, 200, listed.text);
  const producers = listed.body['producers'] as JsonObject[];
  assert.deepEqual(
    producers.map((p) => [p['producer'], (p['keys'] as unknown[]).length]),
    [['urn:example:acme', 2]],
  );

  const q = `${URL_}?producer=${encodeURIComponent('urn:example:acme')}`;
  const removed = await api.call('DELETE', q, { token: api.admin });
  assert.deepEqual(
    [removed.status, removed.body],
    [200, { producer: 'urn:example:acme', status: 'removed' }],
  );
  const again = await api.call('DELETE', q, { token: api.admin });
  assert.deepEqual([again.status, again.body['status']], [200, 'absent'], 'idempotent');
  assert.deepEqual((await api.call('GET', URL_, { token: api.operator })).body['producers'], []);

  const chain = await api.call(
    'GET',
    `/v1/evidence?subject=${encodeURIComponent('producer:urn:example:acme')}`,
    {
      token: api.operator,
    },
  );
  assert.deepEqual(
    (chain.body['events'] as JsonObject[]).map((e) => e['type']),
    ['observation_producer_pinned', 'observation_producer_pinned', 'observation_producer_unpinned'],
  );
});

test('a refused pin or unpin changes nothing: bad keys, Baton’s namespace, urn:baton:local, an operator token', async (t) => {
  const api = await startApi(t, { continuity: true });
  assert.equal((await api.call('PUT', '/v1/domain', { token: api.admin, body: domainConfig() })).status, 200);
  const good = exportEd25519PublicJwk(generateEd25519KeyPair().publicKey);
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({
    format: 'jwk',
  }) as JsonObject;
  const before = await api.snapshot();
  const refusals: [JsonObject, number, string][] = [
    [{ producer: 'urn:example:a', keys: [{ ...rsa }] }, 400, 'key_unsupported'],
    [{ producer: 'urn:example:a', keys: [{ ...good, x: 'AAAA' }] }, 400, 'key_invalid'],
    [{ producer: 'urn:example:a', keys: [{ ...good, d: good.x }] }, 400, 'key_invalid'],
    [{ producer: 'urn:example:a', keys: [{ pem: 'nope' }] }, 400, 'key_invalid'],
    [{ producer: 'urn:baton:test-domain', keys: [good] }, 400, 'input_invalid'],
    [{ producer: 'urn:baton:local', keys: [good] }, 400, 'input_invalid'],
    [{ producer: 'Urn:Baton:Other', keys: [good] }, 400, 'input_invalid'],
    [{ producer: 'urn:example:a', keys: [] }, 400, 'input_invalid'],
  ];
  for (const [body, status, code] of refusals) {
    assertProblem(await api.call('PUT', URL_, { token: api.admin, body }), status, code);
  }
  const asOperator = await api.call('PUT', URL_, {
    token: api.operator,
    body: { producer: 'urn:example:a', keys: [good] },
  });
  assertProblem(asOperator, 403, 'forbidden');
  assertProblem(
    await api.call('DELETE', `${URL_}?producer=urn%3Abaton%3Alocal`, { token: api.admin }),
    400,
    'input_invalid',
  );
  assertProblem(
    await api.call('DELETE', `${URL_}?producer=urn%3Aexample%3Aa`, { token: api.operator }),
    403,
    'forbidden',
  );
  assert.equal(await api.snapshot(), before, 'no row and no evidence event was written');
});

test('one producer id limit (MAX_PRODUCER_ID): at the limit it is pinned, unpinned and its signed record stored; one character more is refused at $.producer by the pin, the unpin, the record and signRecord alike, and nothing changes', async (t) => {
  const api = await startApi(t, { continuity: true });
  assert.equal((await api.call('PUT', '/v1/domain', { token: api.admin, body: domainConfig() })).status, 200);
  const key = generateEd25519KeyPair();
  const keys = [exportEd25519PublicJwk(key.publicKey)];
  const producerOf = (length: number) => `urn:example:${'p'.repeat(length - 'urn:example:'.length)}`;
  const record = (producer: string) =>
    decidedRecord({
      producer,
      record_id: 'long-producer-1',
      profile: OBSERVATION_PROFILE,
      audience: 'urn:baton:test-domain',
      issued_at: new Date(api.clock.wallMs()).toISOString(),
      expires_at: new Date(api.clock.wallMs() + 3_600_000).toISOString(),
    });
  const unpin = (producer: string) =>
    api.call('DELETE', `${URL_}?producer=${encodeURIComponent(producer)}`, { token: api.admin });

  const longest = producerOf(MAX_PRODUCER_ID);
  const pinned = await api.call('PUT', URL_, { token: api.admin, body: { producer: longest, keys } });
  assert.equal(pinned.status, 201, pinned.text);
  const stored = await api.call('POST', '/v1/continuity/records', {
    token: api.operator,
    body: await signRecord(record(longest), key.privateKey),
  });
  assert.equal(stored.status, 201, stored.text);

  const before = await api.snapshot();
  const tooLong = producerOf(MAX_PRODUCER_ID + 1);
  const refusals: [string, Answer, string][] = [
    [
      'pin',
      await api.call('PUT', URL_, { token: api.admin, body: { producer: tooLong, keys } }),
      'input_invalid',
    ],
    ['unpin', await unpin(tooLong), 'input_invalid'],
    [
      'record',
      // Unsigned: signRecord reads the record first and refuses the producer itself.
      await api.call('POST', '/v1/continuity/records', { token: api.operator, body: record(tooLong) }),
      'observation_record_invalid',
    ],
  ];
  for (const [what, answer, code] of refusals) {
    assertProblem(answer, 400, code);
    const details = (answer.body['details'] ?? answer.body) as JsonObject;
    assert.equal(details['path'], '$.producer', `${what}: ${answer.text}`);
    assert.match(
      answer.body['detail'] as string,
      new RegExp(`1\\.\\.${MAX_PRODUCER_ID}|1 to ${MAX_PRODUCER_ID}`),
      what,
    );
  }
  await assert.rejects(signRecord(record(tooLong), key.privateKey), (e) => {
    assert.ok(isBatonError(e, 'observation_record_invalid'));
    assert.equal(e.details['path'], '$.producer');
    return true;
  });
  assert.equal(await api.snapshot(), before, 'no row and no evidence event was written');
  assert.deepEqual((await unpin(longest)).body, { producer: longest, status: 'removed' });
});
