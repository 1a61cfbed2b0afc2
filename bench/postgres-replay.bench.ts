/**
 * PostgreSQL backend CPU per call of ONE lifecycle, Baton against its folded ceiling (issue 16;
 * docs/store.md "Backend CPU per call, replayed"). The peer bench's CPU split (peers/cpu.ts) reads
 * the backends' CPU at 16 workers, where runs differ by ±20%; this reads it on one connection with
 * nothing else running on it, call by call:
 *
 * 1. each system (Baton in process, the folded + status query ceiling) runs WARM_JOBS jobs on a
 *    scratch database, one worker; then its connections are closed by the server and the database
 *    is copied (`CREATE DATABASE … TEMPLATE`): the state just before the next job;
 * 2. the next job runs, and every query its pg clients send is recorded (text, parameters, the
 *    prepared statement's name, the answer);
 * 3. on the copy, one connection replays the recorded calls in order inside `BEGIN … ROLLBACK`,
 *    prepared where the system prepared them (their own BEGIN, SET LOCAL and COMMIT left out: the
 *    copy's state is the same before every repetition), `REPLAY_N` times, reading the backend's
 *    time on the CPU (/proc/<pid>/schedstat, nanoseconds) before and after each call. Each call's
 *    figure is its mean over the repetitions, the median over `REPLAY_ROUNDS` rounds, the
 *    replays' rounds alternated; a `VACUUM` before each round clears what the rolled-back
 *    repetitions left, and its first repetition must get the recorded answers back.
 * 4. Baton's job is replayed a second time with each lock call and the write call after it as ONE
 *    statement (the same statements, in the same order): what one call per transition would save
 *    of the protocol alone.
 *
 * What it leaves out, for all alike: COMMIT (its WAL flush), the wait for the client, and other
 * backends. Needs the database server on this machine (Linux /proc); otherwise one line says so.
 *
 *   node dist/bench/postgres-replay.bench.js   (REPLAY_N=300 REPLAY_ROUNDS=5 REPLAY_WARM_JOBS=300
 *   REPLAY_SPLIT=1)
 */
import { mkdtempSync, rmSync } from 'node:fs';
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
import { watchPgQueries } from './pg-queries.js';
import { processCpuClock } from './proc-cpu.js';
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
  /** Its rows as JSON once answered: the replay must get the same, or it timed another path. */
  answer?: string;
  /** What the output calls it, where its text would not say (a folded call). */
  readonly label?: string;
}

// Every query any pg client of this process sends while `recording` is set.
let recording: Recorded[] | undefined;
watchPgQueries((args, returned) => {
  if (recording === undefined) return;
  const [first, second] = args;
  const q = typeof first === 'string' ? { text: first } : (first as Partial<Recorded>);
  if (typeof q.text !== 'string') return;
  // pg takes a second argument's values over the config's (utils.normalizeQueryConfig).
  const given = second ?? q.values;
  const values = Array.isArray(given) ? (structuredClone(given) as unknown[]) : undefined;
  const r: Recorded = { text: q.text, values, name: typeof q.name === 'string' ? q.name : undefined };
  recording.push(r);
  if (returned instanceof Promise) {
    // The caller sees its own rejection; this copy only notes the rows of a success.
    returned.then(
      (x: pg.QueryResult) => void (r.answer = JSON.stringify(x.rows)),
      () => undefined,
    );
  }
});

/** The transaction control a replay leaves out (its own BEGIN … ROLLBACK stands for them). */
const CONTROL = /^\s*(BEGIN|COMMIT|ROLLBACK|SET|START)\b/i;

/** With REPLAY_SPLIT, a batch call as one call per item, in order (the same statements). */
function split(q: Recorded): Recorded[] {
  const [items] = q.values ?? [];
  if (!SPLIT || !q.text.includes('baton_batch_static') || typeof items !== 'string') return [q];
  // Each item's own answer was never sent: these are not checked against one.
  return (JSON.parse(items) as unknown[]).map((item) => ({
    text: q.text,
    values: [JSON.stringify([item])],
    name: q.name,
  }));
}

const LOCK = /^SELECT (baton_lock_\w+)\(/;

/**
 * Each lock call and the write call after it as ONE statement, the same statements in the same
 * order (the lock runs first: the CTE is materialized before the batch is called for its one row),
 * answering both answers: what one call per transition would save of the protocol alone. Undefined
 * when there is no such pair (the ceiling's calls, or REPLAY_SPLIT).
 */
function fold(calls: readonly Recorded[]): Recorded[] | undefined {
  if (SPLIT) return undefined;
  const out: Recorded[] = [];
  for (let i = 0; i < calls.length; i++) {
    const [lock, write] = [calls[i], calls[i + 1]];
    const fn = lock === undefined ? null : LOCK.exec(lock.text);
    if (
      lock === undefined ||
      write === undefined ||
      fn === null ||
      !write.text.includes('baton_batch_static')
    ) {
      if (lock !== undefined) out.push(lock);
      continue;
    }
    const n = lock.values?.length ?? 0;
    const answers = [lock.answer, write.answer].map((a) =>
      a === undefined ? undefined : (JSON.parse(a) as object[])[0],
    );
    out.push({
      text: `WITH l AS MATERIALIZED (${lock.text}) SELECT l.loaded, baton_batch_static($${n + 1}) AS out FROM l`,
      values: [...(lock.values ?? []), ...(write.values ?? [])],
      name: `replay_fold_${out.length}`,
      answer: answers.includes(undefined) ? undefined : JSON.stringify([{ ...answers[0], ...answers[1] }]),
      label: `${fn[1]} + baton_batch_static, one statement`,
    });
    i++;
  }
  return out.length < calls.length ? out : undefined;
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

/** One call as the system sent it: prepared where it was, so planned once per connection here too. */
function send(c: pg.Client, q: Recorded): Promise<pg.QueryResult> {
  const values = q.values as unknown[] | undefined;
  return c.query(q.name === undefined ? { text: q.text, values } : { text: q.text, values, name: q.name });
}

/** The replay answers each call as the recorded job was answered, or it would time another path. */
function sameAnswer(q: Recorded, i: number, r: pg.QueryResult): void {
  if (q.answer !== undefined && JSON.stringify(r.rows) !== q.answer)
    throw new Error(`replay: call ${i + 1} (${q.text.slice(0, 40)}…) answered otherwise than recorded`);
}

/**
 * Backend CPU (ms) of each call, averaged over N repetitions of the whole job inside BEGIN …
 * ROLLBACK, and of each repetition as a whole: the backend's time on the CPU read before and after
 * (brought up to date whenever the backend waits for the next message, which it does once it has
 * answered). The last figure is the repetition's whole; what the calls' figures leave of it is
 * BEGIN, ROLLBACK and what a read taken too early moved to the next one.
 */
async function perCall(c: pg.Client, onCpu: () => number, calls: readonly Recorded[]): Promise<number[]> {
  const sums = calls.map(() => 0);
  let whole = 0;
  const once = async (measure: boolean, check: boolean) => {
    const start = onCpu();
    await c.query('BEGIN');
    for (const [i, q] of calls.entries()) {
      const t0 = onCpu();
      const r = await send(c, q);
      if (measure) sums[i] = (sums[i] ?? 0) + onCpu() - t0;
      if (check) sameAnswer(q, i, r);
    }
    await c.query('ROLLBACK');
    if (measure) whole += onCpu() - start;
  };
  await c.query('VACUUM');
  for (let i = 0; i < 20; i++) await once(false, i === 0);
  for (let i = 0; i < N; i++) await once(true, false);
  return [...sums, whole].map((x) => x / N);
}

/** One system's recorded job, and the connection to the copy it is replayed on. */
interface Replayed {
  readonly name: string;
  readonly calls: readonly Recorded[];
  readonly client: pg.Client;
  readonly onCpu: () => number;
  /** Per round: each call's figure, then the repetition's whole. */
  readonly rounds: number[][];
}

/** The CPU clock of `client`'s backend, or undefined where this machine's /proc cannot tell it. */
async function backendClock(client: pg.Client): Promise<(() => number) | undefined> {
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid ?? 0;
  return processCpuClock(pid, 'postgres');
}

/** Whether this machine's /proc shows the backends of `url` (the server here, not in a container). */
async function backendsReadable(url: string): Promise<boolean> {
  return withClient(url, async (c) => (await backendClock(c)) !== undefined);
}

/** A connection to `copyUrl` and its backend's CPU clock. */
async function connect(copyUrl: string): Promise<{ client: pg.Client; onCpu: () => number }> {
  const client = new pg.Client({ connectionString: copyUrl });
  client.on('error', () => undefined); // a dropped connection shows as the next query's rejection
  await client.connect();
  try {
    const onCpu = await backendClock(client);
    if (onCpu === undefined) throw new Error('replay: the backend is not a postgres process of this /proc');
    return { client, onCpu };
  } catch (error) {
    await client.end();
    throw error;
  }
}

/** Rounds alternate between the systems, so the machine's drift falls on all of them alike. */
async function replayAll(systems: readonly Replayed[]): Promise<void> {
  for (let r = 0; r < ROUNDS; r++) {
    for (const x of r % 2 === 0 ? systems : [...systems].reverse())
      x.rounds.push(await perCall(x.client, x.onCpu, x.calls));
  }
}

/** Prints one system's figures; answers its job's figure per round (the calls' sum). */
function report(x: Replayed): number[] {
  const jobs = x.rounds.map((cpu) => cpu.slice(0, x.calls.length).reduce((a, b) => a + b, 0));
  const whole = median(x.rounds.map((cpu) => cpu[x.calls.length] ?? 0));
  console.log(
    `  ${x.name}: ${median(jobs).toFixed(3)} ms of backend CPU per job (${x.calls.length} calls; with the replay's BEGIN and ROLLBACK ${whole.toFixed(3)} ms)`,
  );
  x.calls.forEach((q, i) =>
    console.log(`    ${label(q)}  ${median(x.rounds.map((cpu) => cpu[i] ?? 0)).toFixed(3)} ms`),
  );
  return jobs;
}

const label = (q: Recorded): string => {
  const bytes = q.values === undefined ? 0 : JSON.stringify(q.values).length;
  const [items] = q.values ?? [];
  const key = SPLIT && typeof items === 'string' ? /"k":"(\w+)"/.exec(items)?.[1] : undefined;
  const text = q.label ?? q.text.replace(/\s+/g, ' ').replace(/\$\d+(, \$\d+)*/, key ?? '…');
  return `${text.slice(0, 52).padEnd(52)} ${String(bytes).padStart(5)} B`;
};

const url = await reachablePostgres('postgres-replay');
if (url !== undefined && !(await backendsReadable(url))) {
  console.log(
    'postgres-replay: skipped: the PostgreSQL backends are not processes of this /proc (a server on another machine or in a container, or no Linux)',
  );
} else if (url !== undefined) {
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
  const cleanup: (() => Promise<unknown>)[] = [];
  try {
    for (const [name, make] of Object.entries(systems)) {
      const db = await benchDatabase(url, 'replay');
      const copy = copyOf(db.url);
      cleanup.push(
        () => withClient(url, (c) => c.query(`DROP DATABASE IF EXISTS "${copy.name}" WITH (FORCE)`)),
        () => db.drop(),
      );
      const s = await make(db.url);
      const calls = await record(s, url, db.url).finally(() => s.close());
      // The calls as sent, and (where a lock call precedes a write call) the same folded in pairs.
      const variants: [string, readonly Recorded[] | undefined][] = [
        [name, calls],
        [`${name}, each lock call and its write call as one statement`, fold(calls)],
      ];
      for (const [title, replay] of variants) {
        if (replay === undefined) continue;
        const connection = await connect(copy.url);
        cleanup.unshift(() => connection.client.end());
        replayed.push({ name: title, calls: replay, ...connection, rounds: [] });
      }
    }
    await replayAll(replayed);
    const jobs = replayed.map(report);
    const [baton, ceiling] = [jobs[0], jobs.at(-1)];
    if (baton !== undefined && ceiling !== undefined) {
      // Round by round: the rounds alternated so that all met the same machine.
      const ratio = (a: number[]) => median(a.map((x, r) => x / (ceiling[r] ?? Number.NaN))).toFixed(2);
      const folded = jobs.length > 2 && jobs[1] !== undefined ? `, folded ${ratio(jobs[1])}×` : '';
      console.log(
        `  Baton / ceiling: ${ratio(baton)}× the backend CPU${folded} (their BEGIN and COMMIT left out of all)`,
      );
    }
  } finally {
    // Every step is tried, whatever an earlier one did; a failure is reported, not hidden.
    for (const step of [...cleanup, () => sandbox.close()]) {
      await step().catch((error: unknown) => console.error('postgres-replay: cleanup failed:', error));
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
