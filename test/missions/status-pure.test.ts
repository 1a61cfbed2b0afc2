/**
 * The pure A3.2 verifier with a local ES256 key and an injected clock: the draft's own example
 * (C-A15), the 30 s skew edges (A7.5), unrecognised states (MCO-01, A7.9), C-A11 audiences, strict
 * JSON, `crit`, nonces (MST-01) and the media type / body bound (A3.2 step 2).
 */
import assert from 'node:assert/strict';
import { KeyObject } from 'node:crypto';
import { test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { signJwsWithKey, type ForeignSigningKey } from '../../src/core/jose.js';
import {
  localMissionKeys,
  NonceBook,
  NONCE_TTL_MS,
  statusBody,
  statusReliance,
  verifyStatusJws,
  type MissionKeySource,
} from '../../src/missions/index.js';

const ISS = 'https://as.example.com';
const MISSION = 'msn_8RfX2Lqv9TqMv4z7sA2bN1k0YpEdHc9-';
const NONCE = 'nonce_K9pV4nT2sR7mB1xQ';
const IAT = 1797840000;
const EXPECT = {
  issuer: ISS,
  audience: 'https://erp.example.com',
  clientId: 'client_erp-recon-agent',
  nonce: NONCE,
  missionId: MISSION,
};

/** The status draft's worked example payload (A2.2), verbatim. */
function draftPayload(): Record<string, unknown> {
  return {
    iss: ISS,
    aud: 'https://erp.example.com',
    sub: 'client_erp-recon-agent',
    nonce: NONCE,
    iat: IAT,
    exp: 1797840060,
    mission: {
      id: MISSION,
      origin: ISS,
      authority_hash: 'sha-256:l3KvZ4mP5x0wQrR6tY2nD9bM7sX1cF8gH2vJ4kE5pNQ',
      state: 'active',
      expires_at: '2026-11-02T08:15:00Z',
      mission_expiry: '2026-12-31T23:59:59Z',
    },
    authorization_details: [
      {
        type: 'mission_resource_access',
        resource: 'https://erp.example.com',
        actions: ['invoices.read', 'journal-entries.write'],
      },
    ],
  };
}

const pair = await generateKeyPair('ES256', { extractable: true });
const signer: ForeignSigningKey = {
  privateKey: KeyObject.from(pair.privateKey),
  kid: 'sa-key-2026-q3',
  alg: 'ES256',
};
const keys: MissionKeySource = localMissionKeys({
  keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'sa-key-2026-q3' }],
});

const sign = (payload: unknown, typ = 'mission-status-response+jwt'): Promise<string> =>
  signJwsWithKey(Buffer.from(JSON.stringify(payload)), signer, typ);

function withMission(
  change: Record<string, unknown>,
  top: Record<string, unknown> = {},
): Record<string, unknown> {
  const p = draftPayload();
  return { ...p, ...top, mission: { ...(p['mission'] as object), ...change } };
}

const rejectsAt = (jws: string, nowMs: number, step: number, check: string, expect = EXPECT) =>
  assert.rejects(verifyStatusJws(jws, keys, expect, nowMs), {
    code: 'mission_status_invalid',
    details: { step, check },
  });

test('C-A15: the draft example at its own iat verifies, but expires_at precedes iat ⇒ no reliance', async () => {
  const status = await verifyStatusJws(await sign(draftPayload()), keys, EXPECT, IAT * 1000);
  assert.equal(status.state, 'active');
  assert.equal(status.expiresAt, '2026-11-02T08:15:00Z');
  assert.equal(status.freshUntil, '2026-11-02T08:15:30.000Z');
  const reliance = statusReliance(status, IAT * 1000);
  assert.deepEqual([reliance.relied, reliance.reason], [false, 'status_expired']);
});

test('A7.5: exp now−29 s accepted, now−31 s refused; iat now+31 s refused', async () => {
  const jws = await sign(draftPayload());
  await verifyStatusJws(jws, keys, EXPECT, (1797840060 + 29) * 1000);
  await rejectsAt(jws, (1797840060 + 31) * 1000, 6, 'exp');
  await rejectsAt(jws, (IAT - 31) * 1000, 6, 'iat');
  await verifyStatusJws(jws, keys, EXPECT, (IAT - 29) * 1000);
});

test('A3.2 step 6: exp not after iat, or a non-integer time, is refused', async () => {
  await rejectsAt(await sign({ ...draftPayload(), exp: IAT }), IAT * 1000, 6, 'exp');
  await rejectsAt(await sign({ ...draftPayload(), iat: IAT + 0.5 }), IAT * 1000, 6, 'iat');
  await rejectsAt(await sign({ ...draftPayload(), exp: undefined }), IAT * 1000, 6, 'exp');
});

test('MCO-01/A7.9: frozen, ACTIVE and "" verify as received and are never relied on', async () => {
  for (const state of ['frozen', 'ACTIVE', '']) {
    const payload = withMission({ state, expires_at: '2026-12-21T08:05:00Z' });
    const status = await verifyStatusJws(await sign(payload), keys, EXPECT, IAT * 1000);
    assert.equal(status.state, state);
    assert.equal(statusReliance(status, IAT * 1000).relied, false, state);
  }
  await rejectsAt(await sign(withMission({ state: 1 })), IAT * 1000, 7, 'state');
});

test('MST-05: active relied on until expires_at + 30 s, not after; mission_expiry passed ⇒ expired', async () => {
  const status = await verifyStatusJws(
    await sign(withMission({ expires_at: '2026-12-21T08:01:00Z' })),
    keys,
    EXPECT,
    IAT * 1000,
  );
  const t = Date.parse('2026-12-21T08:01:00Z');
  assert.equal(statusReliance(status, t + 29_000).relied, true);
  assert.equal(statusReliance(status, t + 31_000).relied, false);
  const ending = await verifyStatusJws(
    await sign(withMission({ expires_at: '2026-12-21T08:01:00Z', mission_expiry: '2026-12-21T08:00:30Z' })),
    keys,
    EXPECT,
    IAT * 1000,
  );
  assert.equal(ending.freshUntil, '2026-12-21T08:00:30.000Z');
  assert.equal(statusReliance(ending, Date.parse('2026-12-21T08:00:31Z')).reason, 'mission_expired');
});

test('C-A11: aud as a one-element array is accepted, two elements refused', async () => {
  await verifyStatusJws(
    await sign({ ...draftPayload(), aud: ['https://erp.example.com'] }),
    keys,
    EXPECT,
    IAT * 1000,
  );
  await rejectsAt(
    await sign({ ...draftPayload(), aud: ['https://erp.example.com', 'https://other'] }),
    IAT * 1000,
    5,
    'aud',
  );
});

test('MCO-03: an authority_hash with an unknown prefix is refused', async () => {
  for (const hash of [
    'sha-512:l3KvZ4mP5x0wQrR6tY2nD9bM7sX1cF8gH2vJ4kE5pNQ',
    'SHA-256:l3KvZ4mP5x0wQrR6tY2nD9bM7sX1cF8gH2vJ4kE5pNQ',
  ]) {
    await rejectsAt(await sign(withMission({ authority_hash: hash })), IAT * 1000, 7, 'authority_hash');
  }
});

test('MCO-02 A3.2 step 7: an answer without mission.authority_hash is refused (never applied as "no hash")', async () => {
  await rejectsAt(await sign(withMission({ authority_hash: undefined })), IAT * 1000, 7, 'authority_hash');
});

test('MST-03 A7#4 A3.2 steps 3/4: typs at+jwt, secevent+jwt, JWT refused; crit refused; a duplicate payload member refused', async () => {
  for (const typ of ['at+jwt', 'secevent+jwt', 'JWT'])
    await rejectsAt(await sign(draftPayload(), typ), IAT * 1000, 3, 'typ');
  const header = Buffer.from(
    JSON.stringify({
      alg: 'ES256',
      kid: 'sa-key-2026-q3',
      typ: 'mission-status-response+jwt',
      crit: ['exp'],
      exp: 1,
    }),
  ).toString('base64url');
  const good = await sign(draftPayload());
  await rejectsAt(`${header}.${good.split('.')[1]!}.${good.split('.')[2]!}`, IAT * 1000, 3, 'crit');
  const dup = Buffer.from(JSON.stringify(draftPayload()).replace('"iss":', '"iss":"x","iss":'));
  await rejectsAt(await signJwsWithKey(dup, signer, 'mission-status-response+jwt'), IAT * 1000, 4, 'payload');
});

test('A3.2 step 2: only application/mission-status-response+jwt and a compact JWS within 64 KiB', async () => {
  const jws = await sign(draftPayload());
  assert.equal(statusBody('application/mission-status-response+jwt; charset=utf-8', jws), jws);
  for (const media of ['application/json', 'application/jwt', undefined]) {
    assert.throws(() => statusBody(media, jws), { details: { step: 2, check: 'media_type' } });
  }
  assert.throws(() => statusBody('application/mission-status-response+jwt', '{"state":"active"}'), {
    details: { step: 2, check: 'body' },
  });
  assert.throws(() => statusBody('application/mission-status-response+jwt', `${jws}.x.y`), {
    details: { step: 2, check: 'body' },
  });
  assert.throws(() => statusBody('application/mission-status-response+jwt', 'a'.repeat(70_000)), {
    details: { step: 2, check: 'body' },
  });
});

test('MST-01: nonces are 16 random bytes, bound to (mission, audience), single use, live 120 s', () => {
  const book = new NonceBook();
  const nonce = book.issue(MISSION, 'aud', 0);
  assert.equal(Buffer.from(nonce, 'base64url').length, 16);
  assert.equal(book.take(nonce, MISSION, 'other-aud', 1), false, 'another audience');
  const again = book.issue(MISSION, 'aud', 0);
  assert.equal(book.take(again, MISSION, 'aud', 1), true);
  assert.equal(book.take(again, MISSION, 'aud', 2), false, 'single use');
  const late = book.issue(MISSION, 'aud', 0);
  assert.equal(book.take(late, MISSION, 'aud', NONCE_TTL_MS), false, 'expired after 120 s');
});

test('core checkCompactSignature: r||s only, the key must fit alg, non-canonical base64url refused', async () => {
  const { createPublicKey, generateKeyPairSync, sign: rawSign } = await import('node:crypto');
  const { checkCompactSignature } = await import('../../src/core/jose.js');
  const jws = await sign(draftPayload());
  const pub = createPublicKey(signer.privateKey);
  assert.equal(await checkCompactSignature(jws, pub, 'ES256'), true);
  const input = jws.slice(0, jws.lastIndexOf('.'));
  const der = rawSign('sha256', Buffer.from(input), signer.privateKey).toString('base64url');
  assert.equal(
    await checkCompactSignature(`${input}.${der}`, pub, 'ES256'),
    false,
    'DER-encoded ECDSA refused',
  );
  assert.equal(await checkCompactSignature(jws, pub, 'ES384'), false, 'P-256 key under ES384');
  assert.equal(await checkCompactSignature(jws, generateKeyPairSync('ed25519').publicKey, 'EdDSA'), false);
  assert.equal(
    await checkCompactSignature(jws, signer.privateKey, 'ES256'),
    false,
    'a private key is not a verification key',
  );
  assert.equal(await checkCompactSignature(`${jws}=`, pub, 'ES256'), false);
});
