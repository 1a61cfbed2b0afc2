/**
 * An issuer pin may only name algorithms Baton verifies Mission answers with (Ed25519, ECDSA:
 * `COMPACT_SIGNATURE_ALGORITHMS`). The pin format admits RS* and PS* (C-A27's asymmetric rule), but
 * a Status answer signed with them never verifies — shown here with a real RSA signature — so
 * registration refuses such a pin up front: `400 input_invalid` at `$.pin.algorithms[i]` over HTTP,
 * `config_invalid` from a config file, nothing stored.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompactSign, exportJWK, generateKeyPair } from 'jose';
import type { JsonObject } from '../../src/core/json.js';
import {
  localMissionKeys,
  readIssuerRegistration,
  statusRefusal,
  verifyStatusJws,
  STATUS_TYP,
} from '../../src/missions/index.js';
import { assertProblem } from '../server/helpers.js';
import { enginesUnderTest } from '../store/engines.js';
import { consumerWorld, STREAM_BEARER } from './consumer-world.js';

const engines = await enginesUnderTest();

for (const alg of ['RS256', 'PS256'] as const) {
  test(`${alg} in a pin's allowlist never verifies a Status answer signed with it`, async () => {
    const pair = await generateKeyPair(alg, { modulusLength: 2048 });
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'rsa-1', alg };
    const nowSec = Math.floor(Date.now() / 1000);
    const claims = { iss: 'https://as.example.com', aud: 'https://erp.example.com', iat: nowSec };
    const jws = await new CompactSign(Buffer.from(JSON.stringify({ ...claims, exp: nowSec + 60 })))
      .setProtectedHeader({ alg, typ: STATUS_TYP, kid: 'rsa-1' })
      .sign(pair.privateKey);
    const expect = {
      issuer: claims.iss,
      audience: claims.aud,
      clientId: 'c',
      nonce: 'n',
      missionId: 'm',
      algorithms: [alg],
    };
    await assert.rejects(verifyStatusJws(jws, localMissionKeys({ keys: [jwk] }), expect, Date.now()), (e) => {
      assert.deepEqual(statusRefusal(e), { step: 4, check: 'signature' });
      return true;
    });
  });
}

test('a registration naming RS*/PS* is refused at its algorithms member, in the caller’s code', () => {
  const pin = (algorithms: string[]): JsonObject => ({
    format: 'baton.mission-issuer/1',
    issuer: 'https://as.example.com',
    jwks_uri: 'https://as.example.com/jwks',
    endpoints: { status: 'https://as.example.com/status' },
    algorithms,
    client: { client_id: 'c', auth_method: 'private_key_jwt', key_ref: 'env:BATON_SECRET_K', alg: 'ES256' },
    audience: 'https://erp.example.com',
    bounds: { max_stale_seconds: 60 },
    stream: null,
  });
  for (const [algorithms, at] of [
    [['RS256'], 0],
    [['ES256', 'PS384'], 1],
    [['EdDSA', 'ES512', 'RS512'], 2],
  ] as const) {
    assert.throws(
      () => readIssuerRegistration({ pin: pin([...algorithms]) }),
      (e: { code?: string; message?: string; details?: { path?: string } }) =>
        e.code === 'input_invalid' &&
        e.details?.path === `$.pin.algorithms[${at}]` &&
        (e.message ?? '').includes(algorithms[at] as string) &&
        (e.message ?? '').includes('never verify'),
    );
  }
  assert.throws(() => readIssuerRegistration({ pin: pin(['PS256']) }, 'config_invalid', '$.issuers[3]'), {
    code: 'config_invalid',
    details: { path: '$.issuers[3].pin.algorithms[0]' },
  });
  for (const ok of [
    ['ES256', 'EdDSA'],
    ['Ed25519', 'ES384', 'ES512'],
  ])
    assert.deepEqual(readIssuerRegistration({ pin: pin(ok) }).pin.algorithms, ok);
});

for (const e of engines) {
  test(`[${e.name}] POST /v1/missions/issuers refuses a pin naming RS256: 400 input_invalid at its path, nothing stored`, async (t) => {
    const w = await consumerWorld(t, e);
    const body = {
      pin: { ...w.pin, algorithms: ['ES256', 'RS256'], stream: { delivery: 'urn:ietf:rfc:8935' } },
      pushBearer: STREAM_BEARER,
    };
    const refused = await w.call('POST', '/v1/missions/issuers', { token: w.admin, body });
    assertProblem(refused, 400, 'input_invalid');
    assert.equal((refused.body['details'] as JsonObject)['path'], '$.pin.algorithms[1]');
    assert.match(
      refused.body['detail'] as string,
      /^\$\.pin\.algorithms\[1\]: RS256 is not an algorithm Baton verifies/,
    );
    const listed = await w.call('GET', '/v1/missions/issuers', { token: w.operator });
    assert.deepEqual(listed.body['issuers'], [], 'nothing stored');
    assert.equal((await w.pinIssuer()).status, 201, 'the same pin without RS256 is pinned');
  });
}
