/**
 * What the store benchmarks share: closed-loop rounds at a given concurrency, percentiles, and a
 * throwaway PostgreSQL database (created UTF8 with C collation like the tests', dropped at the end).
 */
import { createScratchDatabase, type ScratchDatabase } from '../src/store/postgres-scratch.js';
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

/** This process's CPU time (user + system) so far, in ms. */
export function processCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * One closed-loop round: `concurrency` workers each run lifecycles back to back until `ms` have
 * passed; every lifecycle started is finished and counted. `cpuMs` is the clock of whoever does
 * the side's work (this process by default; the server's when the work happens in a child).
 */
export async function round(
  run: Lifecycle,
  concurrency: number,
  ms: number,
  into: Tally,
  next: () => number,
  cpuMs: () => number = processCpuMs,
): Promise<number> {
  const start = performance.now();
  const cpu = cpuMs();
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
  into.cpuMs += cpuMs() - cpu;
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
  // Three transactions (calls) per lifecycle; CPU is that of the side's clock (see `round`): for
  // PostgreSQL the client's only. NaN when the clock could not be read: left out.
  const cpu = t.cpuMs / Math.max(1, t.lifecycles * 3);
  const base = `${rate(t).toFixed(1).padStart(7)} occurrences/s   per call p50 ${percentile(t.calls, 50).toFixed(2)} ms, p99 ${percentile(t.calls, 99).toFixed(2)} ms`;
  return withCpu && Number.isFinite(cpu) ? `${base}   CPU ${cpu.toFixed(2)} ms/transaction` : base;
}

export const median = (xs: readonly number[]): number => percentile(xs, 50);

// --- comparisons: sides alternated round by round, in the same run ------------------------------

/** One side of a comparison; `cpuMs` as in `round` (default: this process). */
export interface Side {
  readonly name: string;
  readonly run: Lifecycle;
  readonly cpuMs?: () => number;
}

export interface Plan {
  readonly rounds: number;
  readonly roundMs: number;
  readonly warmupMs: number;
  /** Called once every side is warmed up, before the first measured round. */
  readonly afterWarmup?: () => void;
}

export type Results = Map<string, { t: Tally; rounds: number[] }>;

let keys = 0;
/** Lifecycle numbers, unique in the process: creation keys and floor ids never repeat. */
export const nextKey = (): number => ++keys;

/**
 * Alternate the sides round by round (the order reversed every other round), so that load from
 * other processes, CPU frequency and page cache hit every side alike; returns each side's tally
 * and per-round rates.
 */
export async function compare(
  label: string,
  sides: readonly Side[],
  concurrency: number,
  plan: Plan,
): Promise<Results> {
  for (const s of sides) await round(s.run, concurrency, plan.warmupMs, tally(), nextKey, s.cpuMs);
  plan.afterWarmup?.();
  const out: Results = new Map(sides.map((s) => [s.name, { t: tally(), rounds: [] as number[] }]));
  for (let r = 0; r < plan.rounds; r++) {
    const line: string[] = [];
    for (const s of r % 2 === 0 ? sides : [...sides].reverse()) {
      const slot = out.get(s.name);
      if (slot === undefined) continue;
      const perSecond = await round(s.run, concurrency, plan.roundMs, slot.t, nextKey, s.cpuMs);
      slot.rounds.push(perSecond);
      line.push(`${s.name} ${perSecond.toFixed(0)}/s`);
    }
    console.log(`  ${label} round ${r + 1}/${plan.rounds}: ${line.join(', ')}`);
  }
  return out;
}

export function report(results: Results): void {
  for (const [name, { t }] of results) console.log(`  ${name.padEnd(26)} ${describe(t)}`);
}

/** Side `a` over side `b`: the median of the per-round ratios (rounds alternate, so pairs are close in time). */
export function ratio(results: Results, a: string, b: string): number {
  const x = results.get(a)?.rounds ?? [];
  const y = results.get(b)?.rounds ?? [];
  return median(x.map((v, i) => v / (y[i] ?? Number.NaN)));
}

export const verdict = (ok: boolean): string => (ok ? 'met' : 'NOT met');

export function postgresBenchUrl(): string {
  return (
    process.env['BATON_BENCH_POSTGRES_URL'] ??
    process.env['BATON_TEST_POSTGRES_URL'] ??
    'postgres://postgres@127.0.0.1:5432/postgres'
  );
}

export type BenchDatabase = Pick<ScratchDatabase, 'url' | 'drop'>;

/** A fresh database on the server at `url`; `drop()` removes it. */
export async function benchDatabase(url: string, label: string): Promise<BenchDatabase> {
  return createScratchDatabase(url, `bench_${label}`);
}

/**
 * The bench's PostgreSQL URL, or undefined after printing why the PostgreSQL figures are skipped
 * (`who` names the bench in that line).
 */
export async function reachablePostgres(who = 'PostgreSQL'): Promise<string | undefined> {
  const url = postgresBenchUrl();
  const problem = await probePostgres(url);
  if (problem === undefined) return url;
  console.log(
    `${who}: PostgreSQL not reachable at ${redactUrl(url)}: skipping the PostgreSQL figures (${problem})`,
  );
  return undefined;
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

export { redactUrl as redact };

/**
 * A CHECKPOINT before each measured round, so that no timed checkpoint (and the burst of full-page
 * writes after it) starts inside one and lands on whichever system happens to be measured then
 * (one did, in a full peer run of session 18; the half-second PostgreSQL p99s of those runs turned
 * out to be pools reconnecting: docs/scale.md, session 18). Needs a superuser or the
 * `pg_checkpoint` role; refused, it says so once and the rounds go on without. `BENCH_CHECKPOINT=0`
 * turns it off. Untimed: it runs before the round's clock starts.
 */
export function checkpointBeforeRounds(url: string | undefined): () => Promise<void> {
  let on = url !== undefined && process.env['BENCH_CHECKPOINT'] !== '0';
  if (on) console.log('PostgreSQL: a CHECKPOINT before each round, untimed (BENCH_CHECKPOINT=0: none)');
  return async () => {
    if (!on || url === undefined) return;
    try {
      await withClient(url, (c) => c.query('CHECKPOINT'));
    } catch (error) {
      on = false;
      console.log(`  PostgreSQL: CHECKPOINT refused (${String(error).split('\n')[0]}): rounds go on without`);
    }
  };
}
