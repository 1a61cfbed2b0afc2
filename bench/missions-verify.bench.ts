/**
 * Mission Status and lifecycle SET verification per second, each beside a raw baseline over the
 * same tokens in the same run, reported as ratios:
 * - status: Baton's A3.2 steps 2–8 (`verifyStatusJws`) vs jose `jwtVerify` of the same token
 *   (ES256, typ, default claim checks) — target >= 0.8x;
 * - SET: Baton's A3.4 steps 2–4 (`verifyMissionSet`) vs a raw node:crypto ES256 verify of the same
 *   signing input, printed beside: this is the verify step only, one SET at a time, each waiting
 *   for the thread pool. The 0.5x target is the harness's full ingestion (verify, replay table,
 *   view update, evidence, COMMIT) per second, judged in missions-entry.bench.ts.
 * Each round measures both sides back to back, alternating which goes first; figures are medians.
 * Run: npm run build && node dist/bench/missions-verify.bench.js
 */
import { createPublicKey, KeyObject, verify as rawVerify } from 'node:crypto';
import { exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { signJwsWithKey, type ForeignSigningKey } from '../src/core/jose.js';
import {
  LIFECYCLE_EVENT,
  localMissionKeys,
  verifyMissionSet,
  verifyStatusJws,
} from '../src/missions/index.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 15);
const ROUND_MS = Number(process.env['BENCH_ROUND_MS'] ?? 150);
const ISS = 'https://as.example.com';
const AUD = 'https://erp.example.com';
const MISSION = 'msn_8RfX2Lqv9TqMv4z7sA2bN1k0YpEdHc9-';
const NOW_S = 1797840000;

const pair = await generateKeyPair('ES256', { extractable: true });
const signer: ForeignSigningKey = {
  privateKey: KeyObject.from(pair.privateKey),
  kid: 'bench-key',
  alg: 'ES256',
};
const publicKey = createPublicKey(KeyObject.from(pair.privateKey));
const keys = localMissionKeys({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'bench-key' }] });

const status = await signJwsWithKey(
  Buffer.from(
    JSON.stringify({
      iss: ISS,
      aud: AUD,
      sub: 'client_erp-recon-agent',
      nonce: 'nonce_K9pV4nT2sR7mB1xQ',
      iat: NOW_S,
      exp: NOW_S + 60,
      mission: {
        id: MISSION,
        origin: ISS,
        authority_hash: 'sha-256:-rBZZJ8tVIyGoR1tBg6BO6QG0kimVvef8vjigpoVuPw',
        state: 'active',
        expires_at: '2026-12-21T08:01:00Z',
        mission_expiry: '2026-12-31T23:59:59Z',
      },
      authorization_details: [{ type: 'mission_resource_access', resource: AUD, actions: ['invoices.read'] }],
    }),
  ),
  signer,
  'mission-status-response+jwt',
);
const set = await signJwsWithKey(
  Buffer.from(
    JSON.stringify({
      iss: ISS,
      aud: AUD,
      iat: NOW_S,
      exp: NOW_S + 300,
      jti: 'set_9Kp2vN7sR1tY8mZ3qX5b',
      events: {
        [LIFECYCLE_EVENT]: {
          mission_id: MISSION,
          mission_origin: ISS,
          prior_state: 'active',
          state: 'revoked',
          version: 2,
          committed_at: '2026-12-21T07:59:00Z',
        },
      },
    }),
  ),
  signer,
  'secevent+jwt',
);
const expectStatus = {
  issuer: ISS,
  audience: AUD,
  clientId: 'client_erp-recon-agent',
  nonce: 'nonce_K9pV4nT2sR7mB1xQ',
  missionId: MISSION,
};
const nowMs = NOW_S * 1000;
const setInput = Buffer.from(set.slice(0, set.lastIndexOf('.')));
const setSig = Buffer.from(set.slice(set.lastIndexOf('.') + 1), 'base64url');

const batonStatus = () => verifyStatusJws(status, keys, expectStatus, nowMs);
const rawStatus = () =>
  jwtVerify(status, publicKey, {
    algorithms: ['ES256'],
    typ: 'mission-status-response+jwt',
    currentDate: new Date(nowMs),
  });
const batonSet = () => verifyMissionSet(set, keys, { issuer: ISS, audience: AUD }, nowMs);
const rawSet = () =>
  Promise.resolve(rawVerify('sha256', setInput, { key: publicKey, dsaEncoding: 'ieee-p1363' }, setSig));

if (
  (await batonStatus()).state !== 'active' ||
  (await batonSet()).kind !== 'lifecycle' ||
  !(await rawSet())
) {
  throw new Error('bench setup is broken');
}

async function opsPerSecond(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  const end = start + ROUND_MS;
  let n = 0;
  let t = start;
  while (t < end) {
    for (let i = 0; i < 16; i++) await fn();
    n += 16;
    t = performance.now();
  }
  return n / ((t - start) / 1000);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function pairOf(
  name: string,
  baton: () => Promise<unknown>,
  raw: () => Promise<unknown>,
  baseline: string,
  target: number | null,
) {
  for (let i = 0; i < 500; i++) {
    await baton();
    await raw();
  }
  const b: number[] = [];
  const r: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      b.push(await opsPerSecond(baton));
      r.push(await opsPerSecond(raw));
    } else {
      r.push(await opsPerSecond(raw));
      b.push(await opsPerSecond(baton));
    }
  }
  const result = {
    name,
    baton: median(b),
    raw: median(r),
    ratio: median(b.map((x, i) => x / r[i]!)),
    target,
  };
  const fmt = (x: number): string => Math.round(x).toLocaleString('en-US').padStart(7);
  console.log(
    `${name.padEnd(15)} baton ${fmt(result.baton)} ops/s   ${baseline} ${fmt(result.raw)} ops/s   ratio ${result.ratio.toFixed(2)}x (${target === null ? 'beside' : `${result.ratio >= target ? 'meets' : 'BELOW'} target ${target}x`})`,
  );
  return result;
}

console.log(`Mission verification, ES256, ${ROUNDS} rounds x ${ROUND_MS} ms, medians (verify step only)`);
const results = [
  await pairOf('status verify', batonStatus, rawStatus, 'raw jose jwtVerify', 0.8),
  // Beside: one SET at a time, each waiting for the thread pool, is a latency; the 0.5x SET
  // ingestion target is read on missions-entry.bench.ts (the poll, and the pushes saturated).
  await pairOf('SET verify', batonSet, rawSet, 'raw ES256 verify', null),
];
console.log(JSON.stringify({ bench: 'missions-verify', results }));
