/**
 * Migration 28 (the handover index) over a store written before it, on both engines: every string
 * id in a lineage's `generation_advanced` events' `delivered.reserved` and `delivered.unresolved`
 * becomes a row naming that event's position; other subjects, other event types, lists that are
 * not lists, ids that are not strings add nothing; and a body that is not JSON (a row changed
 * behind Baton's back) adds nothing without stopping the migration.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../src/core/json.js';
import type { Transaction } from '../../src/store/engine.js';
import { appendEvidence } from '../../src/store/evidence-log.js';
import { migrate } from '../../src/store/migrations.js';
import { migrations } from '../../src/store/migrations/index.js';
import { enginesUnderTest } from './engines.js';

const engines = await enginesUnderTest();
const BEFORE_28 = migrations.filter((m) => m.id < 28);
const THROUGH_28 = migrations.filter((m) => m.id <= 28);

const delivered = (reserved: unknown, unresolved: unknown): JsonObject =>
  ({ delivered: { reserved, unresolved } }) as JsonObject;

async function seed(tx: Transaction): Promise<void> {
  const append = (subject: string, type: string, body: JsonObject) =>
    appendEvidence(tx, { subject, type, body, at: 1_000, actor: 'operator:test' });
  await append('lineage:a', 'generation_advanced', { generation: 1, ...delivered([], []) });
  await append('lineage:a', 'generation_advanced', { generation: 2, ...delivered(['occ-1'], ['occ-2']) });
  await append('lineage:a', 'generation_advanced', { generation: 3, ...delivered([], ['occ-2', 7, null]) });
  await append('lineage:a', 'noted', delivered(['occ-5'], []));
  await append('lineage:b', 'generation_advanced', { generation: 1, ...delivered('occ-9', { x: 'occ-9' }) });
  await append('lineage:b', 'generation_advanced', { generation: 2, ...delivered(['occ-8'], []) });
  await append('occurrence:occ-1', 'generation_advanced', delivered(['occ-6'], []));
}

for (const e of engines) {
  test(`[${e.name}] migration 28 fills the handover index from the takeovers already in the log`, async (t) => {
    const store = await e.open(t);
    await migrate(store.engine, { list: BEFORE_28 });
    await store.engine.transaction(seed);
    const broken = await store.tamper(
      "UPDATE evidence_events SET body = '{not json' WHERE subject = 'lineage:b' AND idx = 2",
    );
    assert.equal(broken, 1);
    const result = await migrate(store.engine, { list: THROUGH_28 });
    assert.deepEqual(
      result.applied.map((m) => m.id),
      [28],
    );
    const rows = await store.engine.read((ex) =>
      ex.all<{ occurrence_id: string; lineage: string; generation: number | string }>(
        'SELECT occurrence_id, lineage, generation FROM aoc_handovers ORDER BY lineage, generation, occurrence_id',
      ),
    );
    assert.deepEqual(
      rows.map((r) => [r.occurrence_id, r.lineage, Number(r.generation)]),
      [
        ['occ-1', 'a', 2],
        ['occ-2', 'a', 2],
        ['occ-2', 'a', 3],
      ],
    );
  });
}
