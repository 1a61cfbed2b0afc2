/**
 * The store under concurrent executors (DESIGN.md §10, docs/scale.md): the guarded lifecycle —
 * create+reserve+bind, enter, observe→resolved, three transactions — through the
 * OccurrencesService at concurrency 1 and 16 (16 executors, each its own lineage and budget), on
 * SQLite (WAL, synchronous=FULL) and on PostgreSQL (synchronous_commit=on; skipped with a printed
 * line when unreachable), beside the same transactions as plain SQL in the same run (the floor,
 * bench/floor.ts). Rounds alternate floor and guarded so that load from other processes hits both.
 * Prints occurrences/s, p50/p99 per call, and the ratios the targets are stated in:
 * - SQLite, concurrency 1: guarded/floor ≥ 0.8 (per-call overhead);
 * - SQLite, concurrency 16: guarded ≥ 4× the unbatched floor (one COMMIT per transaction), with
 *   p99 ≤ 10 ms per call (group commit); the batched floor (plain SQL, 16 per COMMIT) for scale;
 * - PostgreSQL, concurrency 16: ≥ 1,000 guarded occurrences/s.
 *
 *   node --import tsx bench/store-concurrency.bench.ts   (BENCH_ROUND_MS=1500 BENCH_ROUNDS=3;
 *   BENCH_ENGINES=sqlite,postgres; BATON_BENCH_POSTGRES_URL or BATON_TEST_POSTGRES_URL)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { migrate, openPostgresEngine, openSqliteEngine } from '../src/store/index.js';
import type { StoreEngine } from '../src/store/engine.js';
import type { SqliteStoreEngine } from '../src/store/sqlite.js';
import {
  floorScripts,
  SqliteBatchFloor,
  transactOnPostgres,
  transactOnSqlite,
  type FloorExecutor,
} from './floor.js';
import { openGuarded } from './guarded.js';
import {
  benchDatabase,
  describe,
  median,
  percentile,
  postgresBenchUrl,
  postgresProblem,
  postgresSettings,
  rate,
  redact,
  round,
  tally,
  type Lifecycle,
  type Tally,
} from './support.js';

const ROUND_MS = Number(process.env['BENCH_ROUND_MS'] ?? 1500);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const ENGINES = (process.env['BENCH_ENGINES'] ?? 'sqlite,postgres').split(',');
const EXECUTORS = 16;
const WARMUP_MS = 400;

interface Side {
  readonly name: string;
  readonly run: Lifecycle;
}

let keys = 0;
const nextKey = (): number => ++keys;

/** Alternate the sides round by round; returns each side's tally and per-round rates. */
async function compare(
  label: string,
  sides: readonly Side[],
  concurrency: number,
): Promise<Map<string, { t: Tally; rounds: number[] }>> {
  for (const s of sides) await round(s.run, concurrency, WARMUP_MS, tally(), nextKey);
  const out = new Map(sides.map((s) => [s.name, { t: tally(), rounds: [] as number[] }]));
  for (let r = 0; r < ROUNDS; r++) {
    const line: string[] = [];
    for (const s of r % 2 === 0 ? sides : [...sides].reverse()) {
      const slot = out.get(s.name);
      if (slot === undefined) continue;
      const perSecond = await round(s.run, concurrency, ROUND_MS, slot.t, nextKey);
      slot.rounds.push(perSecond);
      line.push(`${s.name} ${perSecond.toFixed(0)}/s`);
    }
    console.log(`  ${label} round ${r + 1}/${ROUNDS}: ${line.join(', ')}`);
  }
  return out;
}

function report(results: Map<string, { t: Tally }>): void {
  for (const [name, { t }] of results) console.log(`  ${name.padEnd(26)} ${describe(t)}`);
}

function ratio(results: Map<string, { rounds: number[] }>, a: string, b: string): number {
  const x = results.get(a)?.rounds ?? [];
  const y = results.get(b)?.rounds ?? [];
  return median(x.map((v, i) => v / (y[i] ?? Number.NaN)));
}

const verdict = (ok: boolean): string => (ok ? 'met' : 'NOT met');

// --- SQLite ------------------------------------------------------------------------------------

function sqliteFloor(path: string): { db: Database.Database; executors: FloorExecutor[] } {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  return { db, executors: transactOnSqlite(db, floorScripts.seed(EXECUTORS)) };
}

function floorLifecycle(
  x: (w: number) => FloorExecutor,
  fu: string,
  transact: (script: Generator<never, unknown, never>) => unknown,
): Lifecycle {
  return async (w, n) => {
    const id = `occ_floor_${n}`;
    const t0 = performance.now();
    await transact(floorScripts.create(fu, x(w), id, `k-${n}`, n) as never);
    const t1 = performance.now();
    await transact(floorScripts.enter(fu, x(w), id) as never);
    const t2 = performance.now();
    await transact(floorScripts.observe(fu, id, `pay_${String(n).padStart(8, '0')}`) as never);
    return [t1 - t0, t2 - t1, performance.now() - t2];
  };
}

async function benchSqlite(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-bench-'));
  const engine: SqliteStoreEngine = openSqliteEngine(join(dir, 'guarded.db'));
  const floorPath = join(dir, 'floor.db');
  const floorEngine = openSqliteEngine(floorPath);
  await migrate(floorEngine); // the same tables and indexes as the guarded file
  await floorEngine.close();
  const floor = sqliteFloor(floorPath);
  const batched = new SqliteBatchFloor(floor.db);
  try {
    const guarded = await openGuarded(engine, EXECUTORS);
    const fx = (w: number): FloorExecutor => floor.executors[w] as FloorExecutor;
    const guardedSide: Side = { name: 'guarded', run: (w, n) => guarded.lifecycle(w, `k-${n}`, n) };
    const unbatched: Side = {
      name: 'floor (unbatched)',
      run: floorLifecycle(fx, '', (s) => transactOnSqlite(floor.db, s)),
    };
    const batchedSide: Side = {
      name: 'floor (batched)',
      run: floorLifecycle(fx, '', (s) => batched.run(s)),
    };
    console.log(
      `SQLite ${String(floor.db.prepare('SELECT sqlite_version() AS v').pluck().get())}, WAL, synchronous=FULL, file in ${tmpdir()}`,
    );

    const c1 = await compare('sqlite c=1', [unbatched, guardedSide], 1);
    report(c1);
    const r1 = ratio(c1, 'guarded', 'floor (unbatched)');
    console.log(
      `  => c=1 guarded/floor ${r1.toFixed(2)}x, median of rounds (target >= 0.8x): ${verdict(r1 >= 0.8)}`,
    );

    const before = engine.stats();
    const c16 = await compare(`sqlite c=${EXECUTORS}`, [unbatched, batchedSide, guardedSide], EXECUTORS);
    const after = engine.stats();
    report(c16);
    const r16 = ratio(c16, 'guarded', 'floor (unbatched)');
    const p99 = percentile(c16.get('guarded')?.t.calls ?? [], 99);
    const commits = after.commits - before.commits;
    const txs = after.transactions - before.transactions;
    console.log(
      `  => c=${EXECUTORS} guarded/unbatched floor ${r16.toFixed(2)}x (target >= 4x): ${verdict(r16 >= 4)}; guarded/batched floor ${ratio(c16, 'guarded', 'floor (batched)').toFixed(2)}x`,
    );
    console.log(
      `  => c=${EXECUTORS} guarded p99 ${p99.toFixed(2)} ms per call (target <= 10 ms): ${verdict(p99 <= 10)}`,
    );
    console.log(
      `  => group commit: ${txs} transactions in ${commits} COMMITs (${(txs / Math.max(1, commits)).toFixed(1)} per COMMIT, largest ${after.largestBatch}); the batched floor: ${batched.commits} COMMITs in all`,
    );
  } finally {
    await engine.close();
    floor.db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// --- PostgreSQL --------------------------------------------------------------------------------

async function benchPostgres(): Promise<void> {
  const url = postgresBenchUrl();
  const problem = await postgresProblem(url);
  if (problem !== undefined) {
    console.log(`PostgreSQL not reachable at ${redact(url)}: skipping the PostgreSQL figures (${problem})`);
    return;
  }
  console.log(`PostgreSQL at ${redact(url)}: ${await postgresSettings(url)}`);
  const gdb = await benchDatabase(url, 'guarded');
  const fdb = await benchDatabase(url, 'floor');
  const engine: StoreEngine = openPostgresEngine(gdb.url, { maxConnections: EXECUTORS + 2 });
  const floorEngine = openPostgresEngine(fdb.url);
  const pool = new pg.Pool({ connectionString: fdb.url, max: EXECUTORS + 2 });
  pool.on('error', () => undefined);
  try {
    await migrate(floorEngine);
    await floorEngine.close();
    const executors = await transactOnPostgres(pool, floorScripts.seed(EXECUTORS));
    const guarded = await openGuarded(engine, EXECUTORS);
    const fx = (w: number): FloorExecutor => executors[w] as FloorExecutor;
    const guardedSide: Side = { name: 'guarded', run: (w, n) => guarded.lifecycle(w, `k-${n}`, n) };
    const floorSide: Side = {
      name: 'floor',
      run: floorLifecycle(fx, ' FOR UPDATE', (s) => transactOnPostgres(pool, s)),
    };
    for (const c of [1, EXECUTORS]) {
      const results = await compare(`postgres c=${c}`, [floorSide, guardedSide], c);
      report(results);
      const g = rate(results.get('guarded')?.t ?? tally());
      const line = `  => c=${c} guarded/floor ${ratio(results, 'guarded', 'floor').toFixed(2)}x, median of rounds`;
      console.log(
        c === 1 ? line : `${line}; guarded ${g.toFixed(0)}/s (target >= 1000/s): ${verdict(g >= 1000)}`,
      );
    }
  } finally {
    await engine.close();
    await pool.end();
    await gdb.drop();
    await fdb.drop();
  }
}

async function main(): Promise<void> {
  console.log(
    `store concurrency bench: ${ROUNDS} alternating rounds of ${ROUND_MS} ms per side, concurrency 1 and ${EXECUTORS}; node ${process.version}`,
  );
  if (ENGINES.includes('sqlite')) await benchSqlite();
  if (ENGINES.includes('postgres')) await benchPostgres();
}

await main();
