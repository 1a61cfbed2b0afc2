/**
 * Migration 4 (no hot rows) over a store written before it, on both engines: the evidence log keeps
 * every event and hash, gains each event's chain position, verifies, and goes on appending after
 * the copied events; open occurrences are dealt to the stripes, which count them exactly.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalize } from '../../src/core/jcs.js';
import type { Transaction } from '../../src/store/engine.js';
import { appendEvidence, evidenceHash, listEvidence } from '../../src/store/evidence-log.js';
import { verifyEvidence } from '../../src/store/evidence-verify.js';
import { migrate } from '../../src/store/migrations.js';
import { migrations } from '../../src/store/migrations/index.js';
import { OPEN_STRIPES } from '../../src/store/occurrences-limits.js';
import { insertBareOccurrence, insertBareParents } from './bare-occurrence.js';
import { enginesUnderTest } from './engines.js';

const engines = await enginesUnderTest();
const BEFORE_4 = migrations.filter((m) => m.id < 4);
const PLAN = ['A', 'B', 'A', 'C', 'A', 'B', 'C'];
const PHASES = ['reserved', 'entered', 'reserved', 'resolved', 'entered', 'reserved', 'released', 'reserved'];

/** An append as the code before migration 4 made it: the global counter row, then the event. */
async function appendBefore4(tx: Transaction, subject: string, i: number): Promise<void> {
  const counter = await tx.get<{ last_seq: number }>(
    'UPDATE evidence_counter SET last_seq = last_seq + 1 WHERE id = 1 RETURNING last_seq',
  );
  const seq = Number(counter?.last_seq);
  const head = await tx.get<{ head: string }>(`SELECT head FROM evidence_heads WHERE subject = ?`, [subject]);
  const e = { subject, type: 'old', body: { i }, at: 1_000 + i, actor: 'v3', prev: head?.head ?? null };
  const hash = evidenceHash(e);
  await tx.run(
    'INSERT INTO evidence_events (seq, subject, type, body, at, actor, prev, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    [seq, subject, e.type, canonicalize(e.body), e.at, e.actor, e.prev, hash],
  );
  if (head === undefined) {
    await tx.run('INSERT INTO evidence_heads (subject, head, count, last_seq) VALUES (?, ?, 1, ?)', [
      subject,
      hash,
      seq,
    ]);
  } else {
    await tx.run('UPDATE evidence_heads SET head = ?, count = count + 1, last_seq = ? WHERE subject = ?', [
      hash,
      seq,
      subject,
    ]);
  }
}

/** An occurrence row of migration 2's shape, in the given phase. */
function occurrenceBefore4(tx: Transaction, i: number, phase: string): Promise<void> {
  return insertBareOccurrence(tx, { id: `occ-${i}`, creationKey: `k-${i}`, phase, at: i });
}

for (const e of engines) {
  test(`[${e.name}] migration 4 keeps an older store's evidence and counts its open occurrences`, async (t) => {
    const { engine } = await e.open(t);
    await migrate(engine, { list: BEFORE_4 });
    for (const [i, subject] of PLAN.entries())
      await engine.transaction((tx) => appendBefore4(tx, subject, i));
    await engine.transaction(async (tx) => {
      await insertBareParents(tx);
      for (const [i, phase] of PHASES.entries()) await occurrenceBefore4(tx, i, phase);
    });
    // Before migration 4 there is no idx column to list a chain by.
    await assert.rejects(engine.read((tx) => listEvidence(tx, 'A')));

    const result = await migrate(engine);
    assert.deepEqual(
      result.applied.map((m) => m.id),
      migrations.filter((m) => m.id >= 4).map((m) => m.id),
    );
    const stripes = await engine.read((tx) =>
      tx.all<{ stripe: number; pending: number; in_flight: number; r: number; e: number }>(
        `SELECT s.stripe, s.pending, s.in_flight,
           (SELECT COUNT(*) FROM aoc_occurrences o WHERE o.open_stripe = s.stripe AND o.phase = 'reserved') AS r,
           (SELECT COUNT(*) FROM aoc_occurrences o WHERE o.open_stripe = s.stripe AND o.phase = 'entered') AS e
         FROM aoc_open_stripes s`,
      ),
    );
    assert.equal(stripes.length, OPEN_STRIPES);
    for (const s of stripes) assert.deepEqual([s.pending, s.in_flight], [s.r, s.e]);
    const total = (k: 'pending' | 'in_flight'): number => stripes.reduce((n, s) => n + s[k], 0);
    assert.deepEqual(
      [total('pending'), total('in_flight')],
      [PHASES.filter((p) => p === 'reserved').length, PHASES.filter((p) => p === 'entered').length],
    );
    // Dealt round-robin: no stripe holds more than one of each here.
    assert.ok(stripes.every((s) => s.pending <= 1 && s.in_flight <= 1));
    // The bare rows stand in for an older store's occurrences and budget but have no evidence
    // chains, which verify now compares those rows with (evidence-state.ts): they go before it runs.
    await engine.transaction(async (tx) => {
      await tx.run('DELETE FROM aoc_occurrences');
      await tx.run('DELETE FROM aoc_authorities');
    });
    const report = await verifyEvidence(engine);
    assert.deepEqual(report, { ok: true, subjects: 3, events: PLAN.length, problems: 0 });
    const a = await engine.read((tx) => listEvidence(tx, 'A'));
    const positions = await engine.read((tx) =>
      tx.all<{ seq: number; idx: number }>(
        "SELECT seq, idx FROM evidence_events WHERE subject = 'A' ORDER BY idx",
      ),
    );
    assert.deepEqual(
      positions.map((ev) => [ev.seq, ev.idx]),
      [
        [1, 1],
        [3, 2],
        [5, 3],
      ],
    );
    // Appends go on after the copied events: a new seq, the next position, linked to the old head.
    const next = await engine.transaction((tx) =>
      appendEvidence(tx, { subject: 'A', type: 'new', body: {}, at: 9, actor: 'v4' }),
    );
    assert.ok(next.seq > PLAN.length);
    assert.deepEqual([next.idx, next.prev], [4, a.at(-1)?.hash]);
    assert.equal((await verifyEvidence(engine)).ok, true);
  });
}
