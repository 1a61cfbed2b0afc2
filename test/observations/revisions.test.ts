/**
 * Baton's own records across analysis revisions, durable conflicts and corrections in the series,
 * on both engines (OBS-08 ¶19, B3.2, OBS-13 ¶26, B3.6).
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { digestBytes } from '../../src/core/digest.js';
import { canonicalize } from '../../src/core/jcs.js';
import {
  AUTHORITY_UNDECIDED,
  HANDOFF_ANALYSIS_REVISION,
  LOCAL_PRODUCER,
  handoffRecordId,
  projectHandoff,
  revisedRecordId,
  signRecord,
  type Invariant,
  type ObservationRecord,
} from '../../src/observations/index.js';
import { handoffFacts } from '../../src/store/observations-facts.js';
import { insertRecord } from '../../src/store/observations-records.js';
import { enginesUnderTest } from '../store/engines.js';
import { T0 } from '../occurrences/helpers.js';
import { decidedRecord, prepare, type Prepared } from './support.js';

const engines = await enginesUnderTest();
const PRODUCER = 'urn:baton:test-domain';
const REVISION_1 = 'urn:baton:projector:handoff:1';

/** The handoff record the current projector derives for `lineage`'s generation 1, unsigned. */
async function derived(p: Prepared, lineage: string): Promise<ObservationRecord> {
  const scan = await p.store.engine.read((ex) => handoffFacts(ex, 'test-domain', lineage));
  const facts = scan.facts.find((f) => f.takeover.generation === 1);
  assert.ok(facts !== undefined, lineage);
  return projectHandoff(facts);
}

/** Store a record as an earlier projector would have: signed with the domain key, inserted as is. */
async function storeAsProjector(p: Prepared, record: ObservationRecord): Promise<void> {
  const signed = await signRecord(record, p.key.privateKey);
  await p.store.engine.transaction((tx) => insertRecord(tx, signed, T0, 'system:observations'));
}

const withAuthority = (r: ObservationRecord, a: Partial<Invariant>): ObservationRecord => ({
  ...r,
  invariants: r.invariants.map((i) => (i.dimension === 'authority' ? { ...i, ...a } : i)),
});

for (const e of engines) {
  test(`[${e.name}] OBS-08 ¶19: a record stored under handoff analysis revision 1 that the current revision derives otherwise is superseded by a correction, not a conflict; one that agrees stands; a difference under the current revision is still a conflict`, async (t) => {
    const p = await prepare(t, e);
    // L: an authority:* event shares the takeover's instant and actor. Revision 1 guessed MISMATCH;
    // revision 2 says UNKNOWN (transaction_unidentified).
    await p.svc.createAuthority({ id: 'refunds', unit: 'EUR-cents', total: 10 }, 'operator');
    await p.svc.takeover({ lineage: 'L' }, 'operator');
    p.clock.advance(1);
    await p.svc.takeover({ lineage: 'N' }, 'operator');
    p.clock.advance(1);
    await p.svc.takeover({ lineage: 'M' }, 'operator');
    const l = await derived(p, 'L');
    assert.equal(l.invariants.find((i) => i.dimension === 'authority')?.status, 'UNKNOWN');
    assert.equal(l.analysis_revision, HANDOFF_ANALYSIS_REVISION);
    assert.notEqual(HANDOFF_ANALYSIS_REVISION, REVISION_1, 'the revision moved with the rules');
    const lOld = withAuthority(
      { ...l, analysis_revision: REVISION_1 },
      { status: 'MISMATCH', reason: 'an authority:* event was written by the takeover transaction' },
    );
    await storeAsProjector(p, lOld);
    // N: revision 1 said what revision 2 says; only the label differs.
    await storeAsProjector(p, { ...(await derived(p, 'N')), analysis_revision: REVISION_1 });
    // M: other bytes under the current revision — the evidence log contradicts the stored record.
    const m = await derived(p, 'M');
    await storeAsProjector(p, withAuthority(m, { status: 'MISMATCH', reason: 'altered' }));

    const first = await p.continuity.project();
    const lId = handoffRecordId('test-domain', 'L', 1);
    const mId = handoffRecordId('test-domain', 'M', 1);
    const lFix = revisedRecordId(lId, HANDOFF_ANALYSIS_REVISION);
    assert.deepEqual(
      [first.created, first.corrected, first.existing, first.conflicts],
      [0, 1, 1, [mId]],
      'L corrected, N stands, M a conflict',
    );
    const chain = await p.continuity.get(PRODUCER, lId);
    assert.ok(chain !== undefined);
    assert.equal(chain.record.record.analysis_revision, REVISION_1, 'the predecessor is unchanged');
    assert.deepEqual(
      chain.corrections.map((c) => [c.record_id, c.record.supersedes, c.record.analysis_revision, c.signed]),
      [[lFix, lId, HANDOFF_ANALYSIS_REVISION, true]],
    );
    const fixed = chain.corrections[0]?.record.invariants.find((i) => i.dimension === 'authority');
    assert.deepEqual([fixed?.status, fixed?.reason], ['UNKNOWN', AUTHORITY_UNDECIDED]);
    assert.deepEqual(
      (await p.continuity.get(PRODUCER, mId))?.corrections,
      [],
      'no correction for a same-revision difference',
    );
    assert.equal((await p.continuity.list()).length, 4, 'three originals and one correction');

    // CIF counts the correction in place of its predecessor, and only M as conflicting.
    const c = await p.continuity.cif();
    assert.deepEqual(c.conflicting, [mId]);
    assert.deepEqual(
      [c.per_dimension['authority']?.match, c.per_dimension['authority']?.mismatch],
      [1, 0],
      'N MATCH; L UNKNOWN (the correction), not its stored MISMATCH; M UNKNOWN (conflict)',
    );

    // Idempotent: the correction is found, not appended again; M is still a conflict.
    const second = await p.continuity.project();
    assert.deepEqual([second.created, second.corrected, second.existing, second.conflicts], [0, 0, 2, [mId]]);
    const incremental = await p.continuity.project('t', undefined, { incremental: true });
    assert.deepEqual(
      [incremental.created, incremental.corrected, incremental.existing],
      [0, 0, 3],
      'a correction does not count as another generation',
    );
    assert.equal(
      canonicalize((await p.continuity.get(PRODUCER, lId))?.record.record),
      canonicalize(await signRecord(lOld, p.key.privateKey)),
    );
  });

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
    // A re-dated correction is refused now (`correction_unbound`, draft ¶39); a store written
    // before that may hold one, so it is stored here as such a Baton stored it.
    const fix = decidedRecord({
      producer: LOCAL_PRODUCER,
      record_id: `${original.record_id}:fix`,
      observed_at: new Date(T0 + 3_600_000).toISOString(),
      supersedes: original.record_id,
      analysis_revision: 'r2',
    });
    const body = canonicalize(fix);
    await p.store.tamper(
      `INSERT INTO cop_records (producer, record_id, digest, body, event_type, scope_id, observed_at, supersedes, analysis_revision, envelope, created_at, successor_of)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)`,
      [
        LOCAL_PRODUCER,
        fix.record_id,
        digestBytes(body),
        body,
        fix.event_type,
        fix.scope_id,
        T0 + 3_600_000,
        original.record_id,
        'r2',
        T0,
        original.record_id,
      ],
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
