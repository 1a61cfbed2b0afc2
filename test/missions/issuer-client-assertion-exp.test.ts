/**
 * MST-02, C-A13 at the reference issuer: a `private_key_jwt` client assertion lives at most
 * 5 minutes. `maxTokenAge` bounds only `iat`, so an assertion with a fresh `iat` and an `exp` a
 * year ahead must be refused on its `exp` (401, and its jti is not kept for a year). Real issuer on
 * loopback, real ES256 assertions over HTTP.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { signJwsWithKey } from '../../src/core/jose.js';
import { CLIENT_ASSERTION_TYPE } from '../../src/missions/index.js';
import { AUDIENCE, CLIENT_ID, startWorld, type World } from './issuer-support.js';

let world: World;
let mission: string;

before(async () => {
  world = await startWorld();
  mission = await world.createMission();
});
after(() => world.close());

async function statusWith(lifetimeSec: number): Promise<number> {
  const iat = Math.floor(Date.now() / 1000);
  const claims = {
    iss: CLIENT_ID,
    sub: CLIENT_ID,
    aud: world.pin.issuer,
    jti: randomBytes(16).toString('base64url'),
    iat,
    exp: iat + lifetimeSec,
  };
  const assertion = await signJwsWithKey(Buffer.from(JSON.stringify(claims)), world.key, 'JWT');
  const body = new URLSearchParams({
    mission,
    audience: AUDIENCE,
    nonce: randomBytes(12).toString('base64url'),
    client_assertion_type: CLIENT_ASSERTION_TYPE,
    client_assertion: assertion,
  });
  const response = await fetch(`${world.issuer.url}/as/mission/status`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
    signal: AbortSignal.timeout(10_000),
  });
  await response.arrayBuffer();
  return response.status;
}

test('MST-02: an assertion whose exp is 5 minutes ahead is accepted (the bound itself)', async () => {
  assert.equal(await statusWith(300), 200);
});

test('MST-02: an assertion whose exp is a year ahead is refused 401, though its iat is fresh', async () => {
  assert.equal(await statusWith(365 * 86_400), 401);
  assert.equal(await statusWith(300 + 30 + 60), 401, 'beyond 5 minutes plus the skew');
});
