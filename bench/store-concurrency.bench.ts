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
import { openPostgresEngine, openSqliteEngine } from '../src/store/index.js';
import type { StoreEngine } from '../src/store/engine.js';
import type { SqliteStoreEngine } from '../src/store/sqlite.js';
import { openPostgresFloor, openSqliteFloor } from './floor.js';
import { openGuarded } from './guarded.js';
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
  type Plan,
  type Side,
} from './support.js';

const PLAN: Plan = {
  roundMs: Number(process.env['BENCH_ROUND_MS'] ?? 1500),
  rounds: Number(process.env['BENCH_ROUNDS'] ?? 3),
  warmupMs: 400,
};
const ENGINES = (process.env['BENCH_ENGINES'] ?? 'sqlite,postgres').split(',');
const EXECUTORS = 16;

// --- SQLite ------------------------------------------------------------------------------------

async function benchSqlite(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-bench-'));
  const engine: SqliteStoreEngine = openSqliteEngine(join(dir, 'guarded.db'));
  const floor = await openSqliteFloor(join(dir, 'floor.db'), EXECUTORS);
  try {
    const guarded = await openGuarded(engine, EXECUTORS);
    const guardedSide: Side = { name: 'guarded', run: (w, n) => guarded.lifecycle(w, `k-${n}`, n) };
    const unbatched: Side = { name: 'floor (unbatched)', run: floor.unbatched };
    const batchedSide: Side = { name: 'floor (batched)', run: floor.batched };
    console.log(
      `SQLite ${String(floor.db.prepare('SELECT sqlite_version() AS v').pluck().get())}, WAL, synchronous=FULL, file in ${tmpdir()}`,
    );

    const c1 = await compare('sqlite c=1', [unbatched, guardedSide], 1, PLAN);
    report(c1);
    const r1 = ratio(c1, 'guarded', 'floor (unbatched)');
    console.log(
      `  => c=1 guarded/floor ${r1.toFixed(2)}x, median of rounds (target >= 0.8x): ${verdict(r1 >= 0.8)}`,
    );

    const before = engine.stats();
    const c16 = await compare(
      `sqlite c=${EXECUTORS}`,
      [unbatched, batchedSide, guardedSide],
      EXECUTORS,
      PLAN,
    );
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
      `  => group commit: ${txs} transactions in ${commits} COMMITs (${(txs / Math.max(1, commits)).toFixed(1)} per COMMIT, largest ${after.largestBatch}); the batched floor: ${floor.batch.commits} COMMITs in all`,
    );
  } finally {
    await engine.close();
    floor.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// --- PostgreSQL --------------------------------------------------------------------------------

async function benchPostgres(): Promise<void> {
  const url = await reachablePostgres('store concurrency bench');
  if (url === undefined) return;
  console.log(`PostgreSQL at ${redact(url)}: ${await postgresSettings(url)}`);
  const gdb = await benchDatabase(url, 'guarded');
  const fdb = await benchDatabase(url, 'floor');
  const engine: StoreEngine = openPostgresEngine(gdb.url, { maxConnections: EXECUTORS + 2 });
  try {
    const floor = await openPostgresFloor(fdb.url, EXECUTORS);
    try {
      const guarded = await openGuarded(engine, EXECUTORS);
      const guardedSide: Side = { name: 'guarded', run: (w, n) => guarded.lifecycle(w, `k-${n}`, n) };
      const floorSide: Side = { name: 'floor', run: floor.lifecycle };
      for (const c of [1, EXECUTORS]) {
        const results = await compare(`postgres c=${c}`, [floorSide, guardedSide], c, PLAN);
        report(results);
        const g = rate(results.get('guarded')?.t ?? tally());
        const line = `  => c=${c} guarded/floor ${ratio(results, 'guarded', 'floor').toFixed(2)}x, median of rounds`;
        console.log(
          c === 1 ? line : `${line}; guarded ${g.toFixed(0)}/s (target >= 1000/s): ${verdict(g >= 1000)}`,
        );
      }
    } finally {
      await floor.close();
    }
  } finally {
    await engine.close();
    await gdb.drop();
    await fdb.drop();
  }
}

async function main(): Promise<void> {
  console.log(
    `store concurrency bench: ${PLAN.rounds} alternating rounds of ${PLAN.roundMs} ms per side, concurrency 1 and ${EXECUTORS}; node ${process.version}`,
  );
  if (ENGINES.includes('sqlite')) await benchSqlite();
  if (ENGINES.includes('postgres')) await benchPostgres();
}

await main();
