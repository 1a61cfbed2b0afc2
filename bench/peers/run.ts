/**
 * `npm run bench:peers` (issue 16 §7): Baton (in process and over HTTP, on SQLite and PostgreSQL),
 * DBOS Transact and Restate on the same job — ONE payment call that a crash must never duplicate —
 * against the SAME sandbox provider (one server, in this process), at concurrency 1 and 16, the
 * systems alternated round by round. Prints ops/s, p50/p99 per job, CPU per job of this process
 * (clients, SDKs, the sandbox) and of each system's own child process (/proc), the Baton/peer
 * ratios with the targets, and what each system guarantees. Bounded: BENCH_ROUNDS rounds
 * of BENCH_ROUND_MS per system and concurrency; a peer that cannot run is skipped with one line.
 *
 *   npm run bench:peers   (BENCH_ROUND_MS=2000 BENCH_ROUNDS=3 BENCH_CONCURRENCY=1,16 BENCH_WARM_JOBS=3000
 *   BENCH_SYSTEMS=postgresql,dbos (case-insensitive substrings); BENCH_CHECKPOINT=0 (no CHECKPOINT
 *   before each round, bench/support.ts); BENCH_DOMAIN_LIMIT=1000; BATON_BENCH_POSTGRES_URL or
 *   BATON_TEST_POSTGRES_URL)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createSandboxProvider,
  deployProfile,
  loadProfile,
  sandboxDeployment,
} from '../../src/providers/index.js';
import {
  benchDatabase,
  checkpointBeforeRounds,
  percentile,
  postgresSettings,
  reachablePostgres,
  type BenchDatabase,
} from '../support.js';
import { DEFAULT_SQLITE_WRITER } from '../../src/cli/commands/serve.js';
import { dbosSystem, restateSystem } from './engines.js';
import { FOLDED, foldedCeiling } from './folded.js';
import { FOLDED_STATUS, foldedStatusCeiling } from './folded-status.js';
import { selfCpuMs } from './procs.js';
import { batonInProcess, batonOverHttp, plainSqlCeiling, type Provider, type System } from './systems.js';
import { breakdown, scrape } from './breakdown.js';
import { HTTP_CEILING, HTTP_FOLDED_STATUS, httpCeiling, httpFoldedStatusCeiling } from './http-ceiling.js';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const ROUND_MS = Number(process.env['BENCH_ROUND_MS'] ?? 2000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const CONCURRENCY = (process.env['BENCH_CONCURRENCY'] ?? '1,16').split(',').map(Number);
const WORKERS = Math.max(...CONCURRENCY);
/** BENCH_SYSTEMS=dbos,postgresql: only the systems whose name contains one of these (case-insensitive). */
const ONLY = (process.env['BENCH_SYSTEMS'] ?? '')
  .split(',')
  .map((x) => x.trim().toLowerCase())
  .filter((x) => x !== '');
/**
 * Untimed jobs of every system, at WORKERS concurrent workers, before anything is measured. V8 keeps
 * optimizing a system's code for its first few thousand jobs, and Baton's code is the largest:
 * bench/peers/cpu.js, six runs of 1,500 jobs of Baton in process on PostgreSQL one after another in
 * one process, read 4.23, 3.11, 2.45, 2.49, 2.64, 3.14 ms of CPU per job; DBOS Transact's three runs
 * 2.91, 2.24, 2.31. The old warm-up, 300 ms a system (under 100 jobs at 16 workers), left every
 * system partly cold in the rounds, Baton the most (docs/scale.md, session 13).
 */
const WARM_JOBS = Number(process.env['BENCH_WARM_JOBS'] ?? 3000);
/** The whole run stops by itself after this, whatever is left. */
const HARD_DEADLINE_MS = Number(process.env['BENCH_DEADLINE_MS'] ?? 900_000);

interface Tally {
  jobs: number;
  ms: number;
  selfCpu: number;
  childCpu: number;
  latencies: number[];
  rounds: number[];
  failures: number;
}

const fresh = (): Tally => ({
  jobs: 0,
  ms: 0,
  selfCpu: 0,
  childCpu: 0,
  latencies: [],
  rounds: [],
  failures: 0,
});
let seq = 0;

/** WARM_JOBS jobs of `s` over WORKERS workers, untimed; a failure is printed as a round prints it. */
async function warm(s: System): Promise<void> {
  const start = performance.now();
  let left = WARM_JOBS;
  let failures = 0;
  await Promise.all(
    Array.from({ length: WORKERS }, async (_, w) => {
      while (left-- > 0) {
        try {
          await s.job(w, ++seq);
        } catch (error) {
          failures += 1;
          if (failures <= 3) console.log(`  ${s.name}: a warm-up job failed: ${String(error)}`);
        }
      }
    }),
  );
  console.log(
    `  warmed ${s.name}: ${WARM_JOBS} jobs in ${((performance.now() - start) / 1000).toFixed(1)} s`,
  );
}

async function round(s: System, c: number, ms: number, t: Tally): Promise<number> {
  const start = performance.now();
  const cpu0 = selfCpuMs();
  const child0 = s.childCpuMs?.() ?? Number.NaN;
  let done = 0;
  await Promise.all(
    Array.from({ length: c }, async (_, w) => {
      while (performance.now() - start < ms) {
        const t0 = performance.now();
        try {
          await s.job(w, ++seq);
          t.latencies.push(performance.now() - t0);
          done += 1;
        } catch (error) {
          t.failures += 1;
          if (t.failures <= 3) console.log(`  ${s.name}: a job failed: ${String(error)}`);
        }
      }
    }),
  );
  const elapsed = performance.now() - start;
  t.jobs += done;
  t.ms += elapsed;
  t.selfCpu += selfCpuMs() - cpu0;
  t.childCpu += (s.childCpuMs?.() ?? Number.NaN) - child0;
  const perSecond = (done * 1000) / elapsed;
  t.rounds.push(perSecond);
  return perSecond;
}

function line(name: string, t: Tally): string {
  const ops = ((t.jobs * 1000) / t.ms).toFixed(1).padStart(7);
  const p = (q: number) => percentile(t.latencies, q).toFixed(2);
  const self = (t.selfCpu / Math.max(1, t.jobs)).toFixed(2);
  const child = Number.isFinite(t.childCpu)
    ? ` + child ${(t.childCpu / Math.max(1, t.jobs)).toFixed(2)}`
    : '';
  const failed = t.failures > 0 ? `  (${t.failures} failed)` : '';
  return `  ${name.padEnd(26)} ${ops} ops/s   p50 ${p(50)} ms  p99 ${p(99)} ms   CPU/op: bench process ${self}${child} ms${failed}`;
}

// Issue 16's target for each Baton call at 16 HTTP workers on SQLite.
const CALL_P99_TARGET_MS = 20;

const worstP99 = (calls: ReadonlyMap<string, readonly number[]>): number =>
  Math.max(...[...calls.values()].map((xs) => percentile(xs, 99)));

/**
 * p50/p99 of each Baton call the jobs made, with the verdict where it applies, and beside
 * it the ceiling measured in the same run (http-ceiling.ts): the same two calls as plain SQL
 * behind a bare node:http server.
 */
function callsLine(
  name: string,
  calls: ReadonlyMap<string, readonly number[]>,
  c: number,
  ceiling: ReadonlyMap<string, readonly number[]> | undefined,
): string {
  const parts = [...calls].map(
    ([call, xs]) =>
      `${call} p50 ${percentile(xs, 50).toFixed(2)} ms p99 ${percentile(xs, 99).toFixed(2)} ms (${xs.length})`,
  );
  const worst = worstP99(calls);
  const judged = c === 16 && name.includes('HTTP SQLite');
  if (!judged) return `  ${name}: per call: ${parts.join(', ')}`;
  const met = worst <= CALL_P99_TARGET_MS;
  let verdict = `; target p99 ≤ ${CALL_P99_TARGET_MS} ms per call: ${met ? 'met' : 'NOT met'}`;
  if (ceiling !== undefined && !met) {
    const top = worstP99(ceiling);
    verdict += `; ceiling in this run (${HTTP_CEILING}) p99 ${top.toFixed(2)} ms: the target is ${top <= CALL_P99_TARGET_MS ? 'within' : 'BEYOND'} the ceiling, Baton at ${(worst / top).toFixed(2)}× it`;
  }
  return `  ${name}: per call: ${parts.join(', ')}${verdict}`;
}

const median = (xs: readonly number[]) => percentile(xs, 50);

// Issue 16's targets at 16 workers, as ratios to DBOS Transact (SQLite's is also ≥ 1.0× Restate).
const TARGETS: Readonly<Record<string, number>> = {
  'Baton HTTP SQLite': 1.0,
  'Baton in-process PostgreSQL': 1.5,
  'Baton HTTP PostgreSQL': 1.0,
};

/**
 * The ceiling of the system's engine as a ratio to DBOS, and at 16 workers the target's verdict:
 * a target above the ceiling measured in this same run is said to be so (issue 16 "Done when").
 */
function ceilingVerdict(name: string, c: number, tallies: ReadonlyMap<string, Tally>): string[] {
  const dbos = tallies.get('DBOS Transact');
  // On PostgreSQL both folded ceilings are printed; the one with the status query Baton's job also
  // makes (folded-status.ts) is the one an in-process target is judged against when it ran, and
  // over HTTP the same job behind a bare HTTP server (http-ceiling.ts), when it ran.
  const ceilings: [string, string][] = name.includes('SQLite')
    ? [['ceiling: plain SQL SQLite', 'ceiling (plain SQL SQLite + the call)']]
    : [
        [FOLDED, 'ceiling (PostgreSQL folded + the call)'],
        [FOLDED_STATUS, 'ceiling (PostgreSQL folded + the call + the status query)'],
      ];
  if (name.includes('HTTP'))
    ceilings.push(
      name.includes('SQLite')
        ? [HTTP_CEILING, 'ceiling over HTTP (plain SQL SQLite + the call)']
        : [HTTP_FOLDED_STATUS, 'ceiling over HTTP (PostgreSQL folded + the call + the status query)'],
    );
  const ran = ceilings.filter(([key]) => tallies.has(key));
  if (ran.length === 0) return [];
  const out = ran.map(([key, label]) => `${label} ${ratio(tallies.get(key), dbos).toFixed(2)}× DBOS`);
  const x = ratio(tallies.get(ran.at(-1)?.[0] ?? ''), dbos);
  const target = TARGETS[name];
  if (target === undefined || c !== 16 || !Number.isFinite(x)) return out;
  const got = ratio(tallies.get(name), dbos);
  out.push(`target ≥ ${target.toFixed(1)}× DBOS: ${got >= target ? 'met' : 'NOT met'}`);
  if (x < target) out.push(`the target is ABOVE the ceiling measured in this run (${x.toFixed(2)}×)`);
  return out;
}
function ratio(a: Tally | undefined, b: Tally | undefined): number {
  if (a === undefined || b === undefined) return Number.NaN;
  return median(a.rounds.map((v, i) => v / (b.rounds[i] ?? Number.NaN)));
}

const GUARANTEES = [
  ['', 'Baton', 'DBOS Transact', 'Restate'],
  [
    'payment sent at most once per key after a crash',
    'yes (entry CAS, never re-sent)',
    'if the step re-runs under the same key (provider dedup)',
    'if ctx.run re-runs under the same key (provider dedup)',
  ],
  [
    'an entered call is never re-sent by anyone',
    'yes (AOC-REQ-010)',
    'no: an unrecorded step re-runs',
    'no: an unjournaled ctx.run re-runs',
  ],
  [
    'a stale / replaced worker is fenced before the call',
    'yes (executor generation, AOC-REQ-006)',
    'no',
    'no (single-writer per invocation only)',
  ],
  [
    'outcome settled from the provider’s signed status',
    'yes (pinned status source, AOC-REQ-009)',
    'no (the step’s own return value)',
    'no (the closure’s own return value)',
  ],
  ['authority budget consumed before the call', 'yes (AOC-REQ-012)', 'no', 'no'],
  [
    'durable record',
    'SQLite synchronous=FULL / PostgreSQL',
    'PostgreSQL (system database)',
    'restate-server log on disk (defaults)',
  ],
];

/** /metrics of every system that has one (Baton over HTTP), for the breakdown (breakdown.ts). */
async function scrapes(systems: readonly System[]) {
  const out = new Map<string, Awaited<ReturnType<typeof scrape>>>();
  for (const s of systems) {
    if (s.metricsUrl === undefined) continue;
    try {
      out.set(s.name, await scrape(s.metricsUrl));
    } catch {
      // No breakdown for this one; its figures stand.
    }
  }
  return out;
}

async function main(): Promise<void> {
  setTimeout(() => {
    console.log(`peer bench: hard deadline of ${HARD_DEADLINE_MS} ms reached, stopping`);
    process.exit(2);
  }, HARD_DEADLINE_MS).unref();
  const dir = mkdtempSync(join(tmpdir(), 'baton-peers-'));
  const hmac = Buffer.alloc(32, 11);
  const sandbox = createSandboxProvider({ hmacSecret: hmac });
  await sandbox.listen(0, '127.0.0.1');
  const p: Provider = { sandbox, hmac };
  const deployment = sandboxDeployment(sandbox);
  const profile = deployProfile(loadProfile('sandbox-payments'), deployment);
  const pg = await reachablePostgres('peer bench');
  const dbs: BenchDatabase[] = [];
  const db = async (label: string): Promise<string> => {
    const d = await benchDatabase(pg ?? '', label);
    dbs.push(d);
    return d.url;
  };
  console.log(
    `peer bench: ${ROUNDS} rounds × ${ROUND_MS} ms per system and concurrency (${CONCURRENCY.join(', ')}); load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  if (pg !== undefined) console.log(`PostgreSQL: ${await postgresSettings(pg)}`);
  const checkpoint = checkpointBeforeRounds(pg);
  const systems: System[] = [];
  const tryAdd = async (name: string, make: () => Promise<System | undefined>) => {
    if (ONLY.length > 0 && !ONLY.some((x) => name.toLowerCase().includes(x))) return;
    try {
      const s = await make();
      if (s !== undefined) systems.push(s);
    } catch (error) {
      console.log(`${name}: skipped — ${String(error).split('\n')[0]}`);
    }
  };
  const secretId = deployment.hmacSecretId ?? '';
  await tryAdd('Baton in-process SQLite', () =>
    batonInProcess('Baton in-process SQLite', p, profile, { sqlite: join(dir, 'inproc.db') }, WORKERS),
  );
  await tryAdd('Baton HTTP SQLite', () =>
    batonOverHttp('Baton HTTP SQLite', p, profile, ['--db', join(dir, 'http.db')], secretId, WORKERS),
  );
  // The other place for the write connection than serve's default (docs/store.md "The writer thread").
  const other = DEFAULT_SQLITE_WRITER === 'thread' ? 'inline' : 'thread';
  await tryAdd(`Baton HTTP SQLite writer ${other}`, () =>
    batonOverHttp(
      `Baton HTTP SQLite writer ${other}`,
      p,
      profile,
      ['--db', join(dir, `http-${other}.db`), '--sqlite-writer', other],
      secretId,
      WORKERS,
    ),
  );
  // Before issue 16's checkpoint thread: SQLite checkpoints inside COMMIT, on serve's event loop
  // (the inline writer's choice: serve refuses --sqlite-checkpoints with the writer thread).
  await tryAdd('Baton HTTP SQLite checkpoints sqlite', () =>
    batonOverHttp(
      'Baton HTTP SQLite checkpoints sqlite',
      p,
      profile,
      ['--db', join(dir, 'http-ckpt.db'), '--sqlite-writer', 'inline', '--sqlite-checkpoints', 'sqlite'],
      secretId,
      WORKERS,
    ),
  );
  await tryAdd('ceiling SQLite', () => plainSqlCeiling(p, { sqlite: join(dir, 'floor.db') }, WORKERS));
  await tryAdd(HTTP_CEILING, () => httpCeiling(p, join(dir, 'http-floor.db'), WORKERS));
  if (pg === undefined) console.log('Baton on PostgreSQL, DBOS Transact: skipped — no PostgreSQL');
  else {
    const inproc = await db('peers_inproc');
    await tryAdd('Baton in-process PostgreSQL', () =>
      batonInProcess(
        'Baton in-process PostgreSQL',
        p,
        profile,
        { postgres: inproc, keyBase: join(dir, 'pg-inproc') },
        WORKERS,
      ),
    );
    const http = await db('peers_http');
    await tryAdd('Baton HTTP PostgreSQL', () =>
      batonOverHttp(
        'Baton HTTP PostgreSQL',
        p,
        profile,
        ['--postgres', http, '--domain-key', join(dir, 'pg-http.domain-key.pem')],
        secretId,
        WORKERS,
      ),
    );
    // The ceiling beside the PostgreSQL targets (issue 16 "Done when"): one statement per
    // transition, plain pg, no Baton code (bench/peers/folded.ts). It replaces the unfolded floor
    // (bench/floor.ts one statement at a time), which Baton's 5 calls no longer stay under.
    const foldedUrl = await db('peers_folded');
    await tryAdd('ceiling PostgreSQL folded', () => foldedCeiling(p, foldedUrl, WORKERS));
    // The same, settled from the authenticated status query Baton's job makes (folded-status.ts).
    const statusUrl = await db('peers_folded_status');
    await tryAdd('ceiling PostgreSQL folded + status query', () =>
      foldedStatusCeiling(p, profile, statusUrl, WORKERS),
    );
    // The same again behind a bare HTTP server: the ceiling of Baton over HTTP (http-ceiling.ts).
    const httpStatusUrl = await db('peers_folded_status_http');
    await tryAdd(HTTP_FOLDED_STATUS, () => httpFoldedStatusCeiling(p, profile, httpStatusUrl, WORKERS));
    const dbosUrl = await db('peers_dbos');
    await tryAdd('DBOS Transact', () => dbosSystem(p, dbosUrl));
  }
  await tryAdd('Restate', () => restateSystem(p, join(dir, 'restate')));

  console.log(`\nwarm-up: ${WARM_JOBS} untimed jobs per system at ${WORKERS} workers (BENCH_WARM_JOBS)`);
  for (const s of systems) await warm(s);
  for (const c of CONCURRENCY) {
    console.log(`\nconcurrency ${c}:`);
    for (const s of systems) await round(s, c, 300, fresh()); // warm-up
    const tallies = new Map(systems.map((s) => [s.name, fresh()]));
    for (const s of systems) for (const times of s.calls?.values() ?? []) times.length = 0; // no warm-up
    const lag = new Map(systems.map((s) => [s.name, monitorEventLoopDelay({ resolution: 1 })]));
    const before = await scrapes(systems);
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? systems : [...systems].reverse();
      const parts: string[] = [];
      for (const s of order) {
        await checkpoint();
        const h = lag.get(s.name);
        h?.enable();
        parts.push(`${s.name} ${(await round(s, c, ROUND_MS, tallies.get(s.name) ?? fresh())).toFixed(0)}/s`);
        h?.disable();
      }
      console.log(`  round ${r + 1}/${ROUNDS}: ${parts.join(', ')}`);
    }
    for (const [name, t] of tallies) console.log(line(name, t));
    const after = await scrapes(systems);
    const ceiling = systems.find((s) => s.name === HTTP_CEILING)?.calls;
    for (const s of systems) {
      if (s.calls === undefined) continue;
      console.log(callsLine(s.name, s.calls, c, ceiling));
      const a = before.get(s.name);
      const b = after.get(s.name);
      const seconds = (tallies.get(s.name)?.ms ?? Number.NaN) / 1000; // its own rounds' time
      const lagMs = (lag.get(s.name)?.percentile(99) ?? Number.NaN) / 1e6;
      if (a !== undefined && b !== undefined) for (const l of breakdown(a, b, seconds, lagMs)) console.log(l);
    }
    for (const b of systems.filter((s) => s.name.startsWith('Baton'))) {
      const vs = ['DBOS Transact', 'Restate'].filter((x) => tallies.has(x));
      const rs = vs.map((x) => `${ratio(tallies.get(b.name), tallies.get(x)).toFixed(2)}× ${x}`);
      const cs = ceilingVerdict(b.name, c, tallies);
      if (rs.length > 0) console.log(`  ${b.name}: ${[...rs, ...cs].join(', ')}`);
    }
  }
  console.log(
    '\nstatements per lifecycle: not counted by this bench; test/server/statements.test.ts bounds them (SQLite ≤ 29 statements, PostgreSQL ≤ 6 calls) and prints the counts (docs/scale.md)',
  );
  console.log(
    `${FOLDED}: the job with the least PostgreSQL work Baton's guarantees need, ONE statement per transition (create+reserve+bind+enter, settle; synchronous_commit on), plain pg, the same payment call, no status query, no Baton code: an upper bound for any Node+pg implementation of this job on this machine (bench/peers/folded.ts)`,
  );
  console.log(
    `${FOLDED_STATUS}: the same two statements and payment call, and between them ONE status query as Baton makes it (GET by native key on a keep-alive pool, src/providers/http-client.ts), the answer parsed strictly, its hmac-sha256 signature verified against the profile's pin, bound to the attempt (account, environment, key, request digest, reference pattern), fresh and mapped to a settled status, the settle statement's outcome and reference taken from it; no service code, no JCS of the answer, no second source: the ceiling the in-process PostgreSQL target is judged against (bench/peers/folded-status.ts)`,
  );
  console.log(
    `${HTTP_FOLDED_STATUS}: the same statements, status query and checks behind a bare node:http server in a child process, the two calls on the SDK's keep-alive wire (src/client/http-pool.ts), the payment call from this process between them; no framework, no request validation, no authentication layer, the entered chain's head kept in the server's memory between the calls: the ceiling the HTTP PostgreSQL target is judged against (bench/peers/http-ceiling.ts)`,
  );
  console.log(
    `effects applied by the sandbox: ${sandbox.effects().length} (one per job; the provider deduplicates by key)`,
  );
  console.log('\nwhat each system guarantees for this job:');
  for (const row of GUARANTEES) console.log(`  | ${row.join(' | ')} |`);
  for (const s of systems) await s.close().catch(() => undefined);
  await sandbox.close();
  for (const d of dbs) await d.drop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
