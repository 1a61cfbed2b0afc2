/**
 * The pure lifecycle SET verifier (MSG-01, MSG-03, A3.4 steps 2–4) with a local ES256 key: the
 * signals draft's two examples (the second has no `exp`, C-A16), each envelope and event check with
 * its RFC 8935 error code, and the jti replay port (C-A18).
 */
import assert from 'node:assert/strict';
import { KeyObject } from 'node:crypto';
import { test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { signJwsWithKey, type ForeignSigningKey } from '../../src/core/jose.js';
import {
  InMemorySetReplay,
  LIFECYCLE_EVENT,
  localMissionKeys,
  parseAuthenticatedPush,
  parsePushedSet,
  SET_MEDIA_TYPE,
  verifyMissionSet,
} from '../../src/missions/index.js';
import { DEFAULT_BOUNDS, signalLiveUntil } from '../../src/missions/view.js';

const ISS = 'https://as.example.com';
const AUD = 'https://erp.example.com';
const EXPECT = { issuer: ISS, audience: AUD };
const IAT = 1797843200;

function example1(
  event: Record<string, unknown> = {},
  top: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    iss: ISS,
    aud: AUD,
    iat: IAT,
    exp: 1797843500,
    jti: 'set_9Kp2vN7sR1tY8mZ3qX5b',
    events: {
      [LIFECYCLE_EVENT]: {
        mission_id: 'msn_8RfX2Lqv9TqMv4z7sA2bN1k0YpEdHc9-',
        mission_origin: ISS,
        prior_state: 'active',
        state: 'revoked',
        version: 2,
        committed_at: '2026-11-02T09:06:40Z',
        reason: 'Quarterly reconcile completed early',
        ...event,
      },
    },
    ...top,
  };
}

const pair = await generateKeyPair('ES256', { extractable: true });
const signer: ForeignSigningKey = {
  privateKey: KeyObject.from(pair.privateKey),
  kid: 'sa-key-2026-q3',
  alg: 'ES256',
};
const other = await generateKeyPair('ES256', { extractable: true });
const otherSigner: ForeignSigningKey = {
  privateKey: KeyObject.from(other.privateKey),
  kid: 'sa-key-2026-q3',
  alg: 'ES256',
};
const keys = localMissionKeys({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'sa-key-2026-q3' }] });

const sign = (payload: unknown, typ = 'secevent+jwt', by = signer): Promise<string> =>
  signJwsWithKey(Buffer.from(JSON.stringify(payload)), by, typ);

function withoutPrior(): Record<string, unknown> {
  const p = example1();
  const event = (p['events'] as Record<string, Record<string, unknown>>)[LIFECYCLE_EVENT]!;
  delete event['prior_state'];
  return p;
}

async function refused(set: string, err: string, check: string): Promise<void> {
  await assert.rejects(verifyMissionSet(set, keys, EXPECT, IAT * 1000), {
    code: 'mission_signal_invalid',
    details: { err, check },
  });
}

test('MSG-01: the signals draft example 1 verifies at its iat and reads as a lifecycle signal', async () => {
  const set = await sign(example1());
  const verified = await verifyMissionSet(set, keys, EXPECT, IAT * 1000);
  assert.equal(verified.kind, 'lifecycle');
  const { signal } = verified;
  assert.deepEqual(
    [signal.state, signal.priorState, signal.version, signal.committedAt, signal.jti, signal.origin],
    ['revoked', 'active', 2, '2026-11-02T09:06:40Z', 'set_9Kp2vN7sR1tY8mZ3qX5b', ISS],
  );
  assert.match(signal.digest, /^sha-256:[A-Za-z0-9_-]{43}$/);
});

test('MSG-03: a signal is relied on for the pin bound (or Baton’s, if shorter) from its iat, not its receipt', async () => {
  const set = await sign(example1({ state: 'active' }));
  const pinned = await verifyMissionSet(set, keys, { ...EXPECT, maxStaleSeconds: 10 }, IAT * 1000);
  assert.equal(pinned.kind, 'lifecycle');
  const { signal } = pinned;
  assert.equal(signal.relianceSeconds, 10);
  // Received 4 minutes after its iat (still within exp): already past its 10 s of reliance.
  const late = IAT * 1000 + 240_000;
  assert.equal(signalLiveUntil(signal, late, DEFAULT_BOUNDS), IAT * 1000 + 10_000);
  // A pin more generous than Baton's own bound does not widen it.
  assert.equal(
    signalLiveUntil({ ...signal, relianceSeconds: 3600 }, late, DEFAULT_BOUNDS),
    IAT * 1000 + 60_000,
  );
  // An issuer clock ahead of Baton's: counted from Baton's now, never from the future.
  assert.equal(signalLiveUntil(signal, IAT * 1000 - 5_000, DEFAULT_BOUNDS), IAT * 1000 + 5_000);
  const unpinned = await verifyMissionSet(set, keys, EXPECT, IAT * 1000);
  assert.equal(unpinned.kind === 'lifecycle' && unpinned.signal.relianceSeconds, undefined);
});

test('C-A16: example 2 (no exp) is refused invalid_request; so is an expired SET and a future iat', async () => {
  await refused(
    await sign(example1({ version: 7, reason: 'user_cancelled' }, { exp: undefined })),
    'invalid_request',
    'exp',
  );
  await assert.rejects(verifyMissionSet(await sign(example1()), keys, EXPECT, (1797843500 + 31) * 1000), {
    details: { err: 'invalid_request', check: 'exp' },
  });
  await assert.rejects(verifyMissionSet(await sign(example1()), keys, EXPECT, (IAT - 31) * 1000), {
    details: { err: 'invalid_request', check: 'iat' },
  });
});

test('A7.11: wrong signature ⇒ invalid_key, other issuer ⇒ invalid_issuer, other audience ⇒ invalid_audience', async () => {
  await refused(await sign(example1(), 'secevent+jwt', otherSigner), 'invalid_key', 'signature');
  await refused(await sign(example1({}, { iss: 'https://evil.example' })), 'invalid_issuer', 'iss');
  await refused(
    await sign(example1({}, { aud: 'https://erp.partner.example.com' })),
    'invalid_audience',
    'aud',
  );
  await refused(await sign(example1({}, { aud: [AUD, 'https://other'] })), 'invalid_audience', 'aud');
  await refused(
    await sign(example1({ mission_origin: 'https://elsewhere.example' })),
    'invalid_issuer',
    'mission_origin',
  );
  await refused(await sign(example1(), 'JWT'), 'invalid_key', 'typ');
  const none = `${Buffer.from('{"alg":"none","typ":"secevent+jwt","kid":"k"}').toString('base64url')}.${Buffer.from(JSON.stringify(example1())).toString('base64url')}.`;
  await refused(none, 'invalid_key', 'alg');
});

test('MSG-02: version must be an integer >= 1; prior_state may be absent only for active version 1 (C-A21)', async () => {
  for (const version of [0, -1, 1.5, '2', null])
    await refused(await sign(example1({ version })), 'invalid_request', 'version');
  await refused(await sign(withoutPrior()), 'invalid_request', 'prior_state');
  const approval = withoutPrior();
  Object.assign((approval['events'] as Record<string, Record<string, unknown>>)[LIFECYCLE_EVENT]!, {
    state: 'active',
    version: 1,
  });
  const verified = await verifyMissionSet(await sign(approval), keys, EXPECT, IAT * 1000);
  assert.equal(verified.kind === 'lifecycle' && verified.signal.priorState, null);
  await refused(await sign(example1({ committed_at: 'yesterday' })), 'invalid_request', 'committed_at');
  await refused(await sign(example1({ mission_id: 'msn with spaces' })), 'invalid_request', 'mission_id');
});

test('MSG-03: unknown members (tenant too) are ignored; an unrecognised state verifies as received', async () => {
  const verified = await verifyMissionSet(
    await sign(example1({ tenant: 't1', extra: { x: 1 }, state: 'frozen' })),
    keys,
    EXPECT,
    IAT * 1000,
  );
  assert.equal(verified.kind === 'lifecycle' && verified.signal.state, 'frozen');
});

test('C-A18: the replay port answers new, duplicate for the same bytes, conflict for other bytes', async () => {
  let now = IAT * 1000;
  const seen = new InMemorySetReplay(() => now);
  const exp = 1797843500 * 1000;
  assert.equal(await seen.seen(ISS, 'set_1', 'sha-256:a', exp), 'new');
  assert.equal(await seen.seen(ISS, 'set_1', 'sha-256:a', exp), 'duplicate');
  assert.equal(await seen.seen(ISS, 'set_1', 'sha-256:b', exp), 'conflict');
  assert.equal(await seen.seen('https://other', 'set_1', 'sha-256:b', exp), 'new', 'jti is per issuer');
  now = exp + 31_000;
  assert.equal(await seen.seen(ISS, 'set_1', 'sha-256:b', exp), 'new', 'forgotten only after exp + skew');
});

test('A3.4 step 1: parsePushedSet checks the stream bearer; parseAuthenticatedPush leaves that to its caller', async () => {
  const set = await sign(example1());
  const ctx = { keys, expect: EXPECT, nowMs: IAT * 1000, bearer: 'stream-bearer-0123456789' };
  const push = (authorization: string | undefined, contentType = SET_MEDIA_TYPE) => ({
    contentType,
    authorization,
    body: set,
  });
  const wrong = await parsePushedSet(push('Bearer not-the-stream-bearer'), ctx);
  assert.deepEqual(wrong.ok ? null : wrong.answer, {
    status: 401,
    body: { err: 'authentication_failed', description: 'stream bearer missing or wrong' },
  });
  const right = await parsePushedSet(push(`Bearer ${ctx.bearer}`), ctx);
  assert.equal(right.ok && right.set.kind, 'lifecycle');
  // The server authenticates the transmitter against the registered digest first: no header here.
  const authenticated = await parseAuthenticatedPush(push(undefined), ctx);
  assert.equal(authenticated.ok && authenticated.set.kind, 'lifecycle');
  const media = await parseAuthenticatedPush(push(undefined, 'application/json'), ctx);
  assert.equal(media.ok ? null : media.answer.status, 400);
  const forged = await parseAuthenticatedPush({ ...push(undefined), body: `${set.slice(0, -4)}AAAA` }, ctx);
  assert.equal(forged.ok ? null : forged.answer.status, 400);
});
