/**
 * What CIF and the report pool (¶17, ¶19, ¶26; OBS-06, OBS-08, OBS-13; B3.2, B3.6): a correction
 * replaces its predecessor, a record contradicting itself on a dimension is UNKNOWN, a decision
 * resting on NOT_RUN or SIMULATED evidence alone is UNKNOWN, and the report's label is the weakest
 * class of what it counts — pure, then through the store on both engines.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import {
  HANDOFF_PROFILE,
  LOCAL_PRODUCER,
  cif,
  currentRecords,
  handoffRecordId,
  parseWeights,
  recordClass,
  renderMarkdown,
  type ObservationRecord,
} from '../../src/observations/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { decidedRecord, prepare } from './support.js';

const W = parseWeights({ authority: '1' });
const REQ = ['authority'];
const authority = (status: string, reason: string | null = null) => ({
  dimension: 'authority',
  status,
  reference: status === 'MATCH' || status === 'MISMATCH' ? 'urn:baton:r' : null,
  reason: status === 'MATCH' || status === 'MISMATCH' ? reason : 'why',
});
const original = (): ObservationRecord =>
  decidedRecord({ producer: LOCAL_PRODUCER, record_id: 'a', invariants: [authority('MISMATCH')] });
const correction = (): ObservationRecord =>
  decidedRecord({
    producer: LOCAL_PRODUCER,
    record_id: 'a-fix',
    event_type: 'correction',
    supersedes: 'a',
    analysis_revision: 'r2',
    invariants: [authority('MATCH')],
  });

test('OBS-08 ¶19: a correction replaces the record it supersedes in CIF; it is not averaged with it', () => {
  const r = cif([original(), correction()], W, REQ, 'v1');
  assert.deepEqual(
    [r.complete, r.value?.decimal, r.per_dimension['authority']?.match],
    [true, '0.000000', 1],
  );
  // Another producer's record with the same id is not superseded by this correction.
  const other = decidedRecord({
    producer: 'urn:example:q',
    record_id: 'a',
    invariants: [authority('MISMATCH')],
  });
  assert.equal(cif([original(), correction(), other], W, REQ, 'v1').value?.decimal, '0.500000');
});

/** A predecessor that omits `producer` and its correction naming the local producer: one namespace (OBS-08). */
const unnamedOriginal = (): ObservationRecord => {
  const { producer: _omitted, ...rest } = original();
  return rest;
};
const localCorrection = (): ObservationRecord => ({ ...correction(), producer: LOCAL_PRODUCER });

test('OBS-08 ¶19: a correction naming urn:baton:local replaces a predecessor that omitted its producer (the store’s namespace)', () => {
  const r = cif([unnamedOriginal(), localCorrection()], W, REQ, 'v1');
  assert.deepEqual(
    [r.per_dimension['authority']?.match, r.per_dimension['authority']?.mismatch, r.value?.decimal],
    [1, 0, '0.000000'],
  );
  assert.deepEqual(
    currentRecords([unnamedOriginal(), localCorrection()]).map((x) => x.record_id),
    ['a-fix'],
  );
});

test('¶26 B3.2 OBS-13: one record coding a dimension MATCH and MISMATCH is UNKNOWN (conflicting), never averaged', () => {
  const torn = decidedRecord({ invariants: [authority('MATCH'), authority('MISMATCH')] });
  const r = cif([torn, decidedRecord({ invariants: [authority('MATCH')] })], W, REQ, 'v1');
  assert.deepEqual([r.complete, r.value, r.unresolved], [false, null, ['authority']]);
  assert.deepEqual([r.per_dimension['authority']?.match, r.per_dimension['authority']?.unknown], [1, 1]);
  const twice = decidedRecord({ invariants: [authority('MISMATCH'), authority('MISMATCH')] });
  assert.equal(
    cif([twice, decidedRecord({ invariants: [authority('MATCH')] })], W, REQ, 'v1').value?.decimal,
    '0.500000',
    'counted once',
  );
});

test('¶26 OBS-13: a MATCH whose only evidence is NOT_RUN or SIMULATED, or in a SIMULATED record, decides nothing', () => {
  const withEvidence = (verification: string, extra: Record<string, unknown> = {}) =>
    decidedRecord({
      invariants: [authority('MATCH')],
      evidence: [{ locator: 'urn:baton:x', method: 'direct_capture', verification, byte_digest: null }],
      ...extra,
    });
  for (const rec of [
    withEvidence('NOT_RUN'),
    withEvidence('SIMULATED'),
    withEvidence('OBSERVED_WITH_STATED_EVIDENCE', { classification: 'SIMULATED' }),
  ]) {
    const r = cif([rec], W, REQ, 'v1');
    assert.deepEqual([r.complete, r.per_dimension['authority']?.unknown], [false, 1]);
  }
  assert.equal(cif([withEvidence('MANUAL_UNATTESTED')], W, REQ, 'v1').complete, true);
});

test('OBS-06 ¶17, ¶26: a record holding any SIMULATED item is SIMULATED in CIF as in the report: its MATCH decides nothing', () => {
  const item = (verification: string, locator: string) => ({
    locator,
    method: 'direct_capture',
    verification,
    byte_digest: null,
  });
  for (const weak of ['SIMULATED', 'NOT_RUN']) {
    const rec = decidedRecord({
      invariants: [authority('MATCH')],
      evidence: [item('OBSERVED_WITH_STATED_EVIDENCE', 'urn:baton:seen'), item(weak, 'urn:baton:sim')],
    });
    assert.equal(recordClass(rec), weak, 'the report labels it by its weakest item');
    const r = cif([rec], W, REQ, 'v1');
    assert.deepEqual(
      [r.complete, r.per_dimension['authority']?.match, r.per_dimension['authority']?.unknown],
      [false, 0, 1],
      weak,
    );
  }
});

/** A profile weighing authority alone, so CIF answers for the records' authority dimension only. */
async function registerAuthorityOnly(p: Awaited<ReturnType<typeof prepare>>): Promise<void> {
  await p.continuity.registerProfile({
    ...HANDOFF_PROFILE,
    id: 'urn:example:authority',
    required: ['authority'],
    weights: { authority: '1' },
  });
}

const engines = await enginesUnderTest();
for (const e of engines) {
  test(`[${e.name}] OBS-08 ¶17 through the store: CIF counts the correction only; the report labels submitted records by their own class`, async (t) => {
    const p = await prepare(t, e);
    await p.svc.takeover({ lineage: 'L' });
    await p.continuity.submit(original(), 'operator');
    await p.continuity.submit(correction(), 'operator');
    await registerAuthorityOnly(p);
    const c = await p.continuity.cif({ profile: 'urn:example:authority' });
    assert.deepEqual(
      [c.complete, c.value?.decimal, c.per_dimension['authority']?.mismatch],
      [true, '0.000000', 0],
    );
    const report = await p.continuity.report();
    assert.equal(report.labels.records, 'MANUAL_UNATTESTED', 'the operator’s transcription, not Baton’s log');
    assert.equal(report.labels.records_source, 'includes_submitted_records');
    assert.deepEqual(
      [report.records.submitted, report.records.by_verification['OBSERVED_WITH_STATED_EVIDENCE']],
      [2, 1],
    );
  });

  test(`[${e.name}] OBS-08 through the store: a correction naming urn:baton:local replaces the unnamed predecessor the store keyed under it`, async (t) => {
    const p = await prepare(t, e);
    await p.continuity.submit(unnamedOriginal(), 'operator');
    const fixed = await p.continuity.submit(localCorrection(), 'operator');
    assert.equal(fixed.stored.producer, LOCAL_PRODUCER, 'the store keyed both under the local producer');
    await registerAuthorityOnly(p);
    const c = await p.continuity.cif({ profile: 'urn:example:authority' });
    assert.deepEqual(
      [c.per_dimension['authority']?.match, c.per_dimension['authority']?.mismatch, c.value?.decimal],
      [1, 0, '0.000000'],
      'the predecessor no longer counts',
    );
  });

  test(`[${e.name}] B3.2 OBS-13: records the evidence log now contradicts count UNKNOWN (conflicting_evidence) in CIF and the series, and the report's labels say so`, async (t) => {
    const p = await prepare(t, e);
    await p.svc.takeover({ lineage: 'L' });
    p.clock.advance(1_000);
    await p.svc.takeover({ lineage: 'L' });
    const clean = await p.continuity.report();
    assert.deepEqual(
      [clean.cif.complete, clean.cif.value?.decimal, clean.labels.records_source, clean.series.at(-1)?.cif],
      [true, '0.000000', 'baton_evidence_log', '0.000000'],
      'before: two all-MATCH handoff records',
    );
    await p.store.tamper(
      "UPDATE evidence_events SET actor = 'someone-else' WHERE subject = 'lineage:L' AND idx = 1",
    );
    const report = await p.continuity.report();
    const ids = [handoffRecordId('test-domain', 'L', 1), handoffRecordId('test-domain', 'L', 2)];
    assert.deepEqual([...report.projection.conflicts].sort(), ids);
    assert.deepEqual(report.records.conflicting, ids);
    assert.equal(report.labels.records_source, 'conflicts_with_evidence_log');
    assert.deepEqual([...report.cif.conflicting].sort(), ids);
    assert.deepEqual([report.cif.complete, report.cif.value], [false, null]);
    for (const dim of ['state', 'policy', 'authority', 'lineage']) {
      const tally = report.cif.per_dimension[dim];
      assert.deepEqual([tally?.match, tally?.mismatch, tally?.unknown], [0, 0, 2], dim);
    }
    assert.deepEqual(
      report.series.map((x) => x.cif),
      [null, null],
      'no point of the series counts the stale MATCH',
    );
    assert.match(renderMarkdown(report), /conflicting_evidence/);
    // The stored records are kept as they were (never overwritten).
    const stored = await p.continuity.get('urn:baton:test-domain', ids[0] ?? '');
    assert.equal(stored?.record.record.invariants.find((i) => i.dimension === 'lineage')?.status, 'MATCH');
  });

  test(`[${e.name}] B3.6: the report's lineage and window scope CIF and the series as they scope FIC_obs`, async (t) => {
    const p = await prepare(t, e);
    await p.svc.takeover({ lineage: 'A' });
    p.clock.advance(60_000);
    const later = p.clock.wallMs();
    await p.svc.takeover({ lineage: 'B' });
    // An operator's record about lineage B: its authority MISMATCH belongs to B and to the later window.
    await p.continuity.submit(
      decidedRecord({
        record_id: 'b-1',
        event_type: 'action',
        scope_id: 'urn:baton:test-domain:lineage:B',
        observed_at: new Date(later).toISOString(),
        invariants: [authority('MISMATCH', 'replenished')],
      }),
      'operator',
    );
    const tally = (r: { cif: { per_dimension: Record<string, { match: number; mismatch: number }> } }) => {
      const a = r.cif.per_dimension['authority'];
      return [a?.match, a?.mismatch];
    };
    const whole = await p.continuity.report();
    assert.deepEqual(tally(whole), [2, 1]);
    assert.equal(whole.series.length, 2);
    const a = await p.continuity.report({ lineage: 'A' });
    assert.deepEqual(tally(a), [1, 0], 'B’s records are out of lineage A’s CIF');
    assert.deepEqual(
      a.series.map((x) => [x.label, x.cif]),
      [['urn:baton:test-domain:lineage:A generation 1', '0.000000']],
    );
    const b = await p.continuity.report({ lineage: 'B' });
    assert.deepEqual(tally(b), [1, 1]);
    const recent = await p.continuity.report({ from: later });
    assert.deepEqual(tally(recent), [1, 1], 'A’s handoff is before the window');
    assert.deepEqual(
      recent.series.map((x) => x.label),
      ['urn:baton:test-domain:lineage:B generation 1'],
    );
    const early = await p.continuity.report({ to: later - 1 });
    assert.deepEqual(tally(early), [1, 0]);
  });

  test(`[${e.name}] OBS-06: a report with no records is NOT_RUN, never observed evidence`, async (t) => {
    const p = await prepare(t, e);
    const report = await p.continuity.report();
    assert.deepEqual(
      [report.records.total, report.labels.records, report.labels.records_source],
      [0, 'NOT_RUN', 'baton_evidence_log'],
    );
    assert.doesNotMatch(renderMarkdown(report), /OBSERVED_WITH_STATED_EVIDENCE/);
  });

  test(`[${e.name}] B3.6: a leap-second record counts in every point of the series as in the report's CIF; only Baton's handoff records are handoffs and points`, async (t) => {
    const p = await prepare(t, e);
    await p.svc.takeover({ lineage: 'L' });
    // RFC 3339 allows second 60; the strict reader accepts it, so every count must read it alike.
    await p.continuity.submit(
      decidedRecord({
        record_id: 'leap',
        event_type: 'action',
        observed_at: '2016-12-31T23:59:60Z',
        invariants: [authority('MISMATCH')],
      }),
      'operator',
    );
    // An operator's record typed `handoff`, at a leap second too: a record others submitted, not a
    // takeover Baton observed.
    await p.continuity.submit(
      decidedRecord({ record_id: 'their-handoff', observed_at: '2016-12-31T23:59:60Z' }),
      'operator',
    );
    const report = await p.continuity.report();
    const a = report.cif.per_dimension['authority'];
    assert.deepEqual([a?.match, a?.mismatch], [2, 1]);
    assert.equal(report.cif.value?.decimal, '0.083333', '0.25 × 1/3');
    assert.deepEqual(
      report.series.map((x) => [x.label, x.cif]),
      [['urn:baton:test-domain:lineage:L generation 1', '0.083333']],
      'one point, the takeover, counting the leap-second records; the last point is the report’s CIF',
    );
    assert.ok(
      report.series.every((x) => !x.at.includes(':60')),
      'no point dated at the leap second',
    );
    assert.deepEqual(
      [report.records.handoff, report.records.by_event_type['handoff'], report.records.submitted],
      [1, 2, 2],
    );
    assert.match(renderMarkdown(report), /\| 3 \| 1 \| 0 \|/);
  });

  test(`[${e.name}] ¶17: a report over Baton's own records only is OBSERVED_WITH_STATED_EVIDENCE from its evidence log`, async (t) => {
    const p = await prepare(t, e);
    await p.svc.takeover({ lineage: 'L' });
    const report = await p.continuity.report();
    assert.deepEqual(
      [report.labels.records, report.labels.records_source, report.records.submitted],
      ['OBSERVED_WITH_STATED_EVIDENCE', 'baton_evidence_log', 0],
    );
  });
}
