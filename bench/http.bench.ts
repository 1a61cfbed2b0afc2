/**
 * The guarded lifecycle over HTTP (docs/api.md, docs/scale.md), beside the same transactions as
 * plain SQL in the same run. Guarded: a real `baton serve` process on 127.0.0.1 (SQLite file, or
 * PostgreSQL when reachable — skipped with a printed line otherwise), executors using fetch
 * (undici, keep-alive) with their takeover credentials, and the real sandbox payments provider.
 * One lifecycle = POST /v1/occurrences (create+reserve+bind), POST …/enter, the executor's payment
 * call to the provider, POST …/reconcile (the server asks the pinned status source, verifies the
 * signed answer, and the occurrence resolves). The floor: the three transactions create, enter,
 * observe as plain SQL (bench/floor.ts) in this process, on a separate file or database of the same
 * engine migrated by the same migrations — on SQLite both unbatched (one COMMIT per transaction)
 * and, at concurrency 16, batched (plain SQL, the transactions of one event-loop turn per COMMIT).
 * Concurrency 1 and 16 (16 executors, each its own lineage and budget); rounds alternate the
 * sides so that load from other processes hits all of them.
 *
 * So the guarded side is NOT the store alone: each of its three calls includes an HTTP round trip
 * (request, authentication, JSON in and out), and reconcile includes the server's own
 * HTTP query to the provider's status source and the signature check; the executor's payment call
 * to the provider is timed apart (not in the per-call figures) but is inside every lifecycle, so
 * it is in occurrences/s. The floor has none of that. The ratios below are guarded-over-HTTP over
 * floor, median of the per-round ratios, and the targets of issue 5 are judged on them:
 * - SQLite, concurrency 16: ≥ 4× the unbatched floor, with p99 ≤ 10 ms per call;
 * - PostgreSQL, concurrency 16: ≥ 1,000 guarded occurrences/s.
 * CPU per transaction: the floor's is this process's; the guarded side's is the `baton serve`
 * process's (from /proc, Linux; left out elsewhere) — neither counts PostgreSQL's own.
 * Compare with bench/store-concurrency.bench.ts (the same, in-process, without HTTP).
 *
 *   node --import tsx bench/http.bench.ts   (BENCH_ROUND_MS=2000 BENCH_ROUNDS=3;
 *   BENCH_ENGINES=sqlite,postgres; BATON_BENCH_POSTGRES_URL or BATON_TEST_POSTGRES_URL)
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EntryTicket } from '../src/occurrences/index.js';
import {
  createSandboxProvider,
  deployProfile,
  HttpProviderAdapter,
  loadProfile,
  NO_KEYS,
  sandboxDeployment,
  sandboxEntryUrl,
} from '../src/providers/index.js';
import { openPostgresFloor, openSqliteFloor } from './floor.js';
import { domain } from './occurrences-fixtures.js';
import {
  benchDatabase,
  compare,
  percentile,
  reachablePostgres,
  postgresSettings,
  rate,
  ratio,
  redact,
  report,
  tally,
  verdict,
  type Lifecycle,
  type Plan,
  type Results,
  type Side,
} from './support.js';

const PLAN: Plan = {
  roundMs: Number(process.env['BENCH_ROUND_MS'] ?? 2000),
  rounds: Number(process.env['BENCH_ROUNDS'] ?? 3),
  warmupMs: 400,
};
const ENGINES = (process.env['BENCH_ENGINES'] ?? 'sqlite,postgres').split(',');
const EXECUTORS = 16;
const HMAC = Buffer.alloc(32, 9);
const GUARDED = 'guarded over HTTP';

type Json = Record<string, unknown>;

/** The `baton` CLI next to this file: TypeScript under tsx, or the compiled one under dist/. */
function cli(): string[] {
  const here = fileURLToPath(import.meta.url);
  const root = join(dirname(here), '..');
  return here.endsWith('.ts')
    ? [...process.execArgv, join(root, 'src/cli/main.ts')]
    : [join(root, 'src/cli/main.js')];
}

interface Server {
  readonly url: string;
  readonly admin: string;
  /** CPU time (user + system, all threads) of the `baton serve` process so far, in ms; NaN if unknown. */
  cpuMs(): number;
  stop(): Promise<void>;
}

const CLOCK_TICKS = clockTicks();

function clockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100; // USER_HZ on every Linux ABI in use
  }
}

/** Fields 14 and 15 of /proc/<pid>/stat (utime, stime, in clock ticks); NaN off Linux. */
function processCpuFromProc(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: count from the last ')', where field 3 starts.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** Start `baton serve` and read its first-admin token and listening line from stdout. */
function serve(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Server> {
  const child: ChildProcess = spawn(
    process.execPath,
    [...cli(), 'serve', '--port', '0', '--log-level', 'warn', ...args],
    {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    let admin = '';
    child.once('exit', (code) => reject(new Error(`baton serve exited with ${String(code)}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      admin ||= /initial admin token[^:]*: (\S+)/.exec(out)?.[1] ?? '';
      const listening = /baton listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (listening === undefined) return;
      child.removeAllListeners('exit');
      resolve({
        url: listening,
        admin,
        cpuMs: () => processCpuFromProc(child.pid),
        stop: () =>
          new Promise<void>((done) => {
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

async function call(
  server: Server,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<Json> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await response.json()) as Json;
  if (response.status >= 300)
    throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

interface Executor {
  readonly credential: string;
  readonly authority: string;
}

/** What differs between the engines: how to start the server, the floor sides, the target lines. */
interface EngineRun {
  readonly label: string;
  readonly store: readonly string[];
  /** The plain-SQL sides at concurrency `c`. */
  floors(c: number): Side[];
  /** Print the ratios and the target verdicts at concurrency `c`. */
  judge(c: number, results: Results): void;
}

/**
 * Configure the server (domain, profile, one authority and one lineage per executor) and return
 * the guarded lifecycle over HTTP, with the provider's payment-call times collected into `provider`.
 */
async function guardedOverHttp(
  server: Server,
  profile: ReturnType<typeof deployProfile>,
  origin: string,
  provider: number[],
): Promise<Lifecycle> {
  await call(server, 'PUT', '/v1/domain', server.admin, domain());
  await call(server, 'POST', '/v1/profiles', server.admin, profile);
  const executors: Executor[] = [];
  for (let e = 0; e < EXECUTORS; e++) {
    const authority = `payouts-${e}`;
    await call(server, 'POST', '/v1/authorities', server.admin, {
      id: authority,
      unit: 'EUR-cents',
      total: 1e12,
    });
    const t = await call(server, 'POST', `/v1/lineages/bench-agent-${e}/takeover`, server.admin);
    executors.push({ credential: String(t['credential']), authority });
  }
  const adapter = new HttpProviderAdapter(profile, { entryUrl: sandboxEntryUrl(origin), keys: NO_KEYS });
  return async (w, n) => {
    const x = executors[w] as Executor;
    const t0 = performance.now();
    const created = await call(server, 'POST', '/v1/occurrences', x.credential, {
      creationKey: `k-${n}`,
      provider: { profileId: profile.id, profileVersion: profile.version },
      request: { amount: 100 + (n % 50), currency: 'eur', payee: `payee-${n % 97}`, invoice: `inv-${n}` },
      authority: { id: x.authority, amount: 100 + (n % 50) },
    });
    const id = String((created['occurrence'] as Json)['id']);
    const t1 = performance.now();
    const ticket = (await call(
      server,
      'POST',
      `/v1/occurrences/${id}/enter`,
      x.credential,
    )) as unknown as EntryTicket;
    const t2 = performance.now();
    const sent = await adapter.send(ticket);
    if (sent.httpStatus === null || sent.httpStatus >= 300)
      throw new Error(`the payment call failed: ${sent.detail}`);
    const t3 = performance.now();
    const r = await call(server, 'POST', `/v1/occurrences/${id}/reconcile`, x.credential);
    if ((r['occurrence'] as Json)['outcome'] !== 'success') throw new Error('the lifecycle did not resolve');
    provider.push(t3 - t2);
    return [t1 - t0, t2 - t1, performance.now() - t3];
  };
}

interface CommitCounters {
  readonly commits: number;
  readonly transactions: number;
}

/** The server's group-commit counters from /metrics (SQLite only; undefined elsewhere). */
async function commitCounters(server: Server): Promise<CommitCounters | undefined> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const read = (name: string): number | undefined => {
    const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
    return m === null ? undefined : Number(m[1]);
  };
  const commits = read('baton_store_commits_total');
  const transactions = read('baton_store_committed_transactions_total');
  return commits === undefined || transactions === undefined ? undefined : { commits, transactions };
}

function printGroupCommit(before: CommitCounters | undefined, after: CommitCounters | undefined): void {
  if (before === undefined || after === undefined) return;
  const commits = after.commits - before.commits;
  const txs = after.transactions - before.transactions;
  console.log(
    `        (the server's group commit in the measured rounds: ${txs} transactions in ${commits} COMMITs, ${(txs / Math.max(1, commits)).toFixed(1)} per COMMIT)`,
  );
}

async function bench(run: EngineRun): Promise<void> {
  const sandbox = createSandboxProvider({ hmacSecret: HMAC });
  const origin = await sandbox.listen(0, '127.0.0.1');
  const deployment = sandboxDeployment(sandbox);
  const secrets = `${deployment.hmacSecretId ?? ''}=${HMAC.toString('base64url')}`;
  const server = await serve(run.store, { BATON_HMAC_SECRETS: secrets });
  try {
    const profile = deployProfile(loadProfile('sandbox-payments'), deployment);
    const provider: number[] = [];
    const guarded: Side = {
      name: GUARDED,
      run: await guardedOverHttp(server, profile, origin, provider),
      cpuMs: () => server.cpuMs(),
    };
    for (const c of [1, EXECUTORS]) {
      let before: Promise<CommitCounters | undefined> = Promise.resolve(undefined);
      const plan: Plan = {
        ...PLAN,
        afterWarmup: () => {
          provider.length = 0;
          before = commitCounters(server);
        },
      };
      const results = await compare(`${run.label} c=${c}`, [...run.floors(c), guarded], c, plan);
      report(results);
      printGroupCommit(await before, await commitCounters(server));
      const r = rate(results.get(GUARDED)?.t ?? tally());
      console.log(
        `        (${GUARDED}: the executor's payment call to the provider, not in its per-call figures: p50 ${percentile(provider, 50).toFixed(2)} ms, p99 ${percentile(provider, 99).toFixed(2)} ms; per second ${(r * 3).toFixed(0)} calls to Baton, ${r.toFixed(0)} payment calls and ${r.toFixed(0)} status queries (the server's, in reconcile) to the provider)`,
      );
      run.judge(c, results);
    }
  } finally {
    await server.stop();
    await sandbox.close();
  }
}

function ratioLine(c: number, results: Results, floor: string): string {
  return `  => c=${c} ${GUARDED}/${floor} ${ratio(results, GUARDED, floor).toFixed(2)}x, median of rounds`;
}

async function benchSqlite(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-http-bench-'));
  const floor = await openSqliteFloor(join(dir, 'floor.db'), EXECUTORS);
  try {
    console.log(
      `SQLite ${String(floor.db.prepare('SELECT sqlite_version() AS v').pluck().get())}, WAL, synchronous=FULL, files in ${tmpdir()} (the server's and the floor's):`,
    );
    const unbatched: Side = { name: 'floor (unbatched)', run: floor.unbatched };
    const batched: Side = { name: 'floor (batched)', run: floor.batched };
    await bench({
      label: 'sqlite',
      store: ['--db', join(dir, 'baton.db')],
      floors: (c) => (c === 1 ? [unbatched] : [unbatched, batched]),
      judge: (c, results) => {
        if (c === 1) {
          console.log(`${ratioLine(c, results, unbatched.name)} (no target over HTTP at c=1)`);
          return;
        }
        const r = ratio(results, GUARDED, unbatched.name);
        const p99 = percentile(results.get(GUARDED)?.t.calls ?? [], 99);
        console.log(
          `  => c=${c} ${GUARDED}/unbatched floor ${r.toFixed(2)}x (target >= 4x): ${verdict(r >= 4)}; ${GUARDED}/batched floor ${ratio(results, GUARDED, batched.name).toFixed(2)}x`,
        );
        console.log(
          `  => c=${c} ${GUARDED} p99 ${p99.toFixed(2)} ms per call (target <= 10 ms): ${verdict(p99 <= 10)}`,
        );
      },
    });
  } finally {
    floor.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchPostgres(): Promise<void> {
  const url = await reachablePostgres('http bench');
  if (url === undefined) return;
  console.log(
    `PostgreSQL at ${redact(url)}: ${await postgresSettings(url)}; baton serve and the floor with ${EXECUTORS + 2} connections each:`,
  );
  const gdb = await benchDatabase(url, 'http');
  const fdb = await benchDatabase(url, 'http_floor');
  const dir = mkdtempSync(join(tmpdir(), 'baton-http-bench-'));
  try {
    const floor = await openPostgresFloor(fdb.url, EXECUTORS);
    try {
      await bench({
        label: 'postgres',
        store: [
          '--postgres',
          gdb.url,
          '--domain-key',
          join(dir, 'bench.domain-key.pem'),
          '--pool',
          String(EXECUTORS + 2),
        ],
        floors: () => [{ name: 'floor', run: floor.lifecycle }],
        judge: (c, results) => {
          if (c === 1) {
            console.log(ratioLine(c, results, 'floor'));
            return;
          }
          const g = rate(results.get(GUARDED)?.t ?? tally());
          console.log(
            `${ratioLine(c, results, 'floor')}; ${GUARDED} ${g.toFixed(0)}/s (target >= 1000/s): ${verdict(g >= 1000)}`,
          );
        },
      });
    } finally {
      await floor.close();
    }
  } finally {
    await gdb.drop();
    await fdb.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(
    `HTTP bench: baton serve on 127.0.0.1 (a child process), fetch with keep-alive, sandbox provider, beside the plain-SQL floor in this process; ${PLAN.rounds} alternating rounds of ${PLAN.roundMs} ms per side, concurrency 1 and ${EXECUTORS}; node ${process.version}`,
  );
  console.log(
    `  (${GUARDED} includes three HTTP round trips per lifecycle, the server's status query in reconcile, and — in occurrences/s only — the executor's payment call; the floor is the SQL alone. CPU: the floor's is this process's, ${GUARDED}'s the baton serve process's)`,
  );
  if (ENGINES.includes('sqlite')) await benchSqlite();
  if (ENGINES.includes('postgres')) await benchPostgres();
}

await main();
