/** HAR-16..19 A3.9 A7#19: cached connections are keyed per Mission and re-checked on every use. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT, generateKeyPair } from 'jose';
import { isBatonError } from '../../src/core/errors.js';
import { ConnectionCache } from '../../src/client/connection-cache.js';
import type { CacheKeyParts } from '../../src/missions/index.js';
import { MISSION, ORIGIN } from './fixtures.js';

const { privateKey, publicKey } = await generateKeyPair('ES256');
const other = await generateKeyPair('ES256');
const AUD = 'https://erp.example.com';
const now = Math.floor(Date.now() / 1000);

function token(
  over: { typ?: string; mission?: unknown; jkt?: string; exp?: number; key?: typeof privateKey } = {},
) {
  return new SignJWT({
    mission: over.mission ?? { id: MISSION, origin: ORIGIN, authority_hash: 'sha-256:a' },
    cnf: { jkt: over.jkt ?? 'holder' },
    client_id: 's6BhdRkqt3',
  })
    .setProtectedHeader({ alg: 'ES256', typ: over.typ ?? 'at+jwt' })
    .setIssuer(ORIGIN)
    .setAudience(AUD)
    .setIssuedAt(now - 10)
    .setExpirationTime(over.exp ?? now + 300)
    .sign(over.key ?? privateKey);
}

const parts: CacheKeyParts = {
  missionId: MISSION,
  missionOrigin: ORIGIN,
  audience: AUD,
  actor: 'agent',
  cnfJkt: 'holder',
  authorityHash: 'sha-256:a',
};

test('HAR-18/19 A7#19 a narrowed authority hash or another Mission misses; a bad token is never used; non-active disables and closes', async () => {
  let verdict: 'active' | 'non_active' = 'active';
  const disabled: string[] = [];
  const cache = new ConnectionCache<string>({
    key: publicKey,
    issuer: ORIGIN,
    check: () => Promise.resolve(verdict),
    onDisabled: (_p, r) => disabled.push(r),
  });
  let closed = 0;
  cache.put(parts, { connection: 'conn-A', accessToken: await token(), close: () => void closed++ });
  assert.equal(await cache.get(parts), 'conn-A');
  assert.equal(await cache.get({ ...parts, authorityHash: 'sha-256:narrowed' }), undefined);
  assert.equal(await cache.get({ ...parts, missionId: 'msn_B' }), undefined);
  for (const [i, bad] of [
    await token({ typ: 'JWT' }),
    await token({ exp: now - 120 }),
    await token({ jkt: 'foreign' }),
    await token({ key: other.privateKey }),
    await token({ mission: { id: 'msn_B', origin: ORIGIN } }),
  ].entries()) {
    const p = { ...parts, actor: `a${i}` };
    cache.put(p, { connection: 'bad', accessToken: bad });
    assert.equal(await cache.get(p), undefined, `bad token ${i} is never used`);
  }
  verdict = 'non_active';
  await assert.rejects(cache.get(parts), (e: unknown) => isBatonError(e, 'mission_not_active'));
  assert.equal(closed, 1);
  assert.ok(disabled.includes('mission_not_active'));
  verdict = 'active';
  assert.equal(await cache.get(parts), undefined, 'a disabled entry stays unusable');
});

test('HAR-16 RFC 9068 §2.2: a cached token without exp is never used (exp is REQUIRED)', async () => {
  const cache = new ConnectionCache<string>({
    key: publicKey,
    issuer: ORIGIN,
    check: () => Promise.resolve('active' as const),
  });
  const noExp = await new SignJWT({
    mission: { id: MISSION, origin: ORIGIN, authority_hash: 'sha-256:a' },
    cnf: { jkt: 'holder' },
    client_id: 's6BhdRkqt3',
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt' })
    .setIssuer(ORIGIN)
    .setAudience(AUD)
    .setIssuedAt(now - 10)
    .sign(privateKey);
  cache.put(parts, { connection: 'conn-no-exp', accessToken: noExp });
  assert.equal(await cache.get(parts), undefined);
  cache.put({ ...parts, actor: 'b' }, { connection: 'conn-ok', accessToken: await token() });
  assert.equal(await cache.get({ ...parts, actor: 'b' }), 'conn-ok');
});

test("seed §8.1 A7#19 an entry put without a hash is checked with its token's authority hash: a narrowed Mission disables it", async () => {
  let current = 'sha-256:a';
  const asked: (string | null)[] = [];
  const disabled: string[] = [];
  const cache = new ConnectionCache<string>({
    key: publicKey,
    issuer: ORIGIN,
    // What a caller wires to Baton's view: a known hash that differs is a mismatch (A3.2 step 7).
    check: (_o, _m, h) => {
      asked.push(h);
      return Promise.resolve(h !== null && h !== current ? 'authority_hash_mismatch' : 'active');
    },
    onDisabled: (_p, r) => disabled.push(r),
  });
  const unhashed = { ...parts, authorityHash: null };
  cache.put(unhashed, { connection: 'conn-wide', accessToken: await token() });
  assert.equal(await cache.get(unhashed), 'conn-wide');
  assert.deepEqual(asked, ['sha-256:a'], "the check is asked with the token's hash");
  current = 'sha-256:narrowed';
  assert.equal(await cache.get(unhashed), undefined, 'the wider connection is not handed out');
  assert.deepEqual(disabled, ['authority_hash_mismatch']);
  // A token whose claim names no hash is checked with none; one of another type is never used.
  const noHash = { ...parts, authorityHash: null, actor: 'b' };
  cache.put(noHash, {
    connection: 'conn-b',
    accessToken: await token({ mission: { id: MISSION, origin: ORIGIN } }),
  });
  assert.equal(await cache.get(noHash), 'conn-b');
  assert.equal(asked.at(-1), null);
  const badHash = { ...parts, authorityHash: null, actor: 'c' };
  cache.put(badHash, {
    connection: 'conn-c',
    accessToken: await token({ mission: { id: MISSION, origin: ORIGIN, authority_hash: 7 } }),
  });
  assert.equal(await cache.get(badHash), undefined);
});

test("HAR-17 A3.9: a connection closed while Baton's check was in flight is not handed out", async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const cache = new ConnectionCache<string>({
    key: publicKey,
    issuer: ORIGIN,
    check: async () => {
      await gate;
      return 'active';
    },
  });
  cache.put(parts, { connection: 'conn-A', accessToken: await token() });
  const pending = cache.get(parts);
  // The check is in flight; the Mission stops meanwhile (a SET applied elsewhere).
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(await cache.disableMission(ORIGIN, MISSION), 1);
  release();
  assert.equal(await pending, undefined, 'the entry disabled during the check is a miss, never a use');
});

test("HAR-17 HAR-26: a close() that throws is reported; the entry and the Mission's others are still disabled and reported", async () => {
  const disabled: [string, string, unknown][] = [];
  const cache = new ConnectionCache<string>({
    key: publicKey,
    issuer: ORIGIN,
    check: () => Promise.resolve('non_active'),
    onDisabled: (p, r, closeError) => disabled.push([p.actor, r, closeError]),
  });
  const boom = new Error('close failed');
  cache.put(parts, {
    connection: 'conn-A',
    accessToken: await token(),
    close: () => {
      throw boom;
    },
  });
  let closedB = 0;
  cache.put(
    { ...parts, actor: 'b' },
    { connection: 'conn-B', accessToken: await token(), close: () => void closedB++ },
  );
  await assert.rejects(cache.get(parts), (e: unknown) => isBatonError(e, 'mission_not_active'));
  assert.equal(closedB, 1, "the Mission's other entry is closed too");
  assert.deepEqual(
    disabled.map(([a, r, c]) => [a, r, c]),
    [
      ['agent', 'mission_not_active', boom],
      ['b', 'mission_not_active', undefined],
    ],
  );
  assert.equal(await cache.get({ ...parts, actor: 'b' }), undefined);
});

test('A2.6: an unknown Mission state disables with reason mission_state_unknown (stale keeps mission_state_stale)', async () => {
  for (const [verdict, reason] of [
    ['unknown', 'mission_state_unknown'],
    ['stale', 'mission_state_stale'],
  ] as const) {
    const disabled: string[] = [];
    const cache = new ConnectionCache<string>({
      key: publicKey,
      issuer: ORIGIN,
      check: () => Promise.resolve(verdict),
      onDisabled: (_p, r) => disabled.push(r),
    });
    cache.put(parts, { connection: 'conn-A', accessToken: await token() });
    await assert.rejects(cache.get(parts), (e: unknown) => isBatonError(e, 'mission_status_unavailable'));
    assert.deepEqual(disabled, [reason]);
  }
});
