/**
 * Runs of several subjects appended together (src/store/evidence-runs.ts): the same chains as
 * appending each run alone, in a fixed number of statements; a taken position fails the whole
 * transaction. On PostgreSQL the multi-row path is forced (serverFunctions off) as well as run
 * through its server functions.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { isBatonError } from '../../src/core/errors.js';
import { migrate } from '../../src/store/migrations.js';
import { appendEvidenceRun, listEvidence, type EvidenceInput } from '../../src/store/evidence-log.js';
import { appendEvidenceRuns } from '../../src/store/evidence-runs.js';
import { verifyEvidence } from '../../src/store/evidence-verify.js';
import type { SqlValue, StoreEngine, Transaction } from '../../src/store/engine.js';
import { enginesUnderTest, type EngineUnderTest, type StoreUnderTest } from './engines.js';

const engines = await enginesUnderTest();

const input = (subject: string, i: number): EvidenceInput => ({
  subject,
  type: `step.${i}`,
  body: { i, note: 'ü', subject },
  at: 1_700_000_000_000 + i,
  actor: 'tester',
});

/** `tx` with its statements counted and, if asked, Baton's server functions hidden. */
function watched(tx: Transaction, statements: string[], functions: boolean): Transaction {
  return new Proxy(tx, {
    get(target, key, receiver) {
      if (key === 'serverFunctions' && !functions) return false;
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return (sql: string, params?: readonly SqlValue[]) => {
        statements.push(sql);
        return (value as (s: string, p?: readonly SqlValue[]) => unknown).call(target, sql, params);
      };
    },
  });
}

async function store(e: EngineUnderTest, t: TestContext): Promise<StoreUnderTest> {
  const s = await e.open(t);
  await migrate(s.engine);
  return s;
}

/** B and C exist before; A is new. In one transaction: C first alone, then A, B, C together. */
async function appendMixed(engine: StoreEngine, together: boolean, statements: string[], functions: boolean) {
  await engine.transaction(async (tx) => {
    await appendEvidenceRun(tx, [input('B', 1)]);
    await appendEvidenceRun(tx, [input('C', 2), input('C', 3)]);
  });
  await engine.transaction(async (tx) => {
    await appendEvidenceRun(tx, [input('C', 4)]);
    const runs = [[input('A', 5), input('A', 6)], [input('B', 7)], [input('C', 8), input('C', 9)]];
    if (!together) for (const run of runs) await appendEvidenceRun(tx, run);
    else await appendEvidenceRuns(watched(tx, statements, functions), runs);
  });
}

const chains = async (engine: StoreEngine) =>
  engine.read(async (ex) => {
    const out: Record<string, unknown[]> = {};
    for (const s of ['A', 'B', 'C'])
      out[s] = (await listEvidence(ex, s)).map(({ type, prev, hash }) => [type, prev, hash]);
    // last_seq is the seq the engine gave the chain's last event (RETURNING, or SQLite's rowids).
    const heads = await ex.all<{
      subject: string;
      head: string;
      count: number | string;
      last: number | string;
      max: number | string;
    }>(
      `SELECT h.subject, h.head, h.count, h.last_seq AS last,
              (SELECT MAX(seq) FROM evidence_events e WHERE e.subject = h.subject) AS max
         FROM evidence_heads h ORDER BY h.subject`,
    );
    for (const h of heads) assert.equal(Number(h.last), Number(h.max), `last_seq of ${h.subject}`);
    return { out, heads: heads.map((h) => [h.subject, h.head, Number(h.count), Number(h.last)]) };
  });

for (const e of engines) {
  const modes = e.kind === 'postgres' ? [false, true] : [false];
  for (const functions of modes) {
    const name = `${e.name}${functions ? ', server functions' : ''}`;
    test(`[${name}] runs of several subjects together are the chains each run alone makes`, async (t) => {
      const together = await store(e, t);
      const alone = await store(e, t);
      const statements: string[] = [];
      await appendMixed(together.engine, true, statements, functions);
      await appendMixed(alone.engine, false, [], functions);
      assert.deepEqual(await chains(together.engine), await chains(alone.engine));
      assert.deepEqual(await verifyEvidence(together.engine), {
        ok: true,
        subjects: 3,
        events: 9,
        problems: 0,
      });
      if (functions) {
        // One baton_append_evidence call a run, as appendEvidenceRun makes it.
        assert.equal(statements.length, 3, statements.join('\n'));
      } else {
        // Heads of A and B read (C's is known), all events, the new head (A), the moved ones (B, C).
        assert.deepEqual(
          statements.map((s) => s.trim().split(/\s+/).slice(0, 3).join(' ')),
          [
            'SELECT subject, head,',
            // SQLite's form skips the statement journal (insertEventsSql).
            e.kind === 'sqlite' ? 'INSERT OR IGNORE' : 'INSERT INTO evidence_events',
            'INSERT INTO evidence_heads',
            'UPDATE evidence_heads SET',
          ],
        );
      }
    });

    test(`[${name}] a position already taken fails the whole transaction; nothing of it commits`, async (t) => {
      const s = await store(e, t);
      await s.engine.transaction((tx) => appendEvidenceRun(tx, [input('B', 1)]));
      // An event at B's next position written behind Baton's back (its head not moved).
      await s.tamper(
        "INSERT INTO evidence_events (subject, idx, type, body, at, actor, prev, hash) VALUES ('B', 2, 'x', '{}', 1, 'x', NULL, 'sha-256:x')",
      );
      await assert.rejects(
        s.engine.transaction((tx) =>
          appendEvidenceRuns(watched(tx, [], functions), [[input('A', 2)], [input('B', 3)]]),
        ),
        (x: unknown) => isBatonError(x, 'store_corrupt'),
      );
      const left = await s.engine.read((ex) =>
        ex.all<{ subject: string }>('SELECT subject FROM evidence_heads'),
      );
      assert.deepEqual(
        left.map((r) => r.subject),
        ['B'],
      );
      assert.equal((await s.engine.read((ex) => listEvidence(ex, 'A'))).length, 0);
    });
  }

  test(`[${e.name}] one subject named by two runs is refused before anything is written`, async (t) => {
    const s = await store(e, t);
    await assert.rejects(
      s.engine.transaction((tx) =>
        appendEvidenceRuns(watched(tx, [], false), [[input('A', 1)], [input('A', 2)]]),
      ),
      (x: unknown) => isBatonError(x, 'internal'),
    );
    assert.equal((await s.engine.read((ex) => listEvidence(ex, 'A'))).length, 0);
  });
}
