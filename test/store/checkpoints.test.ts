/**
 * WAL checkpoints off the request path (docs/store.md, "Checkpoints off the request path";
 * src/store/sqlite-checkpointer.ts): with the inline writer a thread copies the WAL into the
 * database between COMMITs, the WAL still restarts (so it stays bounded), nothing committed is
 * lost, and when the thread dies SQLite's own checkpoint takes over again.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  openSqliteEngine,
  type SqliteEngineOptions,
  type SqliteStoreEngine,
} from '../../src/store/sqlite.js';
import { BACKSTOP_FRAMES, liveCheckpointers, RESTART_FRAMES } from '../../src/store/sqlite-checkpointer.js';
import { fileURLToPath } from 'node:url';
import { spawnNode } from '../support/child.js';
import { tempDir } from './support.js';

const PAGE = 4096;
// A 16 KiB value: each transaction appends about five WAL frames.
const VALUE = 'x'.repeat(16 * 1024);

async function open(t: TestContext, options: SqliteEngineOptions = {}) {
  const path = join(tempDir(t), 'baton.db');
  const engine = openSqliteEngine(path, options);
  t.after(() => engine.close());
  await engine.transaction((tx) => tx.run('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)'));
  return { engine, path };
}

/** `n` transactions from `writers` concurrent callers (group commit batches some of them). */
async function write(engine: SqliteStoreEngine, from: number, n: number, writers = 4): Promise<void> {
  let next = from;
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (next < from + n) {
        const id = next++;
        await engine.transaction((tx) => tx.run('INSERT INTO t (id, v) VALUES (?, ?)', [id, VALUE]));
      }
    }),
  );
}

/** The WAL's length in frames (its file never shrinks: the most it ever held since opening). */
const walFrames = (path: string): number => Math.floor(statSync(`${path}-wal`).size / (PAGE + 24));

const rowsOnDisk = (path: string): number => {
  const raw = new Database(path, { readonly: true });
  try {
    return (raw.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n;
  } finally {
    raw.close();
  }
};

test("[sqlite] the checkpoint thread keeps the WAL near its restart point, below SQLite's backstop", async (t) => {
  const { engine, path } = await open(t);
  // At least five frames each (four overflow pages of the value and its leaf): ≥ 12,000 frames,
  // more than SQLite's backstop. 900 transactions were once too few on a loaded CI machine: its
  // passes, which never overlap, were fewer and slower, and saw the WAL restart only once.
  const written = 2400;
  assert.ok(written * 5 > BACKSTOP_FRAMES);
  await write(engine, 0, written);
  const c = engine.stats().checkpoints;
  assert.ok(c !== undefined, 'the inline writer on a file has a checkpoint thread');
  assert.equal(c.fellBack, false);
  assert.ok(c.passes > 0 && c.restarts >= 2, `passes ${c.passes}, restarts ${c.restarts}`);
  assert.ok(c.holds >= 1, 'a batch was held for the pass that lets the WAL restart');
  // What a held batch waits for is the rest since the thread's last pass, not a whole checkpoint.
  assert.ok(c.heldFrames / c.holds < RESTART_FRAMES, `${c.heldFrames} frames in ${c.holds} holds`);
  // Restarted by the thread's passes, not by SQLite's own checkpoint at BACKSTOP_FRAMES: the WAL,
  // whose file never shrinks, never reached the backstop though more frames than that were
  // written. How far past RESTART_FRAMES it gets depends on how fast the thread's passes run
  // beside the writer (loaded machines: ≈ 2,400 and ≈ 4,100 seen), so that is not asserted.
  assert.ok(walFrames(path) < BACKSTOP_FRAMES, `the WAL grew to ${walFrames(path)} frames`);
  assert.equal(rowsOnDisk(path), written, 'every committed row is there, read from another connection');
});

test('[sqlite] with checkpoints left to SQLite there is no thread, and the WAL is bounded by SQLite', async (t) => {
  const { engine, path } = await open(t, { checkpoints: 'sqlite' });
  await write(engine, 0, 900);
  assert.equal(engine.stats().checkpoints, undefined);
  assert.ok(walFrames(path) < 2 * RESTART_FRAMES, `the WAL grew to ${walFrames(path)} frames`);
});

test('[sqlite] when the checkpoint thread dies, SQLite checkpoints again and nothing is lost', async (t) => {
  const { engine, path } = await open(t);
  await write(engine, 0, 100); // starts the thread
  const [checkpointer] = [...liveCheckpointers];
  assert.ok(checkpointer !== undefined, 'the thread runs');
  await checkpointer.kill();
  await write(engine, 100, 900);
  assert.equal(engine.stats().checkpoints?.fellBack, true);
  // Past the kill ≈ 4,500 more frames: bounded by SQLite's own checkpoint at 1000, not the backstop.
  assert.ok(walFrames(path) < 2 * RESTART_FRAMES, `the WAL grew to ${walFrames(path)} frames`);
  assert.equal(rowsOnDisk(path), 1000);
  await engine.close();
  const reopened = openSqliteEngine(path);
  t.after(() => reopened.close());
  const n = await reopened.read((tx) => tx.get<{ n: number }>('SELECT count(*) AS n FROM t'));
  assert.equal(n?.n, 1000);
});

test('[sqlite] an in-memory store has no checkpoint thread', async (t) => {
  const engine = openSqliteEngine(':memory:');
  t.after(() => engine.close());
  await engine.transaction((tx) => tx.run('CREATE TABLE t (id INTEGER PRIMARY KEY)'));
  assert.equal(engine.stats().checkpoints, undefined);
});

const fromTs = import.meta.url.endsWith('.ts');
const writer = fileURLToPath(
  new URL(`./fixtures/checkpoint-writer.${fromTs ? 'ts' : 'js'}`, import.meta.url),
);

test('[sqlite] a process killed while the checkpoint thread works loses no acknowledged transaction', async (t) => {
  const path = join(tempDir(t), 'baton.db');
  const proc = spawnNode('checkpoint-writer', fromTs ? ['--import', 'tsx', writer, path] : [writer, path]);
  // Past two WAL restarts by the thread: passes, holds and restarts have all happened.
  await proc.waitForLine(/^\d+ [2-9]\d*$/, 'two WAL restarts');
  proc.kill('SIGKILL');
  await proc.waitForExit();
  const acknowledged = proc.lines.map((l) => Number(l.split(' ')[0])).filter(Number.isInteger);
  assert.ok(acknowledged.length > 100);
  const engine = openSqliteEngine(path);
  t.after(() => engine.close());
  const ids = await engine.read((tx) => tx.all<{ id: number }>('SELECT id FROM t'));
  const present = new Set(ids.map((r) => r.id));
  const lost = acknowledged.filter((id) => !present.has(id));
  assert.deepEqual(lost, [], 'every acknowledged row survived the kill');
});
