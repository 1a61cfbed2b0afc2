/**
 * Corrections and conflicts in CIF and the series, on both engines (OBS-08 ¶19, B3.2, B3.6).
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { LOCAL_PRODUCER, handoffRecordId } from '../../src/observations/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { T0 } from '../occurrences/helpers.js';
import { decidedRecord, prepare } from './support.js';

const engines = await enginesUnderTest();

for (const e of engines) {
  test(`[${e.name}] B3.2 OBS-13: a conflict a projection found is recorded; every later CIF counts the record UNKNOWN, whether or not its projection re-derives it`, async (t) => {
    const p = await prepare(t, e);
    await p.svc.takeover({ lineage: 'A' });
    await p.svc.takeover({ lineage: 'B' });
    await p.continuity.project();
    assert.deepEqual((await p.continuity.cif()).conflicting, []);
    await p.store.tamper(
      "UPDATE evidence_events SET actor = 'someone-else' WHERE subject = ? AND type = 'generation_advanced'",
      ['lineage:A'],
    );
    const aId = handoffRecordId('test-domain', 'A', 1);
    assert.deepEqual((await p.continuity.project()).conflicts, [aId]);
    // An incremental projection skips A (fully recorded): it reports nothing, CIF still counts it.
    for (let i = 0; i < 2; i++) {
      assert.deepEqual((await p.continuity.project('t', undefined, { incremental: true })).conflicts, []);
      const c = await p.continuity.cif();
      assert.deepEqual(c.conflicting, [aId], `read ${String(i)}`);
      assert.equal(c.per_dimension['lineage']?.match, 1, 'only B’s MATCH counts');
      assert.equal(c.per_dimension['lineage']?.unknown, 1);
    }
    const report = await p.continuity.report();
    assert.equal(report.labels.records_source, 'conflicts_with_evidence_log');
    assert.deepEqual(report.records.conflicting, [aId]);
    for (const sql of ["UPDATE cop_conflicts SET actor = 'x'", 'DELETE FROM cop_conflicts']) {
      await assert.rejects(
        async () => p.store.tamper(sql),
        (err: Error) => /append-only/.test(err.message),
        sql,
      );
    }
  });

  test(`[${e.name}] B3.6 OBS-08 ¶19: a correction outside the window replaces its in-window predecessor in the series as in CIF, so the last point is the report's CIF`, async (t) => {
    const p = await prepare(t, e);
    await p.svc.takeover({ lineage: 'L' });
    await p.continuity.project();
    const original = decidedRecord({
      producer: LOCAL_PRODUCER,
      observed_at: new Date(T0 + 2_000).toISOString(),
      invariants: [
        { dimension: 'authority', status: 'MISMATCH', reference: 'urn:baton:evidence:x#1', reason: 'x' },
        { dimension: 'memory', status: 'UNKNOWN', reference: null, reason: 'not observed' },
      ],
    });
    await p.continuity.submit(original, 'operator');
    await p.continuity.submit(
      decidedRecord({
        producer: LOCAL_PRODUCER,
        record_id: `${original.record_id}:fix`,
        observed_at: new Date(T0 + 3_600_000).toISOString(),
        supersedes: original.record_id,
        analysis_revision: 'r2',
      }),
      'operator',
    );
    const scope = { to: T0 + 10_000 };
    const c = await p.continuity.cif(scope);
    const series = await p.continuity.series(scope);
    assert.equal(c.per_dimension['authority']?.mismatch, 0, 'CIF: the predecessor is replaced');
    assert.deepEqual(
      series.map((s) => s.label),
      ['urn:baton:test-domain:lineage:L generation 1'],
      'the superseded record is no point of the series',
    );
    assert.ok(c.value !== null);
    assert.equal(series.at(-1)?.cif, c.value.decimal);
  });
}
