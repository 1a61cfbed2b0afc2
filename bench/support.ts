/**
 * What the store benchmarks share: closed-loop rounds at a given concurrency, percentiles, and a
 * throwaway PostgreSQL database (created UTF8 with C collation like the tests', dropped at the end).
 */
import { randomBytes } from 'node:crypto';
import { probePostgres, redactUrl, withClient } from '../test/support/postgres-client.js';

/** One lifecycle's per-call latencies in milliseconds (create, enter, observe). */
export type CallTimes = readonly number[];

/** Runs lifecycle number `n` on worker `w` (0 ≤ w < concurrency). */
export type Lifecycle = (w: number, n: number) => Promise<CallTimes>;

export interface Tally {
  lifecycles: number;
  ms: number;
  calls: number[];
  /** CPU time of this process (user + system) spent in the rounds, in ms. */
  cpuMs: number;
}

export const tally = (): Tally => ({ lifecycles: 0, ms: 0, calls: [], cpuMs: 0 });

/**
 * One closed-loop round: `concurrency` workers each run lifecycles back to back until `ms` have
 * passed; every lifecycle started is finished and counted.
 */
export async function round(
  run: Lifecycle,
  concurrency: number,
  ms: number,
  into: Tally,
  next: () => number,
): Promise<number> {
  const start = performance.now();
  const cpu = process.cpuUsage();
  const deadline = start + ms;
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while (performance.now() < deadline) {
        const times = await run(w, next());
        into.calls.push(...times);
        done += 1;
      }
    }),
  );
  const elapsed = performance.now() - start;
  const used = process.cpuUsage(cpu);
  into.cpuMs += (used.user + used.system) / 1000;
  into.lifecycles += done;
  into.ms += elapsed;
  return (done * 1000) / elapsed;
}

export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
}

export const rate = (t: Tally): number => (t.lifecycles * 1000) / t.ms;

export function describe(t: Tally, withCpu = true): string {
  // Three transactions (calls) per lifecycle; CPU is this process's (for PostgreSQL the client's only).
  const cpu = t.cpuMs / Math.max(1, t.lifecycles * 3);
  const base = `${rate(t).toFixed(1).padStart(7)} occurrences/s   per call p50 ${percentile(t.calls, 50).toFixed(2)} ms, p99 ${percentile(t.calls, 99).toFixed(2)} ms`;
  return withCpu ? `${base}   CPU ${cpu.toFixed(2)} ms/transaction` : base;
}

export const median = (xs: readonly number[]): number => percentile(xs, 50);

export function postgresBenchUrl(): string {
  return (
    process.env['BATON_BENCH_POSTGRES_URL'] ??
    process.env['BATON_TEST_POSTGRES_URL'] ??
    'postgres://postgres@127.0.0.1:5432/postgres'
  );
}

export interface BenchDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/** A fresh database on the server at `url`; `drop()` removes it. */
export async function benchDatabase(url: string, label: string): Promise<BenchDatabase> {
  const name = `baton_bench_${label}_${randomBytes(4).toString('hex')}`;
  await withClient(url, (c) =>
    c.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`),
  );
  const u = new URL(url);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: () =>
      withClient(url, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** The server settings that decide durability, printed beside the figures. */
export async function postgresSettings(url: string): Promise<string> {
  return withClient(url, async (c) => {
    const r = await c.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'wal_sync_method', 'server_version') ORDER BY name",
    );
    return r.rows.map((x) => `${x.name}=${x.setting}`).join(' ');
  });
}

export { probePostgres as postgresProblem, redactUrl as redact };
