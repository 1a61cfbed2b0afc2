/**
 * CPU per lifecycle of the peer bench's systems, one at a time (issue 16; the load-independent
 * figure beside `npm run bench:peers`' ops/s): a fixed number of jobs at each concurrency, this
 * process's CPU (user + system: the client, Baton in process, the sandbox provider, pg) divided
 * by the jobs (user + system), the CPU of the system's own PostgreSQL backends per job (those
 * serving its database, from /proc), and the pg queries each job made (every `query` a pg client
 * of this process sent; BEGIN and COMMIT counted as they travel, pipelined or not). Throughput is
 * printed but, on a shared machine, only the CPU and query figures mean anything. Under each line:
 * the rows each job inserted and updated per table of that database, and the share of updates
 * that were HOT (no index entry written; pg_stat_user_tables).
 *
 *   node dist/bench/peers/cpu.js   (PEER_CPU_SYSTEMS=baton-pg,baton-http-pg,baton-http-sqlite,folded-pg,folded-status-pg,folded-status-http-pg,dbos  PEER_CPU_JOBS=1500 PEER_CPU_WARM_JOBS=3000
 *   PEER_CPU_CONCURRENCY=1,16; BATON_BENCH_POSTGRES_URL or BATON_TEST_POSTGRES_URL)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createSandboxProvider,
  deployProfile,
  loadProfile,
  sandboxDeployment,
} from '../../src/providers/index.js';
import { benchDatabase, reachablePostgres, type BenchDatabase } from '../support.js';
import { dbosSystem } from './engines.js';
import { foldedCeiling } from './folded.js';
import { foldedStatusCeiling } from './folded-status.js';
import { httpFoldedStatusCeiling } from './http-ceiling.js';
import { withClient } from '../../test/support/postgres-client.js';
import { watchPgQueries } from '../pg-queries.js';
import { childCpuMs, selfCpuMs } from './procs.js';
import {
  batonInProcess,
  batonOverHttp,
  pay,
  plainSqlCeiling,
  type Provider,
  type System,
} from './systems.js';

const SYSTEMS = (process.env['PEER_CPU_SYSTEMS'] ?? 'baton-pg,folded-pg').split(',');
const JOBS = Number(process.env['PEER_CPU_JOBS'] ?? 1500);
/** Untimed jobs before each measurement (was 200: the first system measured paid V8's optimizing). */
const WARM_JOBS = Number(process.env['PEER_CPU_WARM_JOBS'] ?? 3000);
const CONCURRENCY = (process.env['PEER_CPU_CONCURRENCY'] ?? '1,16').split(',').map(Number);
const WORKERS = Math.max(...CONCURRENCY);

// Every query any pg client of this process sends.
let roundTrips = 0;
watchPgQueries(() => {
  roundTrips += 1;
});

/** The backends serving database `db` (pg_stat_activity), and their CPU so far (/proc). */
async function backendsCpuMs(admin: string | undefined, db: string | undefined): Promise<number> {
  if (admin === undefined || db === undefined) return Number.NaN;
  const pids = await withClient(admin, async (c) => {
    const r = await c.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [db]);
    return r.rows.map((x) => x.pid);
  });
  return pids.reduce((sum, pid) => sum + childCpuMs(pid), 0);
}

/**
 * Row writes per job in database `db` since `before` (pg_stat_user_tables, read from that database
 * after its backends flushed their counts): inserts, updates and how many of those were HOT (no
 * index entry written), per table — the index work behind the backends' CPU.
 */
type TableWrites = Map<string, { ins: number; upd: number; hot: number }>;
async function tableWrites(dbUrl: string | undefined): Promise<TableWrites> {
  const out: TableWrites = new Map();
  if (dbUrl === undefined) return out;
  await new Promise((r) => setTimeout(r, 1500)); // idle backends flush their stats after ~1 s
  await withClient(dbUrl, async (c) => {
    const r = await c.query<{ relname: string; ins: string; upd: string; hot: string }>(
      'SELECT relname, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables',
    );
    for (const x of r.rows)
      out.set(x.relname, { ins: Number(x.ins), upd: Number(x.upd), hot: Number(x.hot) });
  });
  return out;
}

function writesLine(before: TableWrites, after: TableWrites, jobs: number): string {
  const parts: string[] = [];
  for (const [name, a] of after) {
    const b = before.get(name) ?? { ins: 0, upd: 0, hot: 0 };
    const ins = (a.ins - b.ins) / jobs;
    const upd = (a.upd - b.upd) / jobs;
    const hot = a.hot - b.hot;
    if (ins + upd < 0.05) continue;
    const ratio = a.upd > b.upd ? ` (${((100 * hot) / (a.upd - b.upd)).toFixed(0)}% HOT)` : '';
    parts.push(`${name} ins ${ins.toFixed(1)} upd ${upd.toFixed(1)}${ratio}`);
  }
  return `    rows per job: ${parts.join('; ')}`;
}

/**
 * `PEER_CPU_CALLGRIND=1` with the server child under `PEER_SERVE_EXEC="valgrind --tool=callgrind
 * --instr-atstart=no"` (and `PEER_SERVE_NODE_ARGS=--single-threaded`): the child's instructions are
 * counted over the measured jobs only (callgrind_control turns counting on and zeroes it here, reads
 * the counters after them) and printed per job. Load-independent, unlike the CPU figures.
 */
function callgrindWindow(pid: number | undefined): ((jobs: number) => string) | undefined {
  if (process.env['PEER_CPU_CALLGRIND'] !== '1' || pid === undefined) return undefined;
  const control = (...args: string[]) =>
    execFileSync('callgrind_control', [...args, String(pid)], { stdio: ['ignore', 'pipe', 'ignore'] });
  control('-i', 'on');
  control('-z');
  return (jobs) => {
    const out = control('-e', 'Ir').toString('utf8');
    control('-i', 'off');
    const threads = [...out.matchAll(/^\s*Th \d+\s+([\d,]+)/gm)].map((m) =>
      Number(m[1]?.replaceAll(',', '')),
    );
    if (threads.length === 0) return `  (no callgrind counters: ${out.trim()})`;
    const total = threads.reduce((x, y) => x + y, 0);
    return `  server instructions ${(total / jobs / 1000).toFixed(0)} k/job`;
  };
}

let seq = 0;
/** `db`: the system's database, whose backends' CPU is counted too (NaN: none). */
async function measure(
  s: System,
  c: number,
  jobs: number,
  admin?: string,
  db?: string,
  dbUrl?: string,
): Promise<string> {
  // Warm-up, at the concurrency measured: every pooled connection (and backend) exists after it,
  // and V8 has optimized the system's code (its first few thousand jobs; run.ts WARM_JOBS).
  await Promise.all(
    Array.from({ length: c }, async (_, w) => {
      for (let i = 0; i < Math.ceil(WARM_JOBS / c); i++) await s.job(w, ++seq);
    }),
  );
  const writes0 = await tableWrites(dbUrl);
  const backends0 = await backendsCpuMs(admin, db);
  const counted = callgrindWindow(s.childPid);
  const child0 = s.childCpuMs?.() ?? Number.NaN;
  const usage0 = process.cpuUsage();
  const cpu0 = selfCpuMs();
  const trips0 = roundTrips;
  const t0 = performance.now();
  let left = jobs;
  await Promise.all(
    Array.from({ length: c }, async (_, w) => {
      while (left > 0) {
        left -= 1;
        await s.job(w, ++seq);
      }
    }),
  );
  const ms = performance.now() - t0;
  const instructions = counted?.(jobs) ?? '';
  const cpu = (selfCpuMs() - cpu0) / jobs;
  const usage = process.cpuUsage(usage0);
  const trips = (roundTrips - trips0) / jobs;
  const backends = ((await backendsCpuMs(admin, db)) - backends0) / jobs;
  const child = ((s.childCpuMs?.() ?? Number.NaN) - child0) / jobs;
  const writes = dbUrl === undefined ? '' : `\n${writesLine(writes0, await tableWrites(dbUrl), jobs)}`;
  const split = `user ${(usage.user / 1000 / jobs).toFixed(2)} + system ${(usage.system / 1000 / jobs).toFixed(2)}`;
  const server =
    (Number.isFinite(backends) ? `, its PostgreSQL backends ${backends.toFixed(2)} ms/job` : '') +
    (Number.isFinite(child) ? `, its server process ${child.toFixed(2)} ms/job` : '');
  return `  ${s.name.padEnd(30)} c=${String(c).padStart(2)}  CPU ${cpu.toFixed(2)} ms/job (${split})${server}  pg queries ${trips.toFixed(1)}/job  (${((jobs * 1000) / ms).toFixed(0)} jobs/s, distorted by load)${instructions}${writes}`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-peer-cpu-'));
  const hmac = Buffer.alloc(32, 11);
  const sandbox = createSandboxProvider({ hmacSecret: hmac });
  await sandbox.listen(0, '127.0.0.1');
  const p: Provider = { sandbox, hmac };
  const profile = deployProfile(loadProfile('sandbox-payments'), sandboxDeployment(sandbox));
  const url = await reachablePostgres('peer cpu');
  const dbs: BenchDatabase[] = [];
  let current: string | undefined;
  let currentUrl: string | undefined;
  const db = async (label: string): Promise<string> => {
    if (url === undefined) throw new Error('no PostgreSQL');
    const d = await benchDatabase(url, label);
    dbs.push(d);
    current = new URL(d.url).pathname.slice(1);
    currentUrl = d.url;
    return d.url;
  };
  const makers: Record<string, () => Promise<System>> = {
    'baton-pg': async () =>
      batonInProcess(
        'Baton in-process PostgreSQL',
        p,
        profile,
        { postgres: await db('cpu_inproc'), keyBase: join(dir, 'pg') },
        WORKERS,
      ),
    'baton-sqlite': () =>
      batonInProcess('Baton in-process SQLite', p, profile, { sqlite: join(dir, 'i.db') }, WORKERS),
    // `baton serve --db` as a child: its CPU per job is printed apart ("server").
    'baton-http-sqlite': () =>
      batonOverHttp(
        'Baton HTTP SQLite',
        p,
        profile,
        ['--db', join(dir, 'h.db')],
        sandboxDeployment(sandbox).hmacSecretId ?? '',
        WORKERS,
      ),
    // `baton serve --postgres` as a child: its CPU per job printed apart, its backends counted.
    'baton-http-pg': async () =>
      batonOverHttp(
        'Baton HTTP PostgreSQL',
        p,
        profile,
        ['--postgres', await db('cpu_http'), '--domain-key', join(dir, 'pg-http.domain-key.pem')],
        sandboxDeployment(sandbox).hmacSecretId ?? '',
        WORKERS,
      ),
    'folded-pg': async () => foldedCeiling(p, await db('cpu_folded'), WORKERS),
    // The folded ceiling settled from the authenticated status query (folded-status.ts).
    'folded-status-pg': async () => foldedStatusCeiling(p, profile, await db('cpu_folded_status'), WORKERS),
    // The same behind a bare HTTP server in a child (http-ceiling.ts): its CPU printed as "server".
    'folded-status-http-pg': async () =>
      httpFoldedStatusCeiling(p, profile, await db('cpu_folded_status_http'), WORKERS),
    'plain-pg': async () => plainSqlCeiling(p, { postgres: await db('cpu_floor') }, WORKERS),
    dbos: async () => dbosSystem(p, await db('cpu_dbos')),
    // The payment call alone: what every system's job pays before any durability.
    pay: () =>
      Promise.resolve({
        name: 'the payment call alone',
        job: (_w, n) => pay(p, `pay-${n}`, n),
        close: async () => {},
      }),
  };
  console.log(
    `peer cpu: ${JOBS} jobs per system and concurrency; load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  for (const key of SYSTEMS) {
    const make = makers[key];
    if (make === undefined) throw new Error(`unknown system ${key} (${Object.keys(makers).join(', ')})`);
    current = undefined;
    currentUrl = undefined;
    const s = await make();
    try {
      for (const c of CONCURRENCY)
        console.log(await measure(s, c, c === 1 ? Math.ceil(JOBS / 3) : JOBS, url, current, currentUrl));
    } finally {
      await s.close();
    }
  }
  console.log(
    `load after: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
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
