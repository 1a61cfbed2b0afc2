/**
 * The harness's costs beside their ceilings, same run, same SQLite file (issue 11 §8):
 * - gated entry: `enter` of a governed occurrence (the Mission view read and `mission_checked`
 *   appended inside the entry transaction, A3.6) vs `enter` of an ungoverned one — target >= 0.9x.
 *   Entries alternate one by one (gated, ungated, ungated, gated…), each timed alone, so a load
 *   swing on the machine falls on both sides alike; a round's ratio is ungated time / gated time.
 * - SET ingestion (verify + apply + evidence, durable) vs raw node:crypto ES256 verification of
 *   the same tokens on the main thread — target >= 0.5x — in the two ways SETs arrive:
 *   an RFC 8936 poll answer of PER_ROUND SETs (`verifyMissionSets`: concurrent, off the main
 *   thread; `applyVerifiedSignals`: ONE transaction) and PUSHES concurrent RFC 8935 pushes to
 *   different Missions (each: the server's bearer check and `parseAuthenticatedPush`, then its
 *   per-issuer signal batcher, `pushBatcher` of src/server/mission-consumer.ts: pushes that
 *   arrive together share ONE `applyTakenSignals` transaction, with the stream-liveness write
 *   beside it; the issuer is pinned so that write updates its row as in `baton serve`). Printed
 *   beside, same run: the same pushes the way the server took them before the batcher (`applyVerifiedSignal` then
 *   `touchStream`, two transactions per SET, the engine's group commit sharing COMMITs), raw
 *   verification with the same concurrency as Baton's (32 in flight on the thread pool), one push
 *   at a time (through the batcher: a batch of one), and the plain-SQL durable-commit ceilings
 *   (one COMMIT per SET; concurrent lanes, group commit; one per batch) on the same file, and a
 *   push floor: PUSHES lanes each verifying raw on the thread pool, then one plain-SQL
 *   transaction per SET; and the pushed-SET job itself in plain SQL (bench/missions-set-job.ts:
 *   replay row, version-checked view, chained evidence event, the stop lookup), a transaction
 *   per SET and batched as the signal batcher batches. The same pushes and the same job again
 *   with BENCH_SATURATING_PUSHES (default 64) in flight: at 16 each pusher waits for its batch's
 *   COMMIT, so the rate is latency-bound; at 64 it is the receiver's capacity, and that is where
 *   the pushes' 0.5x target is read (SETs ingested per second; docs/missions.md "Performance"),
 *   the job at 64 lanes beside it; the 16-push lines are printed beside, with their own job
 *   ceiling. The batched pushes also run on a writer-thread engine (a second file),
 *   and each SET way prints its process CPU per SET, SETs per batch (the batcher's), per logical
 *   transaction and per COMMIT (the measured reason), and, where Linux tells it, the main
 *   thread's own time on a CPU per SET and its time runnable but waiting for a core (the
 *   plain-SQL job ways too, so the ceiling's main-thread cost stands beside Baton's).
 * Status verification against raw jose `jwtVerify` is bench/missions-verify.bench.ts.
 * Instructions per entry, which the machine's load does not change (callgrind counts them only
 * while switched on, around the entries of one side):
 *   BENCH_CALLGRIND=gated valgrind --tool=callgrind --instr-atstart=no node --single-threaded \
 *     dist/bench/missions-entry.bench.js   (then =ungated; prints instructions per entry, and
 *     apart the part V8's optimizing compiler spent in the window: --single-threaded runs it here;
 *     BENCH_CALLGRIND_ENTRIES=400 widens the window from 100 entries, for steadier counts)
 * Each round measures every side back to back, alternating which goes first; figures are medians.
 * Run: npm run build && node dist/bench/missions-entry.bench.js (first BENCH_WARM_ENTRIES, default
 * 1000, untimed entries of each side, the callgrind window too; then BENCH_WARM_SET_ROUNDS,
 * default 30, untimed rounds of every SET way)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../src/core/clock.js';
import { generateEd25519KeyPair, publicKeyRaw } from '../src/core/ed25519.js';
import { randomIdSource } from '../src/core/ids.js';
import { formatRfc3339 } from '../src/core/time.js';
import {
  bearerDigest,
  ISSUER_PIN_FORMAT,
  issuerPinDigest,
  parseAuthenticatedPush,
  PUSH_DELIVERY,
  verifyMissionSets,
  type IssuerPin,
  type MissionsService,
  type SignalBatcher,
  type VerifiedMissionSignal,
} from '../src/missions/index.js';
import { OccurrencesService } from '../src/occurrences/index.js';
import { pushBatcher, pushBearerMatches } from '../src/server/mission-consumer.js';
import type { StoreEngine } from '../src/store/engine.js';
import { harnessGate, migrate, occurrencesUnitOfWork, openHarnessOn } from '../src/store/index.js';
import { IssuerRegistry } from '../src/store/missions-issuers.js';
import { openSqliteEngine } from '../src/store/sqlite.js';
import { setJobCeiling } from './missions-set-job.js';
import { setSource, sqlCeilings } from './missions-sets.js';
import { newFrames, readWal } from './wal-frames.js';
import { threadTimes } from './proc-cpu.js';
import { benchProfile, domain, request } from './occurrences-fixtures.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 9);
const PER_ROUND = Number(process.env['BENCH_PER_ROUND'] ?? 60);
const PUSHES = Number(process.env['BENCH_PUSHES'] ?? 16);
/**
 * Pushes in flight for the saturating way: each push waits for its batch's COMMIT before its
 * transmitter sends the next, so PUSHES in flight measure a latency-bound rate (what one fsync per
 * batch allows that many waiting pushers), not how many SETs a second the receiver can take. At
 * this many the main thread is on a CPU most of the time (73-89% in session 14, 78-91% in 15; its
 * on-CPU time per SET is printed): the receiver's capacity, with the same job in plain SQL at as many lanes beside it.
 */
const SATURATING = Number(process.env['BENCH_SATURATING_PUSHES'] ?? 64);
/**
 * Untimed entries of each side before anything is measured. V8 keeps optimizing (and now and then
 * deoptimizing) the entry path for the first thousand or so entries. Measured before then, one
 * run's gated side cost 60 k instructions an entry more than another's with the same code, because
 * some of its functions still ran as baseline code.
 */
const WARM = Number(process.env['BENCH_WARM_ENTRIES'] ?? 1000);
/** Untimed rounds of every SET way before the timed ones (PER_ROUND SETs a way each). */
const WARM_SET_ROUNDS = Number(process.env['BENCH_WARM_SET_ROUNDS'] ?? 30);
const ISS = 'https://as.example.com';
const AUD = 'https://erp.example.com';
const MISSION = 'msn_8RfX2Lqv9TqMv4z7sA2bN1k0YpEdHc9-';
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
const harnessOptions = { domainPrivateKey: pair.privateKey, clock, ids: randomIdSource, bounds };
const harness = openHarnessOn(engine, harnessOptions);
// The same pushes on a second file whose write connection is on a worker thread (docs/store.md,
// "The writer thread"; `baton serve --sqlite-writer thread`): COMMIT's fsync off the event loop.
const threadEngine = openSqliteEngine(join(dir, 'thread.db'), { writer: 'thread' });
await migrate(threadEngine);
const threadHarness = openHarnessOn(threadEngine, harnessOptions);
await threadHarness.registerMatrix();

/**
 * The server's pushed-SET path on each file (src/server/mission-consumer.ts `pushBatcher`): the
 * issuer pinned, so the stream-liveness write after each batch updates its row as in `baton
 * serve`, and the same path one SET per transaction as before the batcher, for the same-run A/B.
 */
async function pushPath(e: StoreEngine, h: MissionsService) {
  const registry = new IssuerRegistry(e);
  const pin: IssuerPin = {
    format: ISSUER_PIN_FORMAT,
    issuer: ISS,
    jwks_uri: `${ISS}/jwks`,
    endpoints: { status: `${ISS}/status` },
    algorithms: ['ES256'],
    client: { client_id: 'bench', auth_method: 'private_key_jwt', key_ref: 'env:BENCH_KEY', alg: 'ES256' },
    audience: AUD,
    bounds: { max_stale_seconds: 300 },
    stream: { delivery: PUSH_DELIVERY },
  };
  const reg = {
    pin,
    pinDigest: issuerPinDigest(pin),
    bearerDigest: bearerDigest(BEARER),
    pollBearerRef: null,
  };
  await registry.register(reg, 'bench', clock.wallMs());
  const batcher: SignalBatcher = pushBatcher({ harness: h, registry, clock }, ISS);
  /** The server before the batcher: one harness transaction, then one liveness transaction, per SET. */
  const each = async (s: VerifiedMissionSignal) => {
    const applied = await h.applyVerifiedSignal(s);
    await registry.touchStream(ISS, clock.wallMs());
    return applied;
  };
  return { batcher, each };
}
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
const paths = {
  inline: await pushPath(engine, harness),
  thread: await pushPath(threadEngine, threadHarness),
};
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
type Executor = typeof executor;
async function reserved(governed: boolean, exec: Executor = executor): Promise<string> {
  const key = `k-${++n}`;
  let workItemId: string | undefined;
  if (governed) {
    const item = await harness.createItem(
      {
        kind: 'queue_item',
        action_class: 'consequential_write',
        lineage: exec.lineage,
        mission_binding: { mission_id: MISSION, mission_origin: ISS, stop_policy: 'baton-default@1' },
        idempotency_key: key,
      },
      'executor',
    );
    await harness.dispatch(item.id, 'executor', exec.generation);
    workItemId = item.id;
  }
  const r = request(n);
  const { occurrence } = await svc.create({
    credential: exec.credential,
    creationKey: key,
    provider: { profileId: profile.id, profileVersion: profile.version },
    request: r,
    authority: { id: 'bench', amount: r.amount },
    ...(workItemId !== undefined && { workItemId }),
  });
  return occurrence.id;
}

/**
 * A timed entry's reservation, the one reservation of a lineage of its own. An entry counts its
 * lineage's reserved and entered occurrences by scanning an index range. If every reservation
 * shared one lineage, each entry would pay for all earlier ones, the same extra on both sides,
 * which pulls the ratio towards 1 (thousands of in-flight occurrences: 100+ µs an entry).
 */
interface Reserved {
  readonly id: string;
  readonly exec: Executor;
}

let lineages = 0;
async function reservedAlone(governed: boolean): Promise<Reserved> {
  const exec = await svc.takeover({ lineage: `bench-entry-${++lineages}` });
  return { id: await reserved(governed, exec), exec };
}

/** CPU (this process, µs) spent by each side's entries: what is not waiting for the disk. */
const cpu = { gated: 0, ungated: 0, entries: 0 };

async function timedEntry(r: Reserved, side: 'gated' | 'ungated'): Promise<number> {
  const c = process.cpuUsage();
  const start = performance.now();
  await svc.enter({ credential: r.exec.credential, occurrenceId: r.id });
  const ms = performance.now() - start;
  const used = process.cpuUsage(c);
  cpu[side] += used.user + used.system;
  return ms;
}

/** Entries per second of each side and the round's ratio, one entry of each side at a time. */
async function entries(g: readonly Reserved[], u: readonly Reserved[]): Promise<[number, number, number]> {
  let tg = 0;
  let tu = 0;
  for (let i = 0; i < g.length; i++) {
    if (i % 2 === 0) {
      tg += await timedEntry(g[i]!, 'gated');
      tu += await timedEntry(u[i]!, 'ungated');
    } else {
      tu += await timedEntry(u[i]!, 'ungated');
      tg += await timedEntry(g[i]!, 'gated');
    }
  }
  cpu.entries += g.length;
  return [(g.length * 1000) / tg, (u.length * 1000) / tu, tu / tg];
}

/**
 * The measured reason beside the entry ratio, untimed, after the rounds: WAL pages each side's
 * COMMIT writes (`mission_checked` is a second event row and a second leaf of the evidence
 * type index), the frames each entry's COMMIT appended to the WAL file (bench/wal-frames.ts), counted
 * whether or not the WAL restarted before it.
 */
async function walPagesPerEntry(count: number): Promise<{ gated: number; ungated: number }> {
  const wal = join(dir, 'bench.db-wal');
  const pages = { gated: 0, ungated: 0 };
  for (let i = 0; i < count; i++) {
    for (const side of ['gated', 'ungated'] as const) {
      const id = await reserved(side === 'gated');
      const before = readWal(wal);
      await svc.enter({ credential: executor.credential, occurrenceId: id });
      pages[side] += newFrames(before, readWal(wal)).length;
    }
  }
  return { gated: pages.gated / count, ungated: pages.ungated / count };
}

const source = await setSource(ISS, AUD, now);
const ctx = { keys: source.keys, expect: { issuer: ISS, audience: AUD }, nowMs: now };
const ceilings = await sqlCeilings(engine);
const setJob = await setJobCeiling(engine);
const perSecond = (count: number, start: number): number => count / ((performance.now() - start) / 1000);
const missionOf = (lane: string): string => `msn_bench_${lane}`;

async function batchOf(count: number, mission: (i: number) => string): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(await source.next(mission(i)));
  return out;
}

/** One RFC 8936 poll answer: verified concurrently, applied in one transaction. */
async function pollPerSecond(sets: readonly string[]): Promise<number> {
  return costed('poll', sets.length, () => pollOnce(sets));
}

async function pollOnce(sets: readonly string[]): Promise<number> {
  const start = performance.now();
  const verdicts = await verifyMissionSets(sets, ctx.keys, ctx.expect, now);
  const signals = verdicts.map((v) => {
    if (!v.ok || v.set.kind !== 'lifecycle') throw new Error('bench SET refused');
    return v.set.signal;
  });
  for (const a of await harness.applyVerifiedSignals(signals))
    if (!a.ok || a.result !== 'applied') throw new Error('bench SET not applied');
  return perSecond(sets.length, start);
}

/** How a push is applied: the server's batcher, or (before it) a transaction of its own. */
type PushWay = 'batched' | 'each';

const BEARER_DIGEST = bearerDigest(BEARER);

/** The server's receipt (`receivePush`): the bearer's digest against the registered one, then A3.4 2–4. */
async function push(set: string, way: PushWay, thread = false): Promise<void> {
  const request = { contentType: 'application/secevent+jwt', authorization: `Bearer ${BEARER}`, body: set };
  if (!pushBearerMatches(request, BEARER_DIGEST)) throw new Error('bench bearer refused');
  const parsed = await parseAuthenticatedPush(request, ctx);
  if (!parsed.ok || parsed.set.kind !== 'lifecycle') throw new Error('bench SET refused');
  const signal = parsed.set.signal;
  const path = thread ? paths.thread : paths.inline;
  const applied = await (way === 'batched' ? path.batcher.apply(signal) : path.each(signal));
  if (applied.result !== 'applied') throw new Error(`bench SET ${applied.result}`);
}

/**
 * Where each SET way's time goes, summed over the rounds: process CPU (every thread: the main
 * one, the thread pool's verifications, the checkpoint thread), SETs, the engine's logical
 * transactions (how many SETs share one: a poll answer is one, a batch of pushes one plus its
 * liveness write, a push before the batcher two) and its physical COMMITs (how many SETs share an
 * fsync through the engine's group commit).
 */
const SET_WAYS = [
  'poll',
  'pushes',
  'pushesEach',
  'threadPushes',
  'onePush',
  'raw',
  'setJob',
  'setJobBatched',
  'pushesSaturating',
  'setJobSaturating',
] as const;
interface SetCost {
  cpuMicros: number;
  /** The main thread's own time on a CPU, and runnable but waiting for one (bench/proc-cpu.ts). */
  mainMicros: number;
  mainWaitingMicros: number;
  sets: number;
  transactions: number;
  commits: number;
  batches: number;
}
/** Whether this kernel tells the main thread's own times (Linux schedstat); else they are not printed. */
const MAIN_TIMES = threadTimes() !== undefined;
function emptyCost(): SetCost {
  return {
    cpuMicros: 0,
    mainMicros: 0,
    mainWaitingMicros: 0,
    sets: 0,
    transactions: 0,
    commits: 0,
    batches: 0,
  };
}
const setCost = Object.fromEntries(SET_WAYS.map((w) => [w, emptyCost()])) as Record<
  (typeof SET_WAYS)[number],
  SetCost
>;
/** The batcher each batched way goes through (its batches: the SETs one harness transaction took). */
const batcherOf: Partial<Record<keyof typeof setCost, SignalBatcher>> = {
  pushes: paths.inline.batcher,
  onePush: paths.inline.batcher,
  pushesSaturating: paths.inline.batcher,
  threadPushes: paths.thread.batcher,
};

async function costed(way: keyof typeof setCost, sets: number, fn: () => Promise<number>): Promise<number> {
  const c = process.cpuUsage();
  const e = way === 'threadPushes' ? threadEngine : engine;
  const batcher = batcherOf[way];
  const before = e.stats();
  const batchesBefore = batcher?.stats.batches ?? 0;
  const main = threadTimes();
  const rate = await fn();
  const used = process.cpuUsage(c);
  const mainAfter = threadTimes();
  const after = e.stats();
  const t = setCost[way];
  t.batches += (batcher?.stats.batches ?? 0) - batchesBefore;
  t.cpuMicros += used.user + used.system;
  if (main !== undefined && mainAfter !== undefined) {
    t.mainMicros += mainAfter.onCpuMicros - main.onCpuMicros;
    t.mainWaitingMicros += mainAfter.waitingMicros - main.waitingMicros;
  }
  t.sets += sets;
  t.transactions += after.transactions - before.transactions;
  t.commits += after.commits - before.commits;
  return rate;
}

/** `lanes` concurrent pushers, each pushing its own Mission's SETs in version order. */
async function pushesPerSecond(
  lanes: readonly (readonly string[])[],
  way: PushWay,
  thread = false,
  key: keyof typeof setCost = thread ? 'threadPushes' : way === 'each' ? 'pushesEach' : 'pushes',
): Promise<number> {
  const count = lanes.reduce((a, l) => a + l.length, 0);
  return costed(key, count, async () => {
    const start = performance.now();
    await Promise.all(
      lanes.map(async (lane) => {
        for (const set of lane) await push(set, way, thread);
      }),
    );
    return perSecond(count, start);
  });
}

/** The server's path for a lone push: the batcher, which starts it at once (a batch of one). */
async function onePushAtATime(sets: readonly string[]): Promise<number> {
  return costed('onePush', sets.length, async () => {
    const start = performance.now();
    for (const set of sets) await push(set, 'batched');
    return perSecond(sets.length, start);
  });
}

function rawPerSecond(sets: readonly string[]): number {
  const start = performance.now();
  for (const set of sets) if (!source.rawVerify(set)) throw new Error('raw verify failed');
  return perSecond(sets.length, start);
}

async function rawInFlightPerSecond(sets: readonly string[]): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < sets.length; i += 32) {
    const ok = await Promise.all(sets.slice(i, i + 32).map((s) => source.rawVerifyAsync(s)));
    if (ok.includes(false)) throw new Error('raw verify failed');
  }
  return perSecond(sets.length, start);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (x: number): string => Math.round(x).toLocaleString('en-US').padStart(7);

function report(
  name: string,
  b: number[],
  r: number[],
  baseline: string,
  target: number | null,
  ratios?: number[],
) {
  const result = {
    name,
    baseline,
    baton: median(b),
    raw: median(r),
    ratio: median(ratios ?? b.map((x, i) => x / r[i]!)),
    target,
  };
  console.log(
    `${name.padEnd(22)} baton ${fmt(result.baton)} ops/s   ${baseline.padEnd(30)} ${fmt(result.raw)} ops/s   ratio ${result.ratio.toFixed(2)}x (${target === null ? 'beside' : `${result.ratio >= target ? 'meets' : 'BELOW'} target ${target}x`})`,
  );
  return result;
}

/** Every figure a round records: the entries, the costed SET ways and the plain-SQL floors. */
const SIDES = [
  'gated',
  'ungated',
  'entryRatio',
  ...SET_WAYS,
  'rawInFlight',
  'perSet',
  'perBatch',
  'concurrent',
  'verifiedConcurrent',
] as const;
type Side = (typeof SIDES)[number];
const m = Object.fromEntries(SIDES.map((k) => [k, [] as number[]])) as Record<Side, number[]>;

/**
 * One side's entries under callgrind: WARM warm-up entries of each side, then callgrind_control
 * switches instrumentation on for BENCH_CALLGRIND_ENTRIES (default 100) entries of `side` only
 * and dumps; the count divided by their number is printed (the first part of the dump is what was
 * counted). A longer window averages more of the garbage collector's and the checkpoints' chance
 * visits (the ±10 k per entry between runs). Each is the one reservation of a lineage of its
 * own (`reservedAlone`, as in the timed rounds): 100 pending in one lineage made every entry's
 * open count scan them, ~0.4 M instructions on both sides.
 */
const WINDOW = Number(process.env['BENCH_CALLGRIND_ENTRIES'] ?? 100);

async function instructionsPerEntry(side: 'gated' | 'ungated'): Promise<void> {
  const { execFileSync } = await import('node:child_process');
  const { readdirSync, readFileSync } = await import('node:fs');
  await warmEntries();
  const window: Reserved[] = [];
  for (let i = 0; i < WINDOW; i++) window.push(await reservedAlone(side === 'gated'));
  const ctl = (...a: string[]) =>
    execFileSync('callgrind_control', [...a, String(process.pid)], { stdio: 'ignore' });
  ctl('-i', 'on');
  for (const r of window) await svc.enter({ credential: r.exec.credential, occurrenceId: r.id });
  ctl('-i', 'off');
  ctl('-d', side);
  const dump = readdirSync('.').find((f) => f === `callgrind.out.${process.pid}.1`);
  const totals = dump === undefined ? null : /^totals: (\d+)/m.exec(readFileSync(dump, 'utf8'));
  if (dump === undefined || totals === null) {
    console.log(`${side} entry: no callgrind dump`);
    return;
  }
  // With --single-threaded, V8's optimizing compiler runs on this thread inside the window (about
  // a quarter of the count, and not the same on both sides): printed apart, so the comparison can
  // be made on the entries' own instructions too.
  const annotated = execFileSync('callgrind_annotate', ['--inclusive=yes', dump], { encoding: 'utf8' });
  // The garbage collector's scavenges land in the window by chance (±10 k per entry between
  // runs): printed apart too.
  const inclusive = (fn: string): number => {
    const m = new RegExp(`^\\s*([\\d,]+) \\([^)]*\\)\\s+\\S*${fn}\\(`, 'm').exec(annotated);
    return m === null ? 0 : Number(m[1]!.replaceAll(',', ''));
  };
  const all = Number(totals[1]);
  const compiled = inclusive('Compiler::CompileOptimized');
  const collected = inclusive('Heap::CollectGarbage');
  const per = (x: number): number => Math.round(x / WINDOW);
  console.log(
    `${side} entry: ${per(all)} instructions per entry, of which V8's optimizing compiler ${per(compiled)} and its garbage collector ${per(collected)} (without them ${per(all - compiled - collected)})`,
  );
}

const callgrindSide = process.env['BENCH_CALLGRIND'];
try {
  if (callgrindSide === 'gated' || callgrindSide === 'ungated') {
    await instructionsPerEntry(callgrindSide);
  } else await runRounds();
} finally {
  await engine.close();
  await threadEngine.close();
  rmSync(dir, { recursive: true, force: true });
}

/**
 * WARM untimed entries of each side, alternated (their CPU is not counted either), in a lineage of
 * their own: the entries they leave in flight are counted by no measured entry (`Reserved`).
 */
async function warmEntries(): Promise<void> {
  const warm = await svc.takeover({ lineage: 'bench-warm' });
  for (let i = 0; i < WARM; i++) {
    for (const governed of [true, false]) {
      await svc.enter({ credential: warm.credential, occurrenceId: await reserved(governed, warm) });
    }
  }
}

type SetWay = Exclude<Side, 'gated' | 'ungated' | 'entryRatio'>;

/** `lanes` lanes (default PUSHES) of `count` SETs in all (default PER_ROUND), a Mission each. */
async function lanesOf(tag: string, lanes = PUSHES, count = PER_ROUND): Promise<string[][]> {
  const sets = await batchOf(count, (i) => missionOf(`${tag}${i % lanes}`));
  return Array.from({ length: lanes }, (_, l) => sets.filter((_, i) => i % lanes === l));
}

/** One round's SET ways, each answering its SETs per second; `tag` prefixes their Missions. */
async function setWays(tag: string): Promise<[SetWay, () => Promise<number>][]> {
  const polled = await batchOf(PER_ROUND, () => missionOf(`${tag}poll`));
  const lanes = await lanesOf(`${tag}lane`);
  const eachLanes = await lanesOf(`${tag}each`);
  const threadLanes = await lanesOf(`${tag}thread`);
  const single = await batchOf(PER_ROUND, () => missionOf(`${tag}one`));
  const jobLanes = await lanesOf(`${tag}job`);
  const jobBatchLanes = await lanesOf(`${tag}jobBatch`);
  // As many SETs per lane as the PUSHES ways have (PER_ROUND / PUSHES), at SATURATING lanes.
  const satCount = Math.ceil((PER_ROUND * SATURATING) / PUSHES);
  const satLanes = await lanesOf(`${tag}sat`, SATURATING, satCount);
  const satJobLanes = await lanesOf(`${tag}satJob`, SATURATING, satCount);
  const rawAsync = (x: string) => source.rawVerifyAsync(x);
  return [
    ['poll', () => pollPerSecond(polled)],
    ['pushes', () => pushesPerSecond(lanes, 'batched')],
    ['pushesEach', () => pushesPerSecond(eachLanes, 'each')],
    ['threadPushes', () => pushesPerSecond(threadLanes, 'batched', true)],
    ['onePush', () => onePushAtATime(single)],
    ['raw', () => costed('raw', polled.length, () => Promise.resolve(rawPerSecond(polled)))],
    ['rawInFlight', () => rawInFlightPerSecond(polled)],
    ['perSet', () => ceilings.perSet(single)],
    ['perBatch', () => ceilings.perBatch(polled)],
    ['concurrent', () => ceilings.concurrent(lanes)],
    ['verifiedConcurrent', () => ceilings.verifiedConcurrent(lanes, rawAsync)],
    ['setJob', () => costed('setJob', PER_ROUND, () => setJob.perSet(jobLanes, rawAsync))],
    [
      'setJobBatched',
      () => costed('setJobBatched', PER_ROUND, () => setJob.batched(jobBatchLanes, rawAsync)),
    ],
    ['pushesSaturating', () => pushesPerSecond(satLanes, 'batched', false, 'pushesSaturating')],
    [
      'setJobSaturating',
      () => costed('setJobSaturating', satCount, () => setJob.batched(satJobLanes, rawAsync)),
    ],
  ];
}

/**
 * WARM_SET_ROUNDS untimed rounds of every SET way, on Missions of their own, then the CPU and
 * commit counters start from zero. The old warm-up (ten SETs of the poll and ten single pushes,
 * none of the concurrent ones) left V8's optimizing compiler running on its background threads
 * through the timed pushes: callgrind counted 0.7 M instructions there per pushed SET after 300
 * warm pushes, 0.14 M after 3,300, on a machine with two cores (docs/harness.md "Session 13").
 */
async function warmSetWays(): Promise<void> {
  for (let r = 0; r < WARM_SET_ROUNDS; r++) for (const [, way] of await setWays('warm-')) await way();
  for (const t of Object.values(setCost)) Object.assign(t, emptyCost());
}

async function runRounds(): Promise<void> {
  // Warm-up, untimed: both entry paths, then every SET way.
  await warmEntries();
  await warmSetWays();
  for (let round = 0; round < ROUNDS; round++) {
    const g: Reserved[] = [];
    const u: Reserved[] = [];
    for (let i = 0; i < PER_ROUND; i++) {
      g.push(await reservedAlone(true));
      u.push(await reservedAlone(false));
    }
    const steps: (() => Promise<void>)[] = [
      async () => {
        const [pg, pu, ratio] = await entries(g, u);
        m.gated.push(pg);
        m.ungated.push(pu);
        m.entryRatio.push(ratio);
      },
      ...(await setWays('')).map(
        ([key, way]) =>
          async () =>
            void m[key].push(await way()),
      ),
    ];
    for (const step of round % 2 === 0 ? steps : [...steps].reverse()) await step();
  }
  console.log(`Mission harness on SQLite, ${ROUNDS} rounds x ${PER_ROUND} ops, medians`);
  const results = [
    report('gated entry', m.gated, m.ungated, 'ungated entry', 0.9, m.entryRatio),
    report(`SET poll (${PER_ROUND}/batch)`, m.poll, m.raw, 'raw ES256 verify', 0.5),
    // Beside, not judged: each pusher waits for its batch's COMMIT, so PUSHES in flight measure a
    // latency (Little's law), not SETs ingested per second; the target is read saturated, below.
    report(`SET ${PUSHES} pushes`, m.pushes, m.raw, 'raw ES256 verify', null),
    report(`SET ${PUSHES} pushes`, m.pushes, m.pushesEach, `${PUSHES} pushes, a transaction each`, null),
    report(`SET ${PUSHES} pushes, a tx each`, m.pushesEach, m.raw, 'raw ES256 verify', null),
    // The opt-in writer thread (`--sqlite-writer thread`), beside: the target is the default's.
    report(`SET ${PUSHES} pushes, writer thread`, m.threadPushes, m.raw, 'raw ES256 verify', null),
    report(
      `SET ${PUSHES} pushes, writer thread`,
      m.threadPushes,
      m.pushes,
      `${PUSHES} pushes, inline writer`,
      null,
    ),
    report(`SET poll (${PER_ROUND}/batch)`, m.poll, m.rawInFlight, 'raw ES256, 32 in flight', null),
    report(`SET poll (${PER_ROUND}/batch)`, m.poll, m.perBatch, 'plain SQL, 1 COMMIT per batch', null),
    report(`SET ${PUSHES} pushes`, m.pushes, m.concurrent, `plain SQL, ${PUSHES} lanes, group commit`, null),
    report(
      `SET ${PUSHES} pushes`,
      m.pushes,
      m.verifiedConcurrent,
      `raw verify + plain SQL, ${PUSHES} lanes`,
      null,
    ),
    report(`SET ${PUSHES} pushes`, m.pushes, m.setJob, `the job in plain SQL, a tx per SET`, null),
    report(`SET ${PUSHES} pushes`, m.pushes, m.setJobBatched, `the job in plain SQL, batched`, null),
    report(`the job in plain SQL, a tx per SET`, m.setJob, m.raw, 'raw ES256 verify', null),
    report(`the job in plain SQL, batched`, m.setJobBatched, m.raw, 'raw ES256 verify', null),
    report(`SET ${SATURATING} pushes (saturating)`, m.pushesSaturating, m.raw, 'raw ES256 verify', 0.5),
    report(
      `SET ${SATURATING} pushes (saturating)`,
      m.pushesSaturating,
      m.setJobSaturating,
      `the job in plain SQL, ${SATURATING} lanes`,
      null,
    ),
    report(`the job in plain SQL, ${SATURATING} lanes`, m.setJobSaturating, m.raw, 'raw ES256 verify', null),
    report('SET one push at a time', m.onePush, m.raw, 'raw ES256 verify', null),
    report('SET one push at a time', m.onePush, m.perSet, 'plain SQL, 1 COMMIT per SET', null),
  ];
  const cost = Object.fromEntries(
    Object.entries(setCost).map(([way, t]) => [
      way,
      {
        cpuMicrosPerSet: t.cpuMicros / t.sets,
        // null, not 0, where the kernel does not tell the thread's times.
        mainMicrosPerSet: MAIN_TIMES ? t.mainMicros / t.sets : null,
        mainWaitingMicrosPerSet: MAIN_TIMES ? t.mainWaitingMicros / t.sets : null,
        setsPerTransaction: t.transactions === 0 ? null : t.sets / t.transactions,
        setsPerBatch: t.batches === 0 ? null : t.sets / t.batches,
        setsPerCommit: t.commits === 0 ? null : t.sets / t.commits,
      },
    ]),
  );
  console.log(
    `SET ways, measured reason: CPU per SET ${Object.entries(cost)
      .map(
        ([w, c]) =>
          `${w} ${Math.round(c.cpuMicrosPerSet)} us${c.mainMicrosPerSet === null ? '' : ` (main thread ${Math.round(c.mainMicrosPerSet)} us on a CPU, ${Math.round(c.mainWaitingMicrosPerSet ?? 0)} us waiting for one)`}${c.setsPerCommit === null ? '' : ` (${c.setsPerBatch === null ? '' : `${c.setsPerBatch.toFixed(1)} SETs/batch, `}${c.setsPerTransaction?.toFixed(1)} SETs/transaction, ${c.setsPerCommit.toFixed(1)} SETs/COMMIT)`}`,
      )
      .join(', ')}`,
  );
  const pages = await walPagesPerEntry(20);
  const perEntry = { gated: cpu.gated / cpu.entries, ungated: cpu.ungated / cpu.entries };
  console.log(
    `gated entry, measured reason: WAL pages per COMMIT gated ${pages.gated.toFixed(1)} vs ungated ${pages.ungated.toFixed(1)} (page-bound ceiling ${(pages.ungated / pages.gated).toFixed(2)}x); CPU per entry gated ${Math.round(perEntry.gated)} us vs ungated ${Math.round(perEntry.ungated)} us`,
  );
  console.log(
    JSON.stringify({
      bench: 'missions-entry',
      results,
      setCost: cost,
      entry: { walPages: pages, cpuMicros: perEntry },
    }),
  );
}
