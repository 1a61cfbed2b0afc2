/**
 * What a NEW PostgreSQL connection costs Baton before its transactions run at their usual speed
 * (docs/store.md "PostgreSQL", `idleTimeoutMs`): its backend compiles each PL/pgSQL transition
 * function on first call and plans their statements (custom plans for the first five executions).
 * On a migrated scratch database, for each of BENCH_FIRST_USE_CONNECTIONS fresh connections: the
 * first call of each of the four transition functions (the lock calls refuse an unknown credential;
 * the batch runs three static writes that match no row), then the same four calls once warm. The
 * wall time of each group on one connection, nothing else running on it: the cost a pooled
 * connection pays again each time the pool closes it while idle.
 *
 *   node dist/bench/postgres-first-use.bench.js   (BENCH_FIRST_USE_CONNECTIONS=20)
 */
import pg from 'pg';
import { migrate, openPostgresEngine } from '../src/store/index.js';
import { benchDatabase, percentile, reachablePostgres } from './support.js';

const CONNECTIONS = Number(process.env['BENCH_FIRST_USE_CONNECTIONS'] ?? 20);

const CALLS = [
  "SELECT baton_lock_create('no-such-credential', 'k', 'a')::text",
  "SELECT baton_lock_entry('no-such-credential', 'o')::text",
  "SELECT baton_lock_observe_head('no-such-credential', 'o')::text",
  `SELECT baton_batch_static('${JSON.stringify([
    { k: 'release_in_flight', p: ['999'] },
    { k: 'authority_update', p: ['0', '0', '0', '1', 'none', '0', '0'] },
    { k: 'lineage_update', p: ['0', '0', '1', 'none', '0', '0'] },
  ])}')`,
];

async function timed(c: pg.Client): Promise<number> {
  const t0 = performance.now();
  for (const sql of CALLS) await c.query(sql);
  return performance.now() - t0;
}

const url = await reachablePostgres('postgres-first-use');
if (url !== undefined) {
  const db = await benchDatabase(url, 'first_use');
  try {
    const engine = openPostgresEngine(db.url);
    await migrate(engine);
    await engine.close();
    const first: number[] = [];
    const warm: number[] = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        first.push(await timed(c));
        for (let k = 0; k < 5; k++) await timed(c); // past the custom plans
        warm.push(await timed(c));
      } finally {
        await c.end();
      }
    }
    const line = (xs: number[]) =>
      `p50 ${percentile(xs, 50).toFixed(2)} ms, max ${Math.max(...xs).toFixed(2)} ms`;
    console.log(`postgres-first-use: ${CONNECTIONS} fresh connections, the four transition functions' calls`);
    console.log(`  first calls on a new connection: ${line(first)}`);
    console.log(`  the same calls once warm:        ${line(warm)}`);
  } finally {
    await db.drop();
  }
}
