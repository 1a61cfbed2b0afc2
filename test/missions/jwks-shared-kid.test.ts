/**
 * RFC 7517 §4.5 allows one `kid` for keys of different `kty`. A JWKS on loopback lists an Ed25519
 * key and then the P-256 key that signs the Status answer, both `kid: "shared"`. jose verifies
 * with the P-256 key (selected by kid and alg); the evidence thumbprint and the archived key must
 * name that same key, so the archived answer re-verifies after rotation (MST-06 "Signing-Key
 * Retention"). Real HTTP JWKS server, real ES256 signature, no mocks.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import {
  InMemoryKeyArchive,
  missionAnchor,
  remoteMissionKeys,
  reverifyArchivedStatus,
  STATUS_TYP,
  verifyStatusJws,
} from '../../src/missions/index.js';

const AUDIENCE = 'https://erp.example.com';
const CLIENT_ID = 'client_shared-kid';
const MISSION = 'mission_shared-kid';
let server: Server;
let origin: string;
let signer: CryptoKey;
let ecJwk: JWK;
let jwks: { keys: JWK[] };

before(async () => {
  const ed = await generateKeyPair('EdDSA', { extractable: true });
  const ec = await generateKeyPair('ES256', { extractable: true });
  signer = ec.privateKey;
  ecJwk = { ...(await exportJWK(ec.publicKey)), kid: 'shared', use: 'sig' };
  // The Ed25519 key comes FIRST: a lookup by kid alone records it.
  jwks = { keys: [{ ...(await exportJWK(ed.publicKey)), kid: 'shared', use: 'sig' }, ecJwk] };
  server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

test('MST-06: the key recorded and archived is the one that verified, not the first with that kid', async () => {
  const now = Date.now();
  const iat = Math.floor(now / 1000);
  const jws = await new SignJWT({
    iss: origin,
    aud: AUDIENCE,
    sub: CLIENT_ID,
    nonce: 'nonce-shared-kid',
    iat,
    exp: iat + 60,
    mission: {
      id: MISSION,
      origin,
      state: 'active',
      expires_at: new Date((iat + 60) * 1000).toISOString().replace('.000Z', 'Z'),
      authority_hash: missionAnchor('authority', origin, []),
    },
  })
    .setProtectedHeader({ alg: 'ES256', kid: 'shared', typ: STATUS_TYP })
    .sign(signer);
  const archive = new InMemoryKeyArchive();
  const keys = remoteMissionKeys({ origin, jwksUri: `${origin}/jwks`, archive, cooldownMs: 0 });
  const status = await verifyStatusJws(
    jws,
    keys,
    {
      issuer: origin,
      audience: AUDIENCE,
      clientId: CLIENT_ID,
      nonce: 'nonce-shared-kid',
      missionId: MISSION,
    },
    now,
  );
  const signing = await calculateJwkThumbprint(ecJwk, 'sha256');
  assert.equal(status.kid, 'shared');
  assert.equal(status.jwkThumbprint, signing, 'evidence names the P-256 key that verified');
  const archived = await archive.getKey(origin, 'shared');
  assert.equal(archived?.thumbprint, signing);
  assert.equal(archived?.jwk.kty, 'EC');
  // After rotation the JWKS lists neither key: the archived one alone re-verifies the answer.
  jwks = { keys: [] };
  await reverifyArchivedStatus(status, archive);
});
