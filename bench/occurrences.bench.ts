/**
 * The guarded occurrence lifecycle on SQLite — create+reserve+bind, enter, observe→resolved — at
 * concurrency 1, beside the same three transactions written as plain SQL with better-sqlite3 (the
 * floor, bench/occurrences-floor.ts: same schema from the same migrations, WAL + synchronous=FULL,
 * the same kind of file, the same rows, evidence hashed the same way). Rounds alternate between the
 * two so drift (CPU frequency, page cache, GC) hits both alike. Prints occurrences/s, p50/p99 per
 * transaction and the ratio guarded/floor (target ≥ 0.8).
 *
 *   node --import tsx bench/occurrences.bench.ts      (BENCH_N=2000 BENCH_ROUNDS=8 to change)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { migrate, openOccurrencesOnSqlite, openSqliteEngine } from '../src/store/index.js';
import { seed, steps } from './occurrences-floor.js';
import { acknowledgementFree, benchProfile, domain, request } from './occurrences-fixtures.js';

const N = Number(process.env['BENCH_N'] ?? 1000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 8);
const PER_ROUND = Math.ceil(N / ROUNDS);
const WARMUP = 50;
const TARGET = 0.8;

interface Timings {
  create: number[];
  enter: number[];
  observe: number[];
  ms: number;
  count: number;
}
const timings = (): Timings => ({ create: [], enter: [], observe: [], ms: 0, count: 0 });
type Lifecycle = (i: number, keep: boolean) => Promise<[number, number, number]>;

async function openGuarded(dir: string): Promise<{ run: Lifecycle; close: () => Promise<void> }> {
  const { service: svc, close } = await openOccurrencesOnSqlite(join(dir, 'guarded.db'));
  await svc.configureDomain(domain() as never);
  await svc.registerProfile(benchProfile());
  await svc.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 1e12 });
  const { credential } = await svc.takeover({ lineage: 'bench-agent' });
  const run: Lifecycle = async (i, keep) => {
    const tag = keep ? 'm' : 'w';
    const t0 = performance.now();
    const c = await svc.create({
      credential,
      creationKey: `k-${tag}-${i}`,
      provider: { profileId: 'bench-payments', profileVersion: '1' },
      request: request(i),
      authority: { id: 'payouts', amount: 100 },
    });
    const t1 = performance.now();
    const ticket = await svc.enter({ credential, occurrenceId: c.occurrence.id });
    const t2 = performance.now();
    const r = await svc.observe(acknowledgementFree(ticket, `pay_${String(i).padStart(8, '0')}${tag}`));
    if (r.occurrence.phase !== 'resolved') throw new Error('the bench lifecycle did not resolve');
    return [t1 - t0, t2 - t1, performance.now() - t2];
  };
  return { run, close };
}

async function openFloor(dir: string): Promise<{ run: Lifecycle; close: () => Promise<void> }> {
  const path = join(dir, 'floor.db');
  const engine = openSqliteEngine(path);
  await migrate(engine); // the same tables and indexes as the guarded file
  await engine.close();
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  seed(db);
  const run: Lifecycle = (i, keep) => {
    const t0 = performance.now();
    const id = steps.create(db, i, keep);
    const t1 = performance.now();
    steps.enter(db, id);
    const t2 = performance.now();
    steps.observe(db, id, i, keep);
    return Promise.resolve([t1 - t0, t2 - t1, performance.now() - t2]);
  };
  const close = (): Promise<void> => {
    db.close();
    return Promise.resolve();
  };
  return { run, close };
}

async function round(run: Lifecycle, into: Timings, from: number): Promise<number> {
  const start = performance.now();
  for (let i = from; i < from + PER_ROUND; i++) {
    const [c, e, o] = await run(i, true);
    into.create.push(c);
    into.enter.push(e);
    into.observe.push(o);
  }
  const ms = performance.now() - start;
  into.ms += ms;
  into.count += PER_ROUND;
  return (PER_ROUND * 1000) / ms;
}

function pct(xs: number[], p: number): string {
  const s = [...xs].sort((a, b) => a - b);
  return (s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN).toFixed(3);
}

function report(name: string, t: Timings): number {
  const rate = (t.count * 1000) / t.ms;
  console.log(`${name}: ${rate.toFixed(1)} occurrences/s (${(rate * 3).toFixed(0)} transactions/s)`);
  for (const k of ['create', 'enter', 'observe'] as const) {
    console.log(`  ${k.padEnd(8)} p50 ${pct(t[k], 50)} ms   p99 ${pct(t[k], 99)} ms`);
  }
  return rate;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-bench-'));
  const floor = await openFloor(dir);
  const guarded = await openGuarded(dir);
  try {
    console.log(
      `occurrences bench: ${ROUNDS} alternating rounds × ${PER_ROUND} lifecycles, SQLite WAL synchronous=FULL, concurrency 1`,
    );
    for (let i = 0; i < WARMUP; i++) {
      await floor.run(i, false);
      await guarded.run(i, false);
    }
    const fl = timings();
    const gu = timings();
    const ratios: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const f = await round(floor.run, fl, r * PER_ROUND);
      const g = await round(guarded.run, gu, r * PER_ROUND);
      ratios.push(g / f);
      console.log(
        `  round ${r + 1}/${ROUNDS}: floor ${f.toFixed(0)}/s, guarded ${g.toFixed(0)}/s, ratio ${(g / f).toFixed(2)}`,
      );
    }
    const floorRate = report('floor   (plain SQL, better-sqlite3)', fl);
    const guardedRate = report('guarded (Baton occurrences service)', gu);
    const ratio = guardedRate / floorRate;
    const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)] ?? Number.NaN;
    console.log(
      `ratio guarded/floor: ${ratio.toFixed(2)}x overall, median round ${median.toFixed(2)}x (target >= ${TARGET}x): ${median >= TARGET ? 'met' : 'NOT met'}`,
    );
  } finally {
    await guarded.close();
    await floor.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
