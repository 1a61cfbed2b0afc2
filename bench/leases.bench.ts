/**
 * PTCL lease sign and verify per second beside raw node:crypto Ed25519 over the same bytes, in the
 * same run, reported as ratios (target >= 0.8x). Run: node --import tsx bench/leases.bench.ts
 * Each round measures both sides back to back (alternating which goes first), so load from other
 * processes and CPU frequency drift hit both alike; the ratio is the median of the per-round ratios,
 * the ops/s figures the median rounds.
 */
import { sign as rawSign, verify as rawVerify, createPublicKey } from 'node:crypto';
import { generateEd25519KeyPair } from '../src/core/ed25519.js';
import { sha256HexTag } from '../src/core/digest.js';
import { formatRfc3339 } from '../src/core/time.js';
import {
  keyRing,
  signLease,
  signingInput,
  verifyLease,
  verifyLeaseText,
  type UnsignedLease,
} from '../src/leases/index.js';
import { DRAFT_LEASE_MEMBERS } from '../test/leases/example.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 21);
const ROUND_MS = Number(process.env['BENCH_ROUND_MS'] ?? 120);
const TARGET = 0.8;

const pair = generateEd25519KeyPair();
const key = { privateKey: pair.privateKey, kid: pair.kid };
const publicKey = createPublicKey(pair.privateKey);
const now = Date.parse('2026-11-29T18:00:00Z');
const unsigned: UnsignedLease = {
  ...DRAFT_LEASE_MEMBERS,
  pre_image_state_hash: sha256HexTag('pre'),
  inverse_payload_jcs_hash: sha256HexTag('inverse'),
  trace_anchor_ref: sha256HexTag('trace'),
  issued_at: formatRfc3339(now),
  expires_at: formatRfc3339(now + 30_000),
};
const lease = signLease(unsigned, key);
const bytes = signingInput(lease);
const sig = Buffer.from(lease.signature.sig, 'base64url');
const keys = keyRing([pair.publicKey]);
const wire = Buffer.from(JSON.stringify(lease));
const checks = { nowMs: now, keys, epoch: 1048578, stateDigest: unsigned.pre_image_state_hash };

if (
  !rawVerify(null, bytes, publicKey, sig) ||
  !verifyLease(lease, checks).ok ||
  !verifyLeaseText(wire, checks).ok
) {
  throw new Error('bench setup is broken');
}

function opsPerSecond(fn: () => unknown): number {
  const end = performance.now() + ROUND_MS;
  let n = 0;
  let t = performance.now();
  while (t < end) {
    for (let i = 0; i < 64; i++) fn();
    n += 64;
    t = performance.now();
  }
  return n / ((t - end + ROUND_MS) / 1000);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function pairOf(
  name: string,
  baton: () => unknown,
  raw: () => unknown,
  target: number | null = TARGET,
): { name: string; baton: number; raw: number; ratio: number } {
  for (let i = 0; i < 2000; i++) {
    baton();
    raw();
  }
  const b: number[] = [];
  const r: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      b.push(opsPerSecond(baton));
      r.push(opsPerSecond(raw));
    } else {
      r.push(opsPerSecond(raw));
      b.push(opsPerSecond(baton));
    }
  }
  const ratio = median(b.map((x, i) => x / r[i]!));
  const result = { name, baton: median(b), raw: median(r), ratio };
  const fmt = (x: number): string => Math.round(x).toLocaleString('en-US').padStart(9);
  const verdict =
    target === null ? 'informational' : `${result.ratio >= target ? 'meets' : 'BELOW'} target ${target}x`;
  console.log(
    `${name.padEnd(24)} baton ${fmt(result.baton)} ops/s   raw node:crypto ${fmt(result.raw)} ops/s   ratio ${result.ratio.toFixed(2)}x (${verdict})`,
  );
  return result;
}

console.log(
  `PTCL leases vs raw Ed25519 on the same ${bytes.length}-byte JCS input (${ROUNDS} rounds x ${ROUND_MS} ms, medians)`,
);
const results = [
  pairOf(
    'lease sign',
    () => signLease(unsigned, key),
    () => rawSign(null, bytes, pair.privateKey),
  ),
  pairOf(
    'lease verify',
    () => verifyLease(lease, checks),
    () => rawVerify(null, bytes, publicKey, sig),
  ),
  // What a system of record does per request: strict JSON parse of the header bytes, then verify.
  pairOf(
    'lease verify from bytes',
    () => verifyLeaseText(wire, checks),
    () => rawVerify(null, bytes, publicKey, sig),
    null,
  ),
];
console.log(JSON.stringify({ bench: 'leases', target: TARGET, results }));
