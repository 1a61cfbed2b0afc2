/**
 * What PostgreSQL itself sustains on this machine, with no Node.js and no Baton in the loop: the
 * ceiling against which the "1,000 guarded occurrences/s at 16 executors" target (issue 5) and
 * docs/scale.md's arithmetic are checked. Two runs of `pgbench` (PostgreSQL's own C load
 * generator), 16 clients, synchronous_commit=on:
 * 1. TPC-B-like (pgbench's built-in: BEGIN, 3 UPDATEs, SELECT, INSERT, END), prepared statements.
 *    A guarded lifecycle is three durable transactions, so tps/3 bounds lifecycles/s for
 *    transactions no bigger than TPC-B's.
 * 2. The floor's own statements (bench/floor.ts): one lifecycle (create, enter, observe: three
 *    BEGIN … COMMIT) recorded on a seeded database, then replayed by pgbench as one script per
 *    lifecycle with the occurrence number and the executor substituted (`:n`, `:client_id`).
 *    Approximate, and noted so in the output: every lifecycle writes the recorded values and hashes
 *    (no hashing in the loop), inlined as constants in the prepared statements (bodies are not sent
 *    per execution), and the budget's compare-and-set is made to match every time. Each makes the
 *    replay cheaper than the real thing, so the figure is an upper bound.
 * Skipped with a printed line when pgbench or PostgreSQL is missing.
 *
 *   node --import tsx bench/postgres-ceiling.bench.ts   (BENCH_CEILING_SECONDS=10)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { withClient } from '../test/support/postgres-client.js';
import { OPEN_STRIPES } from '../src/store/occurrences-limits.js';
import { floorScripts, openPostgresFloor, transactOnPostgres, type FloorExecutor } from './floor.js';
import { benchDatabase, postgresSettings, reachablePostgres, redact } from './support.js';

const SECONDS = Number(process.env['BENCH_CEILING_SECONDS'] ?? 10);
const CLIENTS = 16;
/** The recorded lifecycle's number: nine digits, so it is never a substring of anything else. */
const MARK = 900000001;

function pgbench(args: readonly string[], env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync('pgbench', args, { encoding: 'utf8', env: { ...process.env, ...env } });
  if (r.error !== undefined || r.status !== 0) {
    throw new Error(`pgbench ${args.join(' ')} failed: ${r.error?.message ?? r.stderr}`);
  }
  return r.stdout;
}

function tps(output: string): number {
  const m = /tps = ([0-9.]+) \(without initial connection time\)/.exec(output);
  if (m === null) throw new Error(`no tps in pgbench's output:\n${output}`);
  return Number(m[1]);
}

/** pgbench's connection options for a URL (the password, if any, travels in PGPASSWORD). */
function connection(url: string): { args: string[]; env: NodeJS.ProcessEnv } {
  const u = new URL(url);
  const args = [
    '-h',
    u.hostname,
    '-p',
    u.port === '' ? '5432' : u.port,
    '-U',
    decodeURIComponent(u.username),
  ];
  args.push(u.pathname.slice(1));
  const env = u.password === '' ? {} : { PGPASSWORD: decodeURIComponent(u.password) };
  return { args, env };
}

/**
 * A value as SQL text. Strings are E'' literals with every colon escaped (\x3a): pgbench reads
 * `:name` anywhere in a command as a variable, even inside a string (a digest's `sha-256:…`).
 */
function literal(value: string | number | null): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') return String(value);
  const escaped = value.replaceAll('\\', '\\\\').replaceAll("'", "''").replaceAll(':', '\\x3a');
  return `E'${escaped}'`;
}

/** A recorded statement as one pgbench line: values inlined, the lifecycle and executor made variables. */
function scriptLine(sql: string, params: readonly (string | number | null)[]): string {
  let i = 0;
  let text = sql.replace(/\?/g, () => literal(params[i++] ?? null)).replace(/\s+/g, ' ');
  // Each lifecycle's own stripe of the open counts, as the service picks one per occurrence: the
  // recorded stripe would make every client update the same row.
  if (text.includes('aoc_open_stripes'))
    text = text.replace(/stripe = \d+/, `stripe = ((:n)::bigint % ${OPEN_STRIPES})`);
  // The recorded compare-and-set on the executor's budget would match only once: keep it a real
  // row write on every lifecycle (the values it writes stay the recorded ones).
  if (text.startsWith('UPDATE aoc_authorities')) {
    text = text
      .replace(/AND version = \d+/, 'AND version = version')
      .replace(/AND consumed <= \d+/, 'AND consumed <= consumed');
  }
  // Inside a literal the number becomes a concatenation: E'occ_floor_' || (:n)::text || E'…'.
  return `${text
    .replaceAll(String(MARK), `' || (:n)::text || E'`)
    .replaceAll('floor-agent-0', `floor-agent-' || (:client_id)::text || E'`)
    .replaceAll('floor-pay-0', `floor-pay-' || (:client_id)::text || E'`)
    .replaceAll("E'' || ", '')
    .replaceAll(/ \|\| E''(?=[,)\s;])/g, '')};`;
}

async function recordLifecycle(url: string, x: FloorExecutor): Promise<string[]> {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const lines: string[] = ['\\set n random(1000000000, 8999999999)'];
  const record = (sql: string, params: readonly (string | number | null)[]): void => {
    lines.push(scriptLine(sql, params));
  };
  const transactions = [
    floorScripts.create(' FOR UPDATE', x, `occ_floor_${MARK}`, `k-${MARK}`, MARK),
    floorScripts.enter(' FOR UPDATE', x, `occ_floor_${MARK}`),
    floorScripts.observe(' FOR UPDATE', `occ_floor_${MARK}`, `pay_${MARK}`),
  ];
  try {
    for (const script of transactions) {
      lines.push('BEGIN ISOLATION LEVEL READ COMMITTED;');
      await transactOnPostgres(pool, script as never, record);
      lines.push('COMMIT;');
    }
  } finally {
    await pool.end();
  }
  return lines;
}

async function tpcb(url: string): Promise<number> {
  const db = await benchDatabase(url, 'tpcb');
  try {
    const c = connection(db.url);
    pgbench(['-i', '-q', '-s', String(CLIENTS), ...c.args], c.env);
    const run = ['-c', String(CLIENTS), '-j', '2', '-T', String(SECONDS), '-M', 'prepared'];
    return tps(pgbench([...run, ...c.args], c.env));
  } finally {
    await db.drop();
  }
}

async function floorReplay(url: string): Promise<{ tps: number; statements: number }> {
  const db = await benchDatabase(url, 'ceiling');
  const dir = mkdtempSync(join(tmpdir(), 'baton-ceiling-'));
  try {
    const floor = await openPostgresFloor(db.url, CLIENTS);
    await floor.close();
    // pgbench numbers its clients 0…15: the seeded executors' credentials become findable by number.
    await withClient(db.url, (c) =>
      c.query("UPDATE aoc_credentials SET secret_digest = 'cred-' || substring(lineage from 13)"),
    );
    const x: FloorExecutor = { lineage: 'floor-agent-0', credential: 'cred-0', authority: 'floor-pay-0' };
    const lines = (await recordLifecycle(db.url, x)).map((l) =>
      l.replaceAll("E'cred-0'", "'cred-' || (:client_id)::text"),
    );
    const file = join(dir, 'lifecycle.sql');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const c = connection(db.url);
    const run = ['-n', '-c', String(CLIENTS), '-j', '2', '-T', String(SECONDS), '-M', 'prepared'];
    const out = pgbench([...run, '-f', file, ...c.args], c.env);
    return { tps: tps(out), statements: lines.length - 1 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await db.drop();
  }
}

async function main(): Promise<void> {
  const version = spawnSync('pgbench', ['--version'], { encoding: 'utf8' });
  if (version.error !== undefined || version.status !== 0) {
    console.log('postgres ceiling: pgbench is not installed (PostgreSQL client tools): skipping');
    return;
  }
  const url = await reachablePostgres('postgres ceiling');
  if (url === undefined) return;
  console.log(
    `postgres ceiling: ${version.stdout.trim()}, ${CLIENTS} clients, ${SECONDS} s per run, at ${redact(url)}: ${await postgresSettings(url)}`,
  );
  const b = await tpcb(url);
  console.log(
    `  pgbench TPC-B-like (prepared): ${b.toFixed(0)} transactions/s => at most ${(b / 3).toFixed(0)} lifecycles/s of three TPC-B-sized transactions`,
  );
  const f = await floorReplay(url);
  console.log(
    `  pgbench replaying the floor's lifecycle (${f.statements} statements incl. BEGIN/COMMIT, prepared): ${f.tps.toFixed(0)} lifecycles/s (${(f.tps * f.statements).toFixed(0)} statements/s)`,
  );
  console.log(
    '  (a C client, no Node.js, no Baton, one statement per round trip over 16 connections; every lifecycle writes the recorded values and hashes, inlined as constants in the prepared statements, so bodies are not sent per execution: an upper bound for a client sending these statements one at a time)',
  );
  console.log(
    `  => 1,000 guarded occurrences/s at 16 executors needs ${(1000 / f.tps).toFixed(2)}x what PostgreSQL alone does here with these statements`,
  );
}

await main();
