/**
 * Which b-trees the WAL pages of one SQLite lifecycle belong to (docs/store.md, "WAL pages per
 * commit"): the two transactions MCP and HTTP callers use — create-and-enter, acknowledge-and-settle
 * — on a real file, after BENCH_WARM lifecycles so the b-trees have their usual depth. After each
 * transaction the WAL's new frames are read (32-byte header, then per frame a 24-byte header and one
 * page) and their page numbers mapped to tables and indexes with the `dbstat` virtual table.
 *
 *   node dist/bench/wal-pages.js      (BENCH_WARM=300 BENCH_SAMPLES=5 to change)
 *
 * What a page costs a COMMIT on this disk (BENCH_COMMIT_COST=1): plain `BEGIN IMMEDIATE; one row
 * into each of k tables; COMMIT` on one WAL file, `synchronous = FULL`, k = 1, 12, 25, 40 distinct
 * b-trees alternated commit by commit in this one process (so load drifts hit every k alike),
 * COMMIT's wall p50 and CPU mean per k. Whether fewer b-trees per write is worth a schema change.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteEngine } from '../src/store/index.js';
import { acknowledgementFree, request } from './occurrences-fixtures.js';
import { openGuarded } from './guarded.js';
import { newFrames, readWal } from './wal-frames.js';

const WARM = Number(process.env['BENCH_WARM'] ?? 300);
const SAMPLES = Number(process.env['BENCH_SAMPLES'] ?? 5);

function owners(dbPath: string): Map<number, string> {
  const db = new Database(dbPath, { readonly: true });
  try {
    const rows = db.prepare('SELECT name, pageno, pagetype FROM dbstat').all() as {
      name: string;
      pageno: number;
      pagetype: string;
    }[];
    return new Map(rows.map((r) => [r.pageno, r.pagetype === 'leaf' ? r.name : `${r.name} (${r.pagetype})`]));
  } finally {
    db.close();
  }
}

/** The last lifecycle's evidence events, by subject and type (BENCH_EVENTS=1). */
function events(dbPath: string): void {
  const db = new Database(dbPath, { readonly: true });
  try {
    const rows = db
      .prepare(
        'SELECT seq, subject, type, length(body) AS len FROM evidence_events ORDER BY seq DESC LIMIT 12',
      )
      .all();
    console.log(rows.reverse());
  } finally {
    db.close();
  }
}

function tally(pages: readonly number[], map: Map<number, string>): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of new Set(pages)) {
    const name = p === 1 ? 'page 1 (header + sqlite_schema)' : (map.get(p) ?? 'freelist / unmapped');
    out.set(name, (out.get(name) ?? 0) + 1);
  }
  return out;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-walpages-'));
  const dbPath = join(dir, 'baton.db');
  const engine = openSqliteEngine(dbPath);
  try {
    const g = await openGuarded(engine, 1);
    for (let i = 0; i < WARM; i++) await g.lifecycle(0, `warm-${i}`, i);
    const x = g.executors[0];
    if (x === undefined) throw new Error('no executor');
    const sums = [new Map<string, number>(), new Map<string, number>()];
    const totals: [number[], number[]] = [[], []];
    for (let s = 0; s < SAMPLES; s++) {
      const i = WARM + s;
      const w0 = readWal(`${dbPath}-wal`);
      const started = await g.service.createAndEnter({
        credential: x.credential,
        creationKey: `probe-${i}`,
        provider: { profileId: 'bench-payments', profileVersion: '1' },
        request: request(i),
        authority: { id: x.authority, amount: request(i).amount },
      });
      const w1 = readWal(`${dbPath}-wal`);
      if (started.ticket === null) throw new Error('not entered');
      const obs = acknowledgementFree(started.ticket, `pay_probe${String(i).padStart(6, '0')}`);
      const { source: _source, ...ack } = obs;
      await g.service.acknowledgeAndObserve(ack, [obs]);
      const w2 = readWal(`${dbPath}-wal`);
      const map = owners(dbPath);
      if (process.env['BENCH_EVENTS'] === '1' && s === 0) events(dbPath);
      [newFrames(w0, w1), newFrames(w1, w2)].forEach((pages, t) => {
        totals[t]?.push(pages.length);
        for (const [k, v] of tally(pages, map)) sums[t]?.set(k, (sums[t]?.get(k) ?? 0) + v);
      });
    }
    const names = ['create-and-enter', 'acknowledge-and-settle'];
    names.forEach((name, t) => {
      const frames = totals[t] ?? [];
      const mean = frames.reduce((a, b) => a + b, 0) / Math.max(1, frames.length);
      console.log(`${name}: frames per commit ${frames.join(', ')}; mean ${mean.toFixed(1)}`);
      console.log(`  distinct pages per b-tree (mean of ${SAMPLES}; leaf unless marked):`);
      const rows = [...(sums[t] ?? new Map<string, number>())].sort((a, b) => b[1] - a[1]);
      for (const [k, v] of rows) console.log(`  ${(v / SAMPLES).toFixed(1).padStart(5)}  ${k}`);
    });
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const COST_KS = [1, 12, 25, 40];
const COST_TABLES = 40;

function commitCost(): void {
  const dir = mkdtempSync(join(tmpdir(), 'baton-commitcost-'));
  const db = new Database(join(dir, 'cost.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    for (let t = 0; t < COST_TABLES; t++) db.exec(`CREATE TABLE t${t} (id INTEGER PRIMARY KEY, v TEXT)`);
    const inserts = Array.from({ length: COST_TABLES }, (_, t) =>
      db.prepare(`INSERT INTO t${t} (v) VALUES (?)`),
    );
    const [begin, commit] = [db.prepare('BEGIN IMMEDIATE'), db.prepare('COMMIT')];
    const once = (k: number): [number, number] => {
      begin.run();
      for (const ins of inserts.slice(0, k)) ins.run('x'.repeat(100));
      const cpu = process.cpuUsage();
      const t0 = performance.now();
      commit.run();
      const wall = performance.now() - t0;
      const used = process.cpuUsage(cpu);
      return [wall, (used.user + used.system) / 1000];
    };
    const runs = new Map<number, { wall: number[]; cpu: number[] }>(
      COST_KS.map((k) => [k, { wall: [], cpu: [] }]),
    );
    for (let i = 0; i < 100 + SAMPLES * 100; i++) {
      for (const k of COST_KS) {
        const [wall, cpu] = once(k);
        const r = runs.get(k);
        if (i < 100 || r === undefined) continue;
        r.wall.push(wall);
        r.cpu.push(cpu);
      }
      if (i % 150 === 0) db.pragma('wal_checkpoint(TRUNCATE)');
    }
    for (const [k, r] of runs) {
      const p50 = [...r.wall].sort((a, b) => a - b)[r.wall.length >> 1] ?? Number.NaN;
      const cpu = r.cpu.reduce((a, b) => a + b, 0) / Math.max(1, r.cpu.length);
      console.log(
        `${String(k).padStart(2)} pages: COMMIT wall p50 ${p50.toFixed(3)} ms, CPU mean ${cpu.toFixed(3)} ms (${r.wall.length} commits)`,
      );
    }
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.env['BENCH_COMMIT_COST'] === '1') commitCost();
else await main();
