/**
 * The harness's costs beside their ceilings, same run, same SQLite file (issue 11 §8):
 * - gated entry: `enter` of a governed occurrence (the Mission view read and `mission_checked`
 *   appended inside the entry transaction, A3.6) vs `enter` of an ungoverned one — target >= 0.9x;
 * - SET ingestion: `parsePushedSet` (bearer, media type, A3.4 verification) + the harness's apply
 *   (replay table, view update, evidence, COMMIT) per SET vs a raw node:crypto ES256 verify of the
 *   same tokens — target >= 0.5x.
 * Status verification against raw jose `jwtVerify` is bench/missions-verify.bench.ts.
 * Each round measures both sides back to back, alternating which goes first; figures are medians.
 * Run: npm run build && node dist/bench/missions-entry.bench.js
 */
import { createPublicKey, KeyObject, verify as rawVerify } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { ManualClock } from '../src/core/clock.js';
import { generateEd25519KeyPair, publicKeyRaw } from '../src/core/ed25519.js';
import { randomIdSource } from '../src/core/ids.js';
import { signJwsWithKey, type ForeignSigningKey } from '../src/core/jose.js';
import { formatRfc3339 } from '../src/core/time.js';
import { LIFECYCLE_EVENT, localMissionKeys, parsePushedSet } from '../src/missions/index.js';
import { OccurrencesService } from '../src/occurrences/index.js';
import { harnessGate, migrate, occurrencesUnitOfWork, openHarnessOn } from '../src/store/index.js';
import { openSqliteEngine } from '../src/store/sqlite.js';
import { benchProfile, domain, request } from './occurrences-fixtures.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 9);
const PER_ROUND = Number(process.env['BENCH_PER_ROUND'] ?? 60);
const ISS = 'https://as.example.com';
const AUD = 'https://erp.example.com';
const MISSION = 'msn_8RfX2Lqv9TqMv4z7sA2bN1k0YpEdHc9-';
const SIGNALLED = 'msn_signalled_0123456789abcdefghijk';
const BEARER = 'bench-stream-bearer-0123456789';

const dir = mkdtempSync(join(tmpdir(), 'baton-bench-missions-'));
const engine = openSqliteEngine(join(dir, 'bench.db'));
await migrate(engine);
const clock = new ManualClock(Date.UTC(2026, 11, 21, 8, 0, 0));
const pair = generateEd25519KeyPair();
// A long reliance so the view stays fresh for the whole run (the gate's read is what is measured).
const bounds = {
  readSeconds: 86_400,
  writeSeconds: 86_400,
  highConsequenceSeconds: 5,
  maxStaleSeconds: 86_400,
};
const harness = openHarnessOn(engine, {
  domainPrivateKey: pair.privateKey,
  clock,
  ids: randomIdSource,
  bounds,
});
const svc = new OccurrencesService({
  uow: occurrencesUnitOfWork(engine, harnessGate(harness)),
  domainKey: { kid: pair.kid, publicKey: publicKeyRaw(pair.publicKey).toString('base64url') },
  clock,
});
await harness.registerMatrix();
const many = 100_000;
await svc.configureDomain({
  ...domain(),
  limits: {
    ...domain().limits,
    maxPendingPerLineage: many,
    maxInFlightPerLineage: many,
    maxPendingPerDomain: many,
    maxInFlightPerDomain: many,
  },
} as never);
const profile = await svc.registerProfile(benchProfile());
await svc.createAuthority({ id: 'bench', unit: 'EUR-cents', total: 1_000_000_000 });
const executor = await svc.takeover({ lineage: 'bench-agent' });
const now = clock.wallMs();
await harness.applyVerifiedStatus({
  source: 'status',
  origin: ISS,
  missionId: MISSION,
  state: 'active',
  authorityHash: null,
  expiresAt: formatRfc3339(now + 86_400_000),
  missionExpiry: null,
  issuedAt: Math.floor(now / 1000),
  checkedAt: formatRfc3339(now),
  freshUntil: formatRfc3339(now + 86_400_000),
  jws: 'bench.bench.bench',
  jwsDigest: 'sha-256:bench',
  kid: 'bench',
  jwkThumbprint: 'bench',
});

let n = 0;
async function reserved(governed: boolean): Promise<string> {
  const key = `k-${++n}`;
  let workItemId: string | undefined;
  if (governed) {
    const item = await harness.createItem(
      {
        kind: 'queue_item',
        action_class: 'consequential_write',
        lineage: 'bench-agent',
        mission_binding: { mission_id: MISSION, mission_origin: ISS, stop_policy: 'baton-default@1' },
        idempotency_key: key,
      },
      'executor',
    );
    await harness.dispatch(item.id, 'executor', executor.generation);
    workItemId = item.id;
  }
  const r = request(n);
  const { occurrence } = await svc.create({
    credential: executor.credential,
    creationKey: key,
    provider: { profileId: profile.id, profileVersion: profile.version },
    request: r,
    authority: { id: 'bench', amount: r.amount },
    ...(workItemId !== undefined && { workItemId }),
  });
  return occurrence.id;
}

async function entriesPerSecond(ids: readonly string[]): Promise<number> {
  const start = performance.now();
  for (const occurrenceId of ids) await svc.enter({ credential: executor.credential, occurrenceId });
  return ids.length / ((performance.now() - start) / 1000);
}

// SETs for another Mission, alternating active/suspended so every one applies, versions 1…N.
const es = await generateKeyPair('ES256', { extractable: true });
const signer: ForeignSigningKey = {
  privateKey: KeyObject.from(es.privateKey),
  kid: 'bench-key',
  alg: 'ES256',
};
const publicKey = createPublicKey(KeyObject.from(es.privateKey));
const keys = localMissionKeys({ keys: [{ ...(await exportJWK(es.publicKey)), kid: 'bench-key' }] });
const nowS = Math.floor(now / 1000);
async function setOf(version: number): Promise<string> {
  const state = version % 2 === 1 ? 'active' : 'suspended';
  const claims = {
    iss: ISS,
    aud: AUD,
    iat: nowS,
    exp: nowS + 3600,
    jti: `set_bench_${version}`,
    events: {
      [LIFECYCLE_EVENT]: {
        mission_id: SIGNALLED,
        mission_origin: ISS,
        state,
        ...(version > 1 && { prior_state: state === 'active' ? 'suspended' : 'active' }),
        version,
        committed_at: formatRfc3339(now),
      },
    },
  };
  return signJwsWithKey(Buffer.from(JSON.stringify(claims)), signer, 'secevent+jwt');
}
const sets: string[] = [];
for (let v = 1; v <= ROUNDS * PER_ROUND + 20; v++) sets.push(await setOf(v));
let nextSet = 0;

async function ingest(set: string): Promise<void> {
  const parsed = await parsePushedSet(
    { contentType: 'application/secevent+jwt', authorization: `Bearer ${BEARER}`, body: set },
    { keys, expect: { issuer: ISS, audience: AUD }, bearer: BEARER, nowMs: now },
  );
  if (!parsed.ok || parsed.set.kind !== 'lifecycle') throw new Error('bench SET refused');
  const applied = await harness.applyVerifiedSignal(parsed.set.signal);
  if (applied.result !== 'applied') throw new Error(`bench SET ${applied.result}`);
}

function rawVerifyOf(set: string): boolean {
  const dot = set.lastIndexOf('.');
  return rawVerify(
    'sha256',
    Buffer.from(set.slice(0, dot)),
    { key: publicKey, dsaEncoding: 'ieee-p1363' },
    Buffer.from(set.slice(dot + 1), 'base64url'),
  );
}

/**
 * The ceiling of a SET's store side: one transaction per SET that inserts its jti and one evidence
 * row in plain SQL, nothing else (what the replay table + view + evidence COMMIT cannot beat).
 */
await engine.transaction((tx) =>
  tx.run('CREATE TABLE bench_ceiling (jti TEXT PRIMARY KEY, body TEXT NOT NULL)'),
);
async function ceilingPerSecond(batch: readonly string[]): Promise<number> {
  const start = performance.now();
  for (const set of batch) {
    await engine.transaction(async (tx) => {
      await tx.run('INSERT INTO bench_ceiling (jti, body) VALUES (?, ?)', [`${set.slice(-24)}-${++n}`, set]);
    });
  }
  return batch.length / ((performance.now() - start) / 1000);
}

async function ingestPerSecond(batch: readonly string[]): Promise<number> {
  const start = performance.now();
  for (const set of batch) await ingest(set);
  return batch.length / ((performance.now() - start) / 1000);
}

function rawPerSecond(batch: readonly string[]): number {
  const start = performance.now();
  for (const set of batch) if (!rawVerifyOf(set)) throw new Error('raw verify failed');
  return batch.length / ((performance.now() - start) / 1000);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (x: number): string => Math.round(x).toLocaleString('en-US').padStart(7);

function report(name: string, b: number[], r: number[], baseline: string, target: number | null) {
  const result = {
    name,
    baton: median(b),
    raw: median(r),
    ratio: median(b.map((x, i) => x / r[i]!)),
    target,
  };
  console.log(
    `${name.padEnd(15)} baton ${fmt(result.baton)} ops/s   ${baseline} ${fmt(result.raw)} ops/s   ratio ${result.ratio.toFixed(2)}x (${target === null ? 'beside the measured ceiling' : `${result.ratio >= target ? 'meets' : 'BELOW'} target ${target}x`})`,
  );
  return result;
}

try {
  // Warm-up: both entry paths and a few SETs, untimed.
  await entriesPerSecond([await reserved(true), await reserved(false)]);
  for (let i = 0; i < 10; i++) await ingest(sets[nextSet++]!);
  const gated: number[] = [];
  const ungated: number[] = [];
  const ingested: number[] = [];
  const raw: number[] = [];
  const ceiling: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const g: string[] = [];
    const u: string[] = [];
    for (let i = 0; i < PER_ROUND; i++) {
      g.push(await reserved(true));
      u.push(await reserved(false));
    }
    const batch = sets.slice(nextSet, nextSet + PER_ROUND);
    nextSet += PER_ROUND;
    if (round % 2 === 0) {
      gated.push(await entriesPerSecond(g));
      ungated.push(await entriesPerSecond(u));
      ingested.push(await ingestPerSecond(batch));
      raw.push(rawPerSecond(batch));
      ceiling.push(await ceilingPerSecond(batch));
    } else {
      ceiling.push(await ceilingPerSecond(batch));
      ungated.push(await entriesPerSecond(u));
      gated.push(await entriesPerSecond(g));
      raw.push(rawPerSecond(batch));
      ingested.push(await ingestPerSecond(batch));
    }
  }
  console.log(`Mission harness on SQLite, ${ROUNDS} rounds x ${PER_ROUND} ops, medians`);
  const results = [
    report('gated entry', gated, ungated, 'ungated entry', 0.9),
    report('SET ingestion', ingested, raw, 'raw ES256 verify', 0.5),
    // Printed beside a missed target: the same commit count in plain SQL on the same file.
    report('SET ingestion', ingested, ceiling, 'plain-SQL commit ceiling', null),
  ];
  console.log(JSON.stringify({ bench: 'missions-entry', results }));
} finally {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
}
