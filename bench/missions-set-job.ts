/**
 * The pushed-SET job in plain SQL (issue 11 §8; the ceiling "the same job … in the same run"
 * beside the 0.5x target, as docs/scale.md shows them): what any receiver that keeps A3.4's
 * rules durably must do per pushed SET, with no Baton code but the store engine's transaction
 * (its group commit, as the push floor uses):
 *
 * - the signature verified raw on the thread pool (as the push floor), the payload decoded and
 *   parsed with plain `JSON.parse` (no strict-JSON policy, no claim checks beyond what it reads);
 * - the SET's digest (SHA-256 of its bytes) for replay (C-A18: same bytes duplicate, other bytes
 *   conflict), its `jti` inserted under a primary key;
 * - the Mission's view moved only by a strictly growing version, ONE upsert whose WHERE is the
 *   version check (no read first);
 * - one evidence event chained to the Mission's head (its SHA-256 over the previous hash and the
 *   body), the head read and written;
 * - for a non-active state, the stop propagation's lookup of the work bound to the Mission (A3.7;
 *   an index probe, empty here).
 *
 * What it leaves out makes it cheaper than Baton: strict JSON, claim and time checks, the view's
 * freshness and expiry, the stream's liveness write, the event's canonical form, and the shared
 * evidence tables' indexes. Two ways, both printed: one transaction per SET (the engine's group
 * commit shares COMMITs), and batched as Baton's signal batcher batches.
 */
import { createHash } from 'node:crypto';
import { gatherArrivals, LIFECYCLE_EVENT } from '../src/missions/index.js';
import type { StoreEngine, Transaction } from '../src/store/engine.js';

const TABLES = [
  'CREATE TABLE job_seen (jti TEXT PRIMARY KEY, digest TEXT NOT NULL) WITHOUT ROWID',
  'CREATE TABLE job_views (mission TEXT PRIMARY KEY, state TEXT NOT NULL, version INTEGER NOT NULL) WITHOUT ROWID',
  'CREATE TABLE job_heads (subject TEXT PRIMARY KEY, seq INTEGER NOT NULL, hash TEXT NOT NULL) WITHOUT ROWID',
  `CREATE TABLE job_events (subject TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL,
     body TEXT NOT NULL, hash TEXT NOT NULL, PRIMARY KEY (subject, seq))`,
  'CREATE TABLE job_items (id TEXT PRIMARY KEY, mission TEXT NOT NULL)',
  'CREATE INDEX job_items_mission ON job_items (mission)',
];

interface Lifecycle {
  readonly mission_id: string;
  readonly state: string;
  readonly version: number;
}

function claimsOf(set: string): { jti: string; event: Lifecycle } {
  const payload = set.slice(set.indexOf('.') + 1, set.lastIndexOf('.'));
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
    jti: string;
    events: Record<string, Lifecycle>;
  };
  const event = claims.events[LIFECYCLE_EVENT];
  if (event === undefined) throw new Error('bench SET without an event');
  return { jti: claims.jti, event };
}

async function applyOne(tx: Transaction, set: string): Promise<void> {
  const { jti, event } = claimsOf(set);
  const digest = createHash('sha256').update(set).digest('base64url');
  const seen = await tx.run('INSERT INTO job_seen (jti, digest) VALUES (?, ?) ON CONFLICT DO NOTHING', [
    jti,
    digest,
  ]);
  if (seen.changes !== 1) throw new Error('bench SET replayed');
  const moved = await tx.run(
    `INSERT INTO job_views (mission, state, version) VALUES (?, ?, ?)
     ON CONFLICT (mission) DO UPDATE SET state = excluded.state, version = excluded.version
     WHERE job_views.version < excluded.version`,
    [event.mission_id, event.state, event.version],
  );
  if (moved.changes !== 1) throw new Error('bench SET out of order');
  const subject = `mission:${event.mission_id}`;
  const head = await tx.get<{ seq: number; hash: string }>(
    'SELECT seq, hash FROM job_heads WHERE subject = ?',
    [subject],
  );
  const body = JSON.stringify({ digest, jti, state: event.state, version: event.version });
  const seq = (head?.seq ?? 0) + 1;
  const hash = createHash('sha256')
    .update(head?.hash ?? '')
    .update(body)
    .digest('base64url');
  await tx.run('INSERT INTO job_events (subject, seq, type, body, hash) VALUES (?, ?, ?, ?, ?)', [
    subject,
    seq,
    'mission_signal_applied',
    body,
    hash,
  ]);
  await tx.run(
    `INSERT INTO job_heads (subject, seq, hash) VALUES (?, ?, ?)
     ON CONFLICT (subject) DO UPDATE SET seq = excluded.seq, hash = excluded.hash`,
    [subject, seq, hash],
  );
  if (event.state !== 'active')
    await tx.all('SELECT id FROM job_items WHERE mission = ?', [event.mission_id]);
}

type Lanes = readonly (readonly string[])[];
type Verify = (set: string) => Promise<boolean>;

export interface SetJobCeiling {
  /** One transaction per SET; concurrent lanes share COMMITs through the engine's group commit. */
  perSet(lanes: Lanes, verify: Verify): Promise<number>;
  /**
   * SETs that arrive while a transaction is in flight wait and then share the next one, as
   * Baton's signal batcher does (from idle, the same `gatherArrivals` turns; no timer).
   */
  batched(lanes: Lanes, verify: Verify): Promise<number>;
}

async function throughLanes(lanes: Lanes, verify: Verify, apply: (set: string) => Promise<void>) {
  const start = performance.now();
  await Promise.all(
    lanes.map(async (lane) => {
      for (const set of lane) {
        if (!(await verify(set))) throw new Error('raw verify failed');
        await apply(set);
      }
    }),
  );
  return lanes.reduce((a, l) => a + l.length, 0) / ((performance.now() - start) / 1000);
}

function batcher(engine: StoreEngine): (set: string) => Promise<void> {
  const queue: { set: string; done: (error?: Error) => void }[] = [];
  let busy = false;
  const drain = async (): Promise<void> => {
    busy = true;
    await gatherArrivals(() => queue.length);
    while (queue.length > 0) {
      const batch = queue.splice(0);
      try {
        await engine.transaction(async (tx) => {
          for (const w of batch) await applyOne(tx, w.set);
        });
        for (const w of batch) w.done();
      } catch (error) {
        const failed = error instanceof Error ? error : new Error(String(error));
        for (const w of batch) w.done(failed);
      }
    }
    busy = false;
  };
  return (set) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ set, done: (error) => (error === undefined ? resolve() : reject(error)) });
      if (!busy) void drain();
    });
}

export async function setJobCeiling(engine: StoreEngine): Promise<SetJobCeiling> {
  await engine.transaction(async (tx) => {
    for (const sql of TABLES) await tx.run(sql);
  });
  const batched = batcher(engine);
  return {
    perSet: (lanes, verify) =>
      throughLanes(lanes, verify, (set) => engine.transaction((tx) => applyOne(tx, set))),
    batched: (lanes, verify) => throughLanes(lanes, verify, batched),
  };
}
