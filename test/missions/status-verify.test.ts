/**
 * Mission Status consumption against the real reference issuer on loopback, with real ES256
 * signatures: every A3.2 check failing on its own (MST-03, MST-04, C-A10), the error table
 * (A2.2: 401/404/429/503 are unknown, never active), reliance (MST-05, C-A15) and key rotation with
 * archived answers re-verifying (MST-06).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { systemClock } from '../../src/core/clock.js';
import {
  MissionStatusClient,
  reverifyArchivedStatus,
  statusReliance,
  verifyStatusJws,
  type StatusFetchResult,
  type VerifiedMissionStatus,
} from '../../src/missions/index.js';
import { missionAnchor } from '../../src/missions/index.js';
import { AUTHORITY_SET, startWorld, type World } from './issuer-support.js';

let world: World;
let mission: string;

before(async () => {
  world = await startWorld();
  mission = await world.createMission();
});
after(() => world.close());

async function withFault(fault: string, client = world.client): Promise<StatusFetchResult> {
  const armed = await world.admin('/admin/faults', { status: [fault] });
  assert.equal(armed.status, 200, JSON.stringify(armed.body));
  return client.check(mission);
}

function verified(result: StatusFetchResult): VerifiedMissionStatus {
  assert.equal(result.kind, 'verified', JSON.stringify(result));
  return (result as { status: VerifiedMissionStatus }).status;
}

function refusedAt(result: StatusFetchResult, step: number, check: string): void {
  assert.equal(result.kind, 'unknown', 'a refused answer is unknown, never active');
  assert.equal(result.kind === 'unknown' && result.reason, 'refused');
  assert.deepEqual(result.kind === 'unknown' && result.refusal, { step, check });
}

test('MST-01/MST-04: an active mission verifies with every binding and is relied on (MCO-01)', async () => {
  const status = verified(await world.client.check(mission));
  assert.equal(status.state, 'active');
  assert.equal(status.origin, world.pin.issuer);
  assert.equal(status.missionId, mission);
  assert.equal(status.authorityHash, missionAnchor('authority', world.pin.issuer, AUTHORITY_SET));
  assert.match(status.jwsDigest, /^sha-256:[A-Za-z0-9_-]{43}$/);
  assert.equal(status.kid, world.issuer.state.keys.current.kid);
  assert.equal(status.jwkThumbprint, world.issuer.state.keys.current.thumbprint);
  const reliance = statusReliance(status, Date.now(), status.authorityHash);
  assert.deepEqual([reliance.relied, reliance.reason], [true, 'mission_active']);
  // MST-05: active gets expires_at + 30 s, capped by mission_expiry and by the pin's
  // max_stale_seconds after Baton checked it (MSG-03).
  assert.equal(world.pin.bounds.max_stale_seconds, 60);
  const pinBound = Date.parse(status.checkedAt) + 60 * 1000;
  assert.equal(Date.parse(status.freshUntil), Math.min(Date.parse(status.expiresAt) + 30_000, pinBound));
});

test('MSG-03: the pin of an issuer advertising a 10 s bound caps reliance at checkedAt + 10 s', async (t) => {
  const tight = await startWorld({ maxStaleSeconds: 10 });
  t.after(() => tight.close());
  assert.equal(tight.pin.bounds.max_stale_seconds, 10);
  const status = verified(await tight.client.check(await tight.createMission()));
  assert.ok(
    Date.parse(status.expiresAt) + 30_000 > Date.parse(status.checkedAt) + 10_000,
    'the issuer says longer',
  );
  assert.equal(Date.parse(status.freshUntil), Date.parse(status.checkedAt) + 10_000);
});

test('MSG-03: a pin with no advertised bound (max_stale_seconds null) does not make every answer stale', async (t) => {
  const silent = await startWorld({ maxStaleSeconds: null });
  t.after(() => silent.close());
  assert.equal(silent.pin.bounds.max_stale_seconds, null);
  const status = verified(await silent.client.check(await silent.createMission()));
  assert.equal(Date.parse(status.freshUntil), Date.parse(status.expiresAt) + 30_000);
  assert.ok(Date.parse(status.freshUntil) > Date.parse(status.checkedAt), 'relied on after arrival');
});

test('MSG-03: an issuer advertising 0 (no staleness) is not read as advertising nothing', async (t) => {
  const strict = await startWorld({ maxStaleSeconds: 0 });
  t.after(() => strict.close());
  assert.equal(strict.pin.bounds.max_stale_seconds, 0);
  const status = verified(await strict.client.check(await strict.createMission()));
  // Relied on no later than the check that fetched it: every later use needs a fresh answer.
  assert.equal(status.freshUntil, status.checkedAt);
  const reliance = statusReliance(status, Date.parse(status.checkedAt) + 1, status.authorityHash);
  assert.deepEqual([reliance.relied, reliance.reason], [false, 'status_expired']);
});

const HEADER_AND_CLAIM_FAULTS: ReadonlyArray<[string, number, string, string]> = [
  ['alg_none', 3, 'alg', 'MST-03 alg none refused'],
  ['hs256', 3, 'alg', 'A7.3 HS256 keyed with the JWK bytes refused'],
  ['wrong_typ', 3, 'typ', 'MST-03 A7#4 typ JWT refused'],
  ['no_typ', 3, 'typ', 'MST-03 A7#4 absent typ refused'],
  ['wrong_kid', 4, 'kid', 'MST-04 unknown kid refused after one refetch'],
  ['bad_signature', 4, 'signature', 'MST-04 signature refused'],
  ['wrong_iss', 5, 'iss', 'MST-04 wrong iss refused'],
  ['wrong_aud', 5, 'aud', 'MST-04 wrong aud refused'],
  ['wrong_sub', 5, 'sub', 'MST-04 wrong sub refused'],
  ['wrong_nonce', 5, 'nonce', 'MST-01 another nonce refused'],
  ['expired', 6, 'exp', 'MST-04 expired answer refused'],
  ['future_iat', 6, 'iat', 'MST-04 iat in the future refused'],
  ['other_mission', 7, 'mission_id', "C-A10 another mission's answer refused"],
  ['origin_mismatch', 7, 'mission_origin', 'C-A10 mission.origin other than iss refused'],
];

for (const [fault, step, check, name] of HEADER_AND_CLAIM_FAULTS) {
  test(`${name} (step ${step}, ${check})`, async () => {
    refusedAt(await withFault(fault), step, check);
  });
}

test('MST-03/A7.22: an unsigned 200 and an RFC 9701 introspection JWT are refused at the media type', async () => {
  refusedAt(await withFault('unsigned_200'), 2, 'media_type');
  refusedAt(await withFault('introspection_jwt'), 2, 'media_type');
});

const ERROR_TABLE: ReadonlyArray<[string, number, string]> = [
  ['http_401', 401, 'unauthorized'],
  ['http_404', 404, 'not_found'],
  ['http_429', 429, 'rate_limited'],
  ['http_503', 503, 'unavailable'],
];

for (const [fault, status, reason] of ERROR_TABLE) {
  test(`A2.2/C-A14: HTTP ${status} is unknown (${reason}), never active and never revoked`, async () => {
    // A 429 holds its client's later checks (A7#13, status-client-backoff.test.ts): its own client.
    const client =
      status === 429
        ? new MissionStatusClient({
            pin: world.pin,
            clientKey: world.key,
            keys: world.keys,
            clock: systemClock,
          })
        : world.client;
    const result = await withFault(fault, client);
    assert.equal(result.kind, 'unknown');
    assert.equal(result.kind === 'unknown' && result.reason, reason);
    assert.equal(result.kind === 'unknown' && result.httpStatus, status);
    if (status === 429) assert.equal(result.kind === 'unknown' && result.retryAfterSec, 7);
  });
}

test('C-A14: an unknown mission id is not_found (unknown), not revoked', async () => {
  const result = await world.client.check('msn_doesnotexist0000000000000000000');
  assert.deepEqual([result.kind, result.kind === 'unknown' && result.reason], ['unknown', 'not_found']);
});

test('C-A15: past expires_at ⇒ verified, no reliance', async () => {
  const status = verified(await withFault('past_expires_at'));
  assert.equal(status.state, 'active');
  const reliance = statusReliance(status, Date.now());
  assert.deepEqual([reliance.relied, reliance.reason], [false, 'status_expired']);
});

test('A3.2 step 7: a binding authority_hash that differs ⇒ not relied on (authority_hash_mismatch)', async () => {
  const status = verified(await world.client.check(mission));
  const other = missionAnchor('authority', world.pin.issuer, [AUTHORITY_SET[0]!]);
  const reliance = statusReliance(status, Date.now(), other);
  assert.deepEqual([reliance.relied, reliance.reason], [false, 'authority_hash_mismatch']);
});

test('MST-05: suspended is verified, reported as received, and never relied on (no skew)', async () => {
  const id = await world.createMission();
  assert.equal((await world.admin(`/admin/missions/${id}/suspend`, {})).status, 200);
  const status = verified(await world.client.check(id));
  assert.equal(status.state, 'suspended');
  assert.equal(status.freshUntil, new Date(Date.parse(status.expiresAt)).toISOString());
  const reliance = statusReliance(status, Date.now());
  assert.deepEqual([reliance.relied, reliance.reason], [false, 'mission_not_active']);
});

test('MST-06/A7.7: after rotation the new key verifies; retired from jwks_uri, archived answers still re-verify', async () => {
  const before = verified(await world.client.check(mission));
  const old = world.issuer.state.keys.current.kid;
  const rotated = await world.admin('/admin/keys/rotate', { retire_previous: true });
  assert.equal(rotated.status, 200);
  const jwks = (await (await fetch(world.pin.jwks_uri)).json()) as { keys: Array<{ kid: string }> };
  assert.ok(!jwks.keys.some((k) => k.kid === old), 'a retired key is not served at jwks_uri');
  const archive = (await world.admin('/admin/keys/archive')).body as { keys: Array<{ kid: string }> };
  assert.ok(
    archive.keys.some((k) => k.kid === old),
    'but it is kept in the audit archive',
  );
  const after = verified(await world.client.check(mission));
  assert.equal(after.kid, rotated.body['kid']);
  assert.notEqual(after.kid, before.kid);
  await reverifyArchivedStatus(before, world.archive);
  await reverifyArchivedStatus(after, world.archive);
  const tampered = { ...before, jws: `${before.jws.slice(0, -4)}AAAA` };
  await assert.rejects(reverifyArchivedStatus(tampered, world.archive), { code: 'mission_status_invalid' });
});

test('A7.6: a replayed earlier answer (its old nonce) is refused at the nonce check', async () => {
  const first = verified(await world.client.check(mission));
  const expect = {
    issuer: world.pin.issuer,
    audience: world.pin.audience,
    clientId: world.pin.client.client_id,
    missionId: mission,
  };
  await assert.rejects(
    verifyStatusJws(first.jws, world.keys, { ...expect, nonce: 'a-later-nonce' }, Date.now()),
    {
      code: 'mission_status_invalid',
      details: { step: 5, check: 'nonce' },
    },
  );
});

test('C-A14: an unreachable status endpoint or JWKS is unknown (unreachable), never active', async () => {
  const { MissionStatusClient, remoteMissionKeys } = await import('../../src/missions/index.js');
  const { systemClock } = await import('../../src/core/clock.js');
  const dead = 'http://127.0.0.1:9/';
  const noJwks = new MissionStatusClient({
    pin: world.pin,
    clientKey: world.key,
    keys: remoteMissionKeys({ origin: world.pin.issuer, jwksUri: `${dead}jwks`, timeoutMs: 2000 }),
    clock: systemClock,
  });
  const a = await noJwks.check(mission);
  assert.deepEqual([a.kind, a.kind === 'unknown' && a.reason], ['unknown', 'unreachable']);
  const noStatus = new MissionStatusClient({
    pin: { ...world.pin, endpoints: { ...world.pin.endpoints, status: `${dead}status` } },
    clientKey: world.key,
    keys: world.keys,
    clock: systemClock,
    timeoutMs: 2000,
  });
  const b = await noStatus.check(mission);
  assert.deepEqual([b.kind, b.kind === 'unknown' && b.reason], ['unknown', 'unreachable']);
});
