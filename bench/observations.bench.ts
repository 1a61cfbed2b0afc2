/**
 * Continuity observation records (issue 12, part 7). Run: npm run build && node dist/bench/observations.bench.js
 * 1. Handoff-record projection (projectHandoff + sign) per second, beside the raw JCS + SHA-256 +
 *    Ed25519 of the same record in the same run: target ≥ 0.5× of raw.
 * 2. Record validation per second (strict read + JCS digest), beside raw JCS + SHA-256 of the same
 *    bytes (JSON.parse + canonicalize + sha256): target ≥ 0.5×. And signed-record verification
 *    beside raw JCS + SHA-256 + Ed25519 verify.
 * 3. Takeover latency with projection on against off, on a real SQLite file: off = the takeover
 *    alone; on (per takeover) = takeover then projecting that lineage's record; on (batched) = the
 *    takeovers then one projection run over all of them (how Baton runs it: at report/read time).
 *    Target ≥ 0.9×. Figures are medians of alternating rounds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalBytes, canonicalize } from '../src/core/jcs.js';
import { parseStrictJson } from '../src/core/json.js';
import { digestJcs, sha256 } from '../src/core/digest.js';
import { ed25519Sign, ed25519Verify, generateEd25519KeyPair } from '../src/core/ed25519.js';
import {
  projectHandoff,
  readRecord,
  signRecord,
  verifyRecord,
  type HandoffFacts,
} from '../src/observations/index.js';
import { ContinuityStore, openOccurrencesOnSqlite } from '../src/store/index.js';
import { domainConfig, paymentsProfile } from '../test/occurrences/helpers.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);
const N = Number(process.env['BENCH_N'] ?? 2_000);
const TAKEOVERS = Number(process.env['BENCH_TAKEOVERS'] ?? 200);
const key = generateEd25519KeyPair();
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const facts = (i: number): HandoffFacts => ({
  domain: 'bench',
  lineage: `lineage-${i}`,
  takeover: {
    seq: 1000 + i,
    idx: 2,
    hash: digestJcs({ i }),
    at: Date.UTC(2026, 0, 1) + i,
    generation: 2,
    retiredGeneration: 1,
    delivered: { reserved: ['occ_a'], unresolved: ['occ_b'] },
  },
  authorityEventsWithTakeover: 0,
  lineageChainVerifies: true,
  openAtSeq: ['occ_a', 'occ_b'],
  unregisteredProfileDigests: [],
  reconfiguredBy: null,
});

async function perSecond(fn: (i: number) => unknown): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < N; i++) await fn(i);
  return (N / (performance.now() - t)) * 1000;
}

async function compare(
  name: string,
  measured: (i: number) => unknown,
  raw: (i: number) => unknown,
  target: number,
) {
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    a.push(await perSecond(measured));
    b.push(await perSecond(raw));
  }
  const ratio = median(a) / median(b);
  console.log(
    `${name}: ${median(a).toFixed(0)}/s beside raw ${median(b).toFixed(0)}/s = ${ratio.toFixed(2)}× (target ≥ ${target}×: ${ratio >= target ? 'meets' : 'BELOW'})`,
  );
}

const sample = await signRecord(projectHandoff(facts(0)), key.privateKey);
const sampleBytes = Buffer.from(canonicalize(sample));
const unsigned = projectHandoff(facts(0));
const unsignedBytes = Buffer.from(canonicalize(unsigned));

await compare(
  'projection + signature per record',
  (i) => signRecord(projectHandoff(facts(i)), key.privateKey),
  (i) => ed25519Sign(key.privateKey, sha256(canonicalBytes({ ...unsigned, record_id: `r${i}` }))),
  0.5,
);
await compare(
  'validation per record (strict read + JCS digest)',
  () => digestJcs(readRecord(unsignedBytes).record),
  () => sha256(canonicalize(JSON.parse(unsignedBytes.toString('utf8')))),
  0.5,
);
const signature = ed25519Sign(key.privateKey, canonicalBytes(unsigned));
await compare(
  'verification per signed record',
  () =>
    verifyRecord(parseStrictJson(sampleBytes), {
      key: key.publicKey,
      audience: 'urn:baton:bench',
      now: Date.UTC(2026, 0, 2),
    }),
  () =>
    ed25519Verify(key.publicKey, canonicalBytes(JSON.parse(sampleBytes.toString('utf8'))), signature) &&
    sha256(sampleBytes),
  0.5,
);

async function takeoverRound(mode: 'off' | 'each' | 'batched'): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-obs-bench-'));
  const opened = await openOccurrencesOnSqlite(join(dir, 'b.db'));
  try {
    await opened.service.configureDomain({ ...domainConfig(), id: 'bench' } as never);
    await opened.service.registerProfile(paymentsProfile());
    const continuity = new ContinuityStore({
      engine: opened.engine,
      signingKey: opened.domainKey.privateKey,
    });
    const t = performance.now();
    for (let i = 0; i < TAKEOVERS; i++) {
      await opened.service.takeover({ lineage: `L${i}` });
      if (mode === 'each') await continuity.project('bench', `L${i}`);
    }
    if (mode === 'batched') await continuity.project('bench');
    return (TAKEOVERS / (performance.now() - t)) * 1000;
  } finally {
    await opened.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const rounds: Record<'off' | 'each' | 'batched', number[]> = { off: [], each: [], batched: [] };
for (let r = 0; r < ROUNDS; r++) {
  for (const mode of r % 2 === 0
    ? (['off', 'each', 'batched'] as const)
    : (['batched', 'each', 'off'] as const)) {
    rounds[mode].push(await takeoverRound(mode));
  }
}
const off = median(rounds.off);
for (const mode of ['each', 'batched'] as const) {
  const ratio = median(rounds[mode]) / off;
  console.log(
    `takeovers/s with projection ${mode === 'each' ? 'after each takeover' : 'batched after all'}: ${median(rounds[mode]).toFixed(0)} beside ${off.toFixed(0)} off = ${ratio.toFixed(2)}× (target ≥ 0.9×: ${ratio >= 0.9 ? 'meets' : 'BELOW'})`,
  );
}
console.log(`(${ROUNDS} rounds, ${N} records, ${TAKEOVERS} takeovers per round; SQLite file in ${tmpdir()})`);
