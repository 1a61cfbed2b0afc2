/**
 * A validly signed Status answer whose `mission.expires_at` is the last second RFC 3339 can write
 * (9999-12-31T23:59:59Z) and that carries no `mission_expiry` (OPTIONAL): its `freshUntil`
 * (expires_at + 30 s for `active`, MST-05) must still be an RFC 3339 date-time every reader takes
 * back — the verifier, `statusReliance`, the harness view (`applyStatus`) and `baton missions
 * verify-status` — never `+010000-…` and a `time_invalid` 400 blaming the caller. A real JWKS
 * server on loopback, a real ES256 signature.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { main } from '../../src/cli/baton.js';
import type { CliIo } from '../../src/cli/io.js';
import { formatRfc3339, isRfc3339DateTime, MAX_RFC3339_MS } from '../../src/core/time.js';
import {
  missionAnchor,
  remoteMissionKeys,
  STATUS_TYP,
  statusReliance,
  verifyStatusJws,
  type MissionKeySource,
} from '../../src/missions/index.js';
import { applyStatus, emptyView } from '../../src/missions/view.js';

const LAST = '9999-12-31T23:59:59Z';
const AUDIENCE = 'https://erp.example.com';
const CLIENT_ID = 'client_far-future';
const MISSION = 'mission_far-future';
const NONCE = 'nonce-far-future';
let server: Server;
let origin: string;
let signer: CryptoKey;
let jwk: JWK;
let keys: MissionKeySource;
let dir: string;

before(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  signer = pair.privateKey;
  jwk = { ...(await exportJWK(pair.publicKey)), kid: 'far-1', alg: 'ES256', use: 'sig' };
  server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  keys = remoteMissionKeys({ origin, jwksUri: `${origin}/jwks`, cooldownMs: 0 });
  dir = mkdtempSync(join(tmpdir(), 'baton-msn-far-'));
});
after(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

/** An `active` answer signed now, `expires_at` the last RFC 3339 second, no `mission_expiry`. */
function signed(extra: Record<string, string> = {}): Promise<string> {
  const iat = Math.floor(Date.now() / 1000);
  return new SignJWT({
    iss: origin,
    aud: AUDIENCE,
    sub: CLIENT_ID,
    nonce: NONCE,
    iat,
    exp: iat + 60,
    mission: {
      id: MISSION,
      origin,
      state: 'active',
      expires_at: LAST,
      authority_hash: missionAnchor('authority', origin, []),
      ...extra,
    },
  })
    .setProtectedHeader({ alg: 'ES256', kid: 'far-1', typ: STATUS_TYP })
    .sign(signer);
}

test('formatRfc3339 refuses an instant past year 9999 instead of writing an unreadable date', () => {
  assert.equal(formatRfc3339(MAX_RFC3339_MS), '9999-12-31T23:59:59.999Z');
  assert.throws(() => formatRfc3339(MAX_RFC3339_MS + 1), { code: 'time_invalid' });
});

test('MST-05: expires_at 9999-12-31T23:59:59Z verifies, and freshUntil reads back everywhere', async () => {
  const expect = {
    issuer: origin,
    audience: AUDIENCE,
    clientId: CLIENT_ID,
    nonce: NONCE,
    missionId: MISSION,
  };
  const status = await verifyStatusJws(await signed(), keys, expect, Date.now());
  assert.equal(status.expiresAt, LAST);
  assert.equal(status.missionExpiry, null);
  // Nothing caps it below expires_at + 30 s but the last instant RFC 3339 can write.
  assert.ok(isRfc3339DateTime(status.freshUntil), status.freshUntil);
  assert.equal(Date.parse(status.freshUntil), MAX_RFC3339_MS);
  const reliance = statusReliance(status, Date.now(), status.authorityHash);
  assert.deepEqual([reliance.relied, reliance.reason], [true, 'mission_active']);
  const change = applyStatus(emptyView(origin, MISSION, Date.now()), status, Date.now());
  assert.equal(change.applied, true);
  assert.equal(change.applied && change.view.freshUntil, MAX_RFC3339_MS);
});

test('A3.2 step 7: an RFC 3339 instant past 9999 UTC (a negative offset) is refused as invalid, not carried on', async () => {
  const expect = {
    issuer: origin,
    audience: AUDIENCE,
    clientId: CLIENT_ID,
    nonce: NONCE,
    missionId: MISSION,
  };
  const late = '9999-12-31T23:59:59-01:00';
  await assert.rejects(verifyStatusJws(await signed({ mission_expiry: late }), keys, expect, Date.now()), {
    code: 'mission_status_invalid',
    details: { step: 7, check: 'mission_expiry' },
  });
  await assert.rejects(verifyStatusJws(await signed({ expires_at: late }), keys, expect, Date.now()), {
    code: 'mission_status_invalid',
    details: { step: 7, check: 'expires_at' },
  });
});

test('verify-status exits 0 (not 2 time_invalid) for a correctly signed far-future answer', async () => {
  const file = join(dir, 'far.jwt');
  writeFileSync(file, `${await signed()}\n`);
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [jwk] }));
  const io: CliIo & { out: string; err: string } = {
    out: '',
    err: '',
    stdout: (s: string) => void (io.out += s),
    stderr: (s: string) => void (io.err += s),
    readStdin: () => Promise.resolve(Buffer.alloc(0)),
  };
  const argv = [
    'missions',
    'verify-status',
    file,
    '--jwks',
    join(dir, 'jwks.json'),
    '--iss',
    origin,
    '--aud',
    AUDIENCE,
    '--sub',
    CLIENT_ID,
    `--nonce=${NONCE}`,
    '--mission',
    MISSION,
    '--json',
  ];
  assert.equal(await main(argv, io), 0, io.err);
  const out = JSON.parse(io.out) as { reliance: { relied: boolean; freshUntil: string } };
  assert.equal(out.reliance.relied, true);
  assert.equal(out.reliance.freshUntil, '9999-12-31T23:59:59.999Z');
});
