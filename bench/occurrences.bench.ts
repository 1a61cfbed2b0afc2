/**
 * The guarded occurrence lifecycle on SQLite — create+reserve+bind, enter, observe→resolved — at
 * concurrency 1, beside the same three transactions written as plain SQL with better-sqlite3 (the
 * floor, bench/floor.ts: same schema from the same migrations, WAL + synchronous=FULL, the same
 * kind of file, the same statements and rows, evidence hashed the same way). Rounds alternate
 * between the two so drift (CPU frequency, page cache, GC, other processes) hits both alike.
 * Prints occurrences/s, p50/p99 per transaction and the ratio guarded/floor (target ≥ 0.8).
 *
 *   node --import tsx bench/occurrences.bench.ts      (BENCH_N=2000 BENCH_ROUNDS=8 to change)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { migrate, openSqliteEngine } from '../src/store/index.js';
import { floorScripts, transactOnSqlite, type FloorExecutor } from './floor.js';
import { openGuarded } from './guarded.js';
import { percentile } from './support.js';

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
type Lifecycle = (i: number) => Promise<readonly number[]>;

async function openFloor(dir: string): Promise<{ run: Lifecycle; close: () => void }> {
  const path = join(dir, 'floor.db');
  const engine = openSqliteEngine(path);
  await migrate(engine); // the same tables and indexes as the guarded file
  await engine.close();
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  const [x] = transactOnSqlite(db, floorScripts.seed(1)) as [FloorExecutor];
  const run: Lifecycle = (i) => {
    const id = `occ_floor_${i}`;
    const t0 = performance.now();
    transactOnSqlite(db, floorScripts.create('', x, id, `k-${i}`, i));
    const t1 = performance.now();
    transactOnSqlite(db, floorScripts.enter('', x, id));
    const t2 = performance.now();
    transactOnSqlite(db, floorScripts.observe('', id, `pay_${String(i).padStart(8, '0')}`));
    return Promise.resolve([t1 - t0, t2 - t1, performance.now() - t2]);
  };
  return { run, close: () => db.close() };
}

async function round(run: Lifecycle, into: Timings, from: number): Promise<number> {
  const start = performance.now();
  for (let i = from; i < from + PER_ROUND; i++) {
    const [c = 0, e = 0, o = 0] = await run(i);
    into.create.push(c);
    into.enter.push(e);
    into.observe.push(o);
  }
  const ms = performance.now() - start;
  into.ms += ms;
  into.count += PER_ROUND;
  return (PER_ROUND * 1000) / ms;
}

function report(name: string, t: Timings): number {
  const rate = (t.count * 1000) / t.ms;
  console.log(`${name}: ${rate.toFixed(1)} occurrences/s (${(rate * 3).toFixed(0)} transactions/s)`);
  for (const k of ['create', 'enter', 'observe'] as const) {
    console.log(
      `  ${k.padEnd(8)} p50 ${percentile(t[k], 50).toFixed(3)} ms   p99 ${percentile(t[k], 99).toFixed(3)} ms`,
    );
  }
  return rate;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-bench-'));
  const floor = await openFloor(dir);
  const engine = openSqliteEngine(join(dir, 'guarded.db'));
  try {
    const g = await openGuarded(engine, 1);
    const guarded: Lifecycle = (i) => g.lifecycle(0, `k-${i}`, i);
    console.log(
      `occurrences bench: ${ROUNDS} alternating rounds × ${PER_ROUND} lifecycles, SQLite WAL synchronous=FULL, concurrency 1`,
    );
    for (let i = 0; i < WARMUP; i++) {
      await floor.run(1_000_000 + i);
      await guarded(1_000_000 + i);
    }
    const fl = timings();
    const gu = timings();
    const ratios: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const f = await round(floor.run, fl, r * PER_ROUND);
      const g = await round(guarded, gu, r * PER_ROUND);
      ratios.push(g / f);
      console.log(
        `  round ${r + 1}/${ROUNDS}: floor ${f.toFixed(0)}/s, guarded ${g.toFixed(0)}/s, ratio ${(g / f).toFixed(2)}`,
      );
    }
    const floorRate = report('floor   (plain SQL, better-sqlite3)', fl);
    const guardedRate = report('guarded (Baton occurrences service)', gu);
    const ratio = guardedRate / floorRate;
    const median = percentile(ratios, 50);
    console.log(
      `ratio guarded/floor: ${ratio.toFixed(2)}x overall, median round ${median.toFixed(2)}x (target >= ${TARGET}x): ${median >= TARGET ? 'met' : 'NOT met'}`,
    );
  } finally {
    await engine.close();
    floor.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
