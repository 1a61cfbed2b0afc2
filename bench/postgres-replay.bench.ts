/**
 * PostgreSQL backend CPU per call of ONE lifecycle, Baton against its folded ceiling (issue 16;
 * docs/scale.md "Backend CPU per call, replayed"). The peer bench's CPU split (peers/cpu.ts) reads
 * the backends' CPU at 16 workers, where runs differ by ±20%; this reads it on one connection with
 * nothing else running on it, call by call:
 *
 * 1. each system (Baton in process, the folded + status query ceiling) runs WARM_JOBS jobs on a
 *    scratch database, one worker; then its connections are closed by the server and the database
 *    is copied (`CREATE DATABASE … TEMPLATE`): the state just before the next job;
 * 2. the next job runs, and every query its pg clients send is recorded (text and parameters);
 * 3. on the copy, one connection replays the recorded calls in order inside `BEGIN … ROLLBACK`,
 *    as prepared statements where the system prepared them (their own BEGIN, SET LOCAL and COMMIT
 *    left out: the copy's state is the same before every repetition), `REPLAY_N` times, reading the backend's time on the CPU
 *    (/proc/<pid>/schedstat, nanoseconds) before and after each call. Each call's figure is its
 *    mean over the repetitions, the median over `REPLAY_ROUNDS` rounds, the systems' rounds
 *    alternated; a `VACUUM` before each round clears what the rolled-back repetitions left.
 *
 * What it leaves out, for both alike: COMMIT (its WAL flush), the wait for the client, and other
 * backends. Needs the database server on this machine (Linux /proc); otherwise one line says so.
 *
 *   node dist/bench/postgres-replay.bench.js   (REPLAY_N=300 REPLAY_ROUNDS=5 REPLAY_WARM_JOBS=300)
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  createSandboxProvider,
  deployProfile,
  loadProfile,
  sandboxDeployment,
} from '../src/providers/index.js';
import { withClient } from '../test/support/postgres-client.js';
import { foldedStatusCeiling } from './peers/folded-status.js';
import { batonInProcess, type Provider, type System } from './peers/systems.js';
import { benchDatabase, median, reachablePostgres } from './support.js';

const N = Number(process.env['REPLAY_N'] ?? 300);
const ROUNDS = Number(process.env['REPLAY_ROUNDS'] ?? 5);
const WARM_JOBS = Number(process.env['REPLAY_WARM_JOBS'] ?? 300);
/** REPLAY_SPLIT=1: each item of a `baton_batch_static` call replayed as a call of its own. */
const SPLIT = process.env['REPLAY_SPLIT'] === '1';

interface Recorded {
  readonly text: string;
  readonly values: readonly unknown[] | undefined;
  /** The prepared statement's name, as the system sent it (both name their hot calls). */
  readonly name: string | undefined;
}

// Every query any pg client of this process sends while `recording` is set.
let recording: Recorded[] | undefined;
type Query = (this: unknown, ...args: unknown[]) => unknown;
const proto = pg.Client.prototype as unknown as { query: Query };
const original: Query = proto.query;
proto.query = function (this: unknown, ...args: unknown[]) {
  const [first, second] = args;
  if (recording !== undefined) {
    const q = typeof first === 'string' ? { text: first } : (first as Partial<Recorded>);
    const given = q.values ?? second;
    const values = Array.isArray(given) ? (structuredClone(given) as unknown[]) : undefined;
    const name = typeof q.name === 'string' ? q.name : undefined;
    if (typeof q.text === 'string') recording.push({ text: q.text, values, name });
  }
  return original.apply(this, args);
};

/** The transaction control a replay leaves out (its own BEGIN … ROLLBACK stands for them). */
const CONTROL = /^\s*(BEGIN|COMMIT|ROLLBACK|SET|START)\b/i;

/** With REPLAY_SPLIT, a batch call as one call per item, in order (the same statements). */
function split(q: Recorded): Recorded[] {
  const [items] = q.values ?? [];
  if (!SPLIT || !q.text.includes('baton_batch_static') || typeof items !== 'string') return [q];
  return (JSON.parse(items) as unknown[]).map((item) => ({
    text: q.text,
    values: [JSON.stringify([item])],
    name: q.name,
  }));
}

/** The copy of `dbUrl` a replay runs on: the state just before the recorded job. */
function copyOf(dbUrl: string): { name: string; url: string } {
  const url = new URL(dbUrl);
  const name = `${url.pathname.slice(1)}_replay`;
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

/** Warm the system, copy its database as it stands, record its next job's calls. */
async function record(s: System, adminUrl: string, dbUrl: string): Promise<Recorded[]> {
  for (let n = 0; n < WARM_JOBS; n++) await s.job(0, n);
  const db = new URL(dbUrl).pathname.slice(1);
  await withClient(adminUrl, async (c) => {
    // The pools' idle clients are dropped here; both pools listen for that and reconnect.
    await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [db]);
    await c.query(`CREATE DATABASE "${copyOf(dbUrl).name}" TEMPLATE "${db}"`);
  });
  recording = [];
  try {
    await s.job(0, WARM_JOBS);
    return recording.filter((q) => !CONTROL.test(q.text)).flatMap(split);
  } finally {
    recording = undefined;
  }
}

/**
 * Backend CPU (ms) of each call, averaged over N repetitions of the whole job inside BEGIN …
 * ROLLBACK: the backend's time on the CPU read before and after each call (it is brought up to
 * date whenever the backend waits for the next message, which it does once it has answered).
 */
async function perCall(c: pg.Client, pid: number, calls: readonly Recorded[]): Promise<number[]> {
  const stat = `/proc/${pid}/schedstat`;
  const onCpu = () => Number(readFileSync(stat, 'utf8').split(' ')[0]) / 1e6;
  const sums = calls.map(() => 0);
  const once = async (measure: boolean) => {
    await c.query('BEGIN');
    for (const [i, q] of calls.entries()) {
      const t0 = onCpu();
      // Named where the system named it: prepared once on this connection, as on the system's own.
      const values = q.values as unknown[] | undefined;
      await c.query(q.name === undefined ? { text: q.text, values } : { text: q.text, values, name: q.name });
      if (measure) sums[i] = (sums[i] ?? 0) + onCpu() - t0;
    }
    await c.query('ROLLBACK');
  };
  await c.query('VACUUM');
  for (let i = 0; i < 20; i++) await once(false);
  for (let i = 0; i < N; i++) await once(true);
  return sums.map((x) => x / N);
}

/** One system's recorded job, and the connection to the copy it is replayed on. */
interface Replayed {
  readonly name: string;
  readonly calls: readonly Recorded[];
  readonly client: pg.Client;
  readonly pid: number;
  readonly rounds: number[][];
}

/** A connection to `copyUrl` and its backend's pid, or undefined where that backend is not in /proc. */
async function connect(copyUrl: string): Promise<{ client: pg.Client; pid: number } | undefined> {
  const client = new pg.Client({ connectionString: copyUrl });
  await client.connect();
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid ?? 0;
  if (existsSync(`/proc/${pid}/schedstat`)) return { client, pid };
  await client.end(); // the server is on another machine
  return undefined;
}

/** Rounds alternate between the systems, so the machine's drift falls on all of them alike. */
async function replayAll(systems: readonly Replayed[]): Promise<void> {
  for (let r = 0; r < ROUNDS; r++) {
    for (const x of r % 2 === 0 ? systems : [...systems].reverse())
      x.rounds.push(await perCall(x.client, x.pid, x.calls));
  }
}

function report(x: Replayed): number {
  const all = median(x.rounds.map((cpu) => cpu.reduce((a, b) => a + b, 0)));
  console.log(`  ${x.name}: ${all.toFixed(3)} ms of backend CPU per job (${x.calls.length} calls)`);
  x.calls.forEach((q, i) =>
    console.log(`    ${label(q)}  ${median(x.rounds.map((cpu) => cpu[i] ?? 0)).toFixed(3)} ms`),
  );
  return all;
}

const label = (q: Recorded): string => {
  const bytes = q.values === undefined ? 0 : JSON.stringify(q.values).length;
  const [items] = q.values ?? [];
  const key = SPLIT && typeof items === 'string' ? /"k":"(\w+)"/.exec(items)?.[1] : undefined;
  const text = q.text.replace(/\s+/g, ' ').replace(/\$\d+(, \$\d+)*/, key ?? '…');
  return `${text.slice(0, 52).padEnd(52)} ${String(bytes).padStart(5)} B`;
};

const url = await reachablePostgres('postgres-replay');
if (url !== undefined) {
  const dir = mkdtempSync(join(tmpdir(), 'baton-replay-'));
  const hmac = Buffer.alloc(32, 11);
  const sandbox = createSandboxProvider({ hmacSecret: hmac });
  await sandbox.listen(0, '127.0.0.1');
  const p: Provider = { sandbox, hmac };
  const profile = deployProfile(loadProfile('sandbox-payments'), sandboxDeployment(sandbox));
  const systems: Record<string, (dbUrl: string) => Promise<System>> = {
    'Baton in process': (dbUrl) =>
      batonInProcess(
        'Baton in-process PostgreSQL',
        p,
        profile,
        { postgres: dbUrl, keyBase: join(dir, 'pg') },
        1,
      ),
    'ceiling: folded + status query': (dbUrl) => foldedStatusCeiling(p, profile, dbUrl, 1),
  };
  console.log(
    `postgres-replay: backend CPU per call of one job, replayed ${N}× on one connection, median of ${ROUNDS} rounds (after ${WARM_JOBS} jobs; REPLAY_SPLIT=1: each batch item apart)`,
  );
  const replayed: Replayed[] = [];
  const cleanup: (() => Promise<void>)[] = [];
  try {
    for (const [name, make] of Object.entries(systems)) {
      const db = await benchDatabase(url, 'replay');
      const copy = copyOf(db.url);
      cleanup.push(async () => {
        await withClient(url, (c) => c.query(`DROP DATABASE IF EXISTS "${copy.name}"`));
        await db.drop();
      });
      const s = await make(db.url);
      const calls = await record(s, url, db.url).finally(() => s.close());
      const connection = await connect(copy.url);
      if (connection === undefined) break;
      cleanup.unshift(() => connection.client.end());
      replayed.push({ name, calls, ...connection, rounds: [] });
    }
    if (replayed.length < Object.keys(systems).length) {
      console.log('  skipped: the backend is not in this /proc (PostgreSQL on another machine, or no Linux)');
    } else {
      await replayAll(replayed);
      const [baton, ceiling] = replayed.map(report);
      if (baton !== undefined && ceiling !== undefined)
        console.log(
          `  Baton / ceiling: ${(baton / ceiling).toFixed(2)}× the backend CPU (COMMIT and BEGIN left out of both)`,
        );
    }
  } finally {
    for (const step of cleanup) await step();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
