/**
 * Metrics, coding, barrier, study reporting (B7 9, 11, 14, 16, 19, 20; B3.5–B3.8; OBS-13..17, 24, 26).
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import {
  HANDOFF_PROFILE,
  cif,
  currentRecords,
  code,
  codeBarrier,
  eMock,
  ficObs,
  parseWeights,
  readMeasurementProfile,
  runLabels,
  seededSample,
  summarizeCases,
  type AuditedAction,
  type ObservationRecord,
  type Status,
} from '../../src/observations/index.js';
import { isBatonError } from '../../src/core/errors.js';
import { decidedRecord } from './support.js';

const actions = (v: number, n: number): AuditedAction[] =>
  Array.from({ length: n }, (_, i) => ({ occurrence: `o${i}`, failed: i < v ? [] : ['C1'] }));

test('B7-9 OBS-16: n = 0 is undefined with a reason, never 0 or 1', () => {
  const r = ficObs({ universe: 0, audited: [], sample: null, everyBypassAbsent: true });
  assert.deepEqual([r.value, r.reason, r.global_bound], [null, 'undefined_n_zero', null]);
});

test('B7-9 OBS-17: 36/40 is 0.9; N = 50 with every bypass absent bounds completeness to [0.72, 0.92]', () => {
  const r = ficObs({
    universe: 50,
    audited: actions(36, 40),
    sample: { size: 40, seed: 's' },
    everyBypassAbsent: true,
  });
  assert.equal(r.value?.decimal, '0.900000');
  assert.equal(r.q?.decimal, '0.800000');
  assert.deepEqual([r.global_bound?.lower.decimal, r.global_bound?.upper.decimal], ['0.720000', '0.920000']);
  const all = ficObs({ universe: 40, audited: actions(36, 40), sample: null, everyBypassAbsent: true });
  assert.deepEqual(
    [all.global_bound?.lower.decimal, all.global_bound?.upper.decimal],
    ['0.900000', '0.900000'],
  );
  const unknown = ficObs({ universe: 50, audited: actions(36, 40), sample: null, everyBypassAbsent: false });
  assert.deepEqual(
    [unknown.global_bound, unknown.global_reason, unknown.universe],
    [null, 'universe_unknown', null],
  );
});

test('B3.5: a seeded sample is reproducible and is a subset of the universe', () => {
  const ids = Array.from({ length: 20 }, (_, i) => `occ-${i}`);
  const a = seededSample(ids, 5, 'seed-1');
  assert.deepEqual(a, seededSample([...ids].reverse(), 5, 'seed-1'));
  assert.notDeepEqual(a, seededSample(ids, 5, 'seed-2'));
  assert.equal(new Set(a).size, 5);
  assert.ok(a.every((x) => ids.includes(x)));
});

const rec = (statuses: Record<string, Status>): ObservationRecord =>
  decidedRecord({
    invariants: Object.entries(statuses).map(([dimension, status]) => ({
      dimension,
      status,
      reference: status === 'MATCH' || status === 'MISMATCH' ? 'urn:baton:r' : null,
      reason: status === 'MATCH' || status === 'MISMATCH' ? null : 'why',
    })),
  });

test('B3.6 OBS-14: the worked CIF is 0.0375; an unresolved dimension makes it incomplete, never 0', () => {
  const w = parseWeights({ state: '0.25', policy: '0.25', authority: '0.25', lineage: '0.25' });
  const req = ['state', 'policy', 'authority', 'lineage'];
  const records: ObservationRecord[] = [];
  // policy: 1 mismatch in 20 (0.05); lineage: 1 in 10 (0.1); state and authority 0.
  for (let i = 0; i < 20; i++) {
    records.push(
      rec({
        state: 'MATCH',
        policy: i === 0 ? 'MISMATCH' : 'MATCH',
        authority: 'MATCH',
        lineage: i < 10 ? (i === 0 ? 'MISMATCH' : 'MATCH') : 'NOT_APPLICABLE',
      }),
    );
  }
  const r = cif(records, w, req, 'v1');
  assert.equal(r.complete, true);
  assert.equal(r.value?.decimal, '0.037500');
  assert.equal(r.authorizes, false);
  const unresolved = cif(
    [...records, rec({ state: 'MATCH', policy: 'MATCH', authority: 'MATCH', lineage: 'UNKNOWN' })],
    w,
    req,
    'v1',
  );
  assert.deepEqual(
    [unresolved.complete, unresolved.value, unresolved.unresolved],
    [false, null, ['lineage']],
  );
  const missing = cif([rec({ state: 'MATCH', policy: 'MATCH', authority: 'MATCH' })], w, req, 'v1');
  assert.deepEqual(
    [missing.complete, missing.value, missing.per_dimension['lineage']?.d],
    [false, null, null],
  );
});

test('B7-11 OBS-14: weights summing to 0.999999 or holding -0.1 are refused; exact decimals only', () => {
  assert.throws(() => parseWeights({ a: '0.5', b: '0.499999' }), /sum to exactly 1/);
  assert.throws(() => parseWeights({ a: '1.1', b: '-0.1' }), /\$\.weights\.b/);
  assert.throws(() => parseWeights({ a: 0.5, b: '0.5' }), /\$\.weights\.a/);
  assert.throws(() => parseWeights({ a: '0.1234567', b: '0.8765433' }), /at most 6/);
  assert.deepEqual(parseWeights({ a: '0.1', b: '0.2', c: '0.7' }).micro, {
    a: 100_000,
    b: 200_000,
    c: 700_000,
  });
});

test('OBS-01: measurement profiles are closed documents pinned by digest', () => {
  const p = readMeasurementProfile({ ...HANDOFF_PROFILE });
  assert.match(p.digest, /^sha-256:[\w-]{43}$/);
  assert.throws(() => readMeasurementProfile({ ...HANDOFF_PROFILE, extra: 1 }), /\$\.extra/);
  assert.throws(
    () => readMeasurementProfile({ ...HANDOFF_PROFILE, required: ['vibes'] }),
    /\$\.required\[0\]/,
  );
  assert.throws(
    () => readMeasurementProfile({ ...HANDOFF_PROFILE, weights: { state: '1', nope: '0' } }),
    /\$\.weights\.nope/,
  );
});

test('¶27 B3.6 B7-11: a required dimension must be weighted; an UNKNOWN on a required dimension always leaves CIF incomplete', () => {
  assert.throws(
    () => readMeasurementProfile({ ...HANDOFF_PROFILE, id: 'urn:example:p', weights: { lineage: '1' } }),
    (err: unknown) => isBatonError(err, 'input_invalid') && err.details['path'] === '$.required[0]',
  );
  // A weight of 0 keeps the dimension in the completeness test.
  const zero = readMeasurementProfile({
    ...HANDOFF_PROFILE,
    id: 'urn:example:p',
    weights: { lineage: '1', state: '0', policy: '0', authority: '0' },
  });
  const records = [rec({ lineage: 'MATCH', state: 'UNKNOWN', policy: 'MATCH', authority: 'MATCH' })];
  const r = cif(records, zero.weights, zero.profile.required, 'v1');
  assert.deepEqual([r.complete, r.value, r.unresolved], [false, null, ['state']]);
  // cif() itself never relies on its caller: an unweighted required dimension is still tested.
  const direct = cif(records, parseWeights({ lineage: '1' }), ['lineage', 'state'], 'v1');
  assert.deepEqual([direct.complete, direct.value, direct.unresolved], [false, null, ['state']]);
});

test('B7-14 B3.4: barrier coding — 5 s after is ambiguous, 120 s after MISMATCH, 120 s before MATCH', () => {
  const committedAt = Date.parse('2026-10-12T04:05:00Z');
  const at = (offset: number) =>
    codeBarrier({
      enteredAt: committedAt + offset,
      committedAt,
      recordedUncertaintyMs: 0,
      reference: 'urn:baton:r',
    });
  assert.deepEqual([at(5_000).status, at(5_000).reason], ['UNKNOWN', 'timing_ambiguous']);
  assert.equal(at(120_000).status, 'MISMATCH');
  assert.equal(at(-120_000).status, 'MATCH');
  // Recorded uncertainty widens the ambiguous band.
  assert.equal(
    codeBarrier({
      enteredAt: committedAt + 120_000,
      committedAt,
      recordedUncertaintyMs: 100_000,
      reference: 'r',
    }).status,
    'UNKNOWN',
  );
});

test('B7-19 B3.2 OBS-02/13: conflicting evidence is UNKNOWN naming both; authorized updates MATCH; no reference UNKNOWN', () => {
  const rule = { authorizedUpdates: ['v2'] };
  const ref = { locator: 'urn:baton:ref', expected: 'v1' };
  const conflict = code('policy', { value: 'v1', others: ['v3'] }, ref, rule);
  assert.equal(conflict.status, 'UNKNOWN');
  assert.match(conflict.reason ?? '', /^conflicting_evidence: v1 vs v3$/);
  assert.deepEqual(
    [code('policy', { value: 'v2' }, ref, rule).status, code('policy', { value: 'v2' }, ref, rule).reason],
    ['MATCH', 'authorized_update'],
  );
  assert.equal(code('policy', { value: 'v9' }, ref, rule).status, 'MISMATCH');
  assert.equal(code('policy', { value: 'v1' }, null, rule).status, 'UNKNOWN');
  assert.equal(code('policy', { value: 'v1', stale: true }, ref, rule).reason, 'stale snapshot');
  assert.equal(code('policy', { value: 'v1', calibrated: false }, ref, rule).status, 'UNKNOWN');
});

test('B7-20 B3.8 OBS-26: 32 planned, 3 malformed, 2 failed-transport ⇒ 32 rows, none HALT, bounds stated', () => {
  const cases = Array.from({ length: 32 }, (_, i) => ({
    id: `case-${i}`,
    status: i < 3 ? ('malformed' as const) : i < 5 ? ('failed_transport' as const) : ('completed' as const),
    // A malformed answer that "looks like" HALT is never coded HALT.
    outcome: i < 5 ? 'HALT' : i % 3 === 0 ? 'HALT' : 'CONTINUE',
  }));
  const s = summarizeCases(cases);
  assert.equal(s.rows.length, 32);
  assert.ok(s.rows.filter((r) => r.status !== 'completed').every((r) => r.coded === null));
  assert.deepEqual([s.byStatus.malformed, s.byStatus.failed_transport, s.byStatus.completed], [3, 2, 27]);
  const halts = s.rows.filter((r) => r.coded === 'HALT').length;
  assert.ok(halts > 0);
  assert.equal(Number(s.completeCaseRate?.numerator) / Number(s.completeCaseRate?.denominator), halts / 27);
  assert.equal(
    Number(s.worstCaseBounds?.upper.numerator) / Number(s.worstCaseBounds?.upper.denominator),
    (halts + 5) / 32,
  );
  const none = summarizeCases([{ id: 'a', status: 'interrupted', outcome: null }]);
  assert.equal(none.completeCaseRate, null, 'zero denominator stays null');
  assert.throws(() =>
    summarizeCases([
      { id: 'a', status: 'completed', outcome: null },
      { id: 'a', status: 'completed', outcome: null },
    ]),
  );
});

test('B3.7 OBS-24: E_mock truth table, always SIMULATED', () => {
  const rows: [0 | 1, 0 | 1, 0 | 1, 0 | 1][] = [
    [0, 0, 0, 0],
    [0, 1, 1, 0],
    [1, 0, 0, 1],
    [1, 0, 1, 1],
    [1, 1, 0, 1],
    [1, 1, 1, 0],
  ];
  for (const [p, g, r, expected] of rows) {
    assert.deepEqual(eMock(p, g, r), { value: expected, classification: 'SIMULATED' });
  }
});

test('B7-16 OBS-06: a synthetic provider is SIMULATED; observed evidence for it is refused; reproduction NOT_RUN', () => {
  assert.deepEqual(runLabels({ syntheticProvider: true }), {
    provider: 'SIMULATED',
    independent_reproduction: 'NOT_RUN',
    runner: 'same-team',
  });
  assert.throws(
    () => runLabels({ syntheticProvider: true, claimed: 'OBSERVED_WITH_STATED_EVIDENCE' }),
    /cannot be labelled/,
  );
});

test('OBS-08 ¶19 B3.2: a fork stored before migration 032 (two corrections of one record) counts once, UNKNOWN conflicting_evidence, never once per correction', () => {
  const w = parseWeights({ state: '0.5', policy: '0.5' });
  const at = (id: string, statuses: Record<string, Status>, supersedes?: string): ObservationRecord => ({
    ...rec(statuses),
    record_id: id,
    ...(supersedes !== undefined && { event_type: 'correction', supersedes, analysis_revision: 'r1' }),
  });
  const a = at('A', { state: 'MISMATCH', policy: 'MATCH' });
  const b = at('B', { state: 'MATCH', policy: 'MATCH' }, 'A');
  const c = at('C', { state: 'MATCH', policy: 'MATCH' }, 'A');
  const d = at('D', { state: 'MISMATCH' }, 'A');
  const other = at('X', { state: 'MATCH', policy: 'MATCH' });
  const tally = (records: ObservationRecord[]) => {
    const r = cif(records, w, [], 'v1');
    return ['state', 'policy'].map((dim) => {
      const t = r.per_dimension[dim];
      return [t?.match, t?.mismatch, t?.unknown];
    });
  };
  // One correction replaces its predecessor.
  assert.deepEqual(tally([a, b, other]), [
    [2, 0, 0],
    [2, 0, 0],
  ]);
  // Three corrections of A: one record, UNKNOWN on every dimension any of them codes (before: match 4).
  assert.deepEqual(tally([a, b, c, d, other]), [
    [1, 0, 1],
    [1, 0, 1],
  ]);
  const current = currentRecords([a, b, c, d, other]);
  assert.deepEqual(
    current.map((r) => r.record_id),
    ['B', 'X'],
  );
  assert.match(current[0]?.invariants[0]?.reason ?? '', /^conflicting_evidence: B, C, D each correct A$/);
  // Resolving it again (the service resolves, scopes, then CIF resolves) changes nothing.
  assert.deepEqual(currentRecords(current), current);
  // A fork further down a chain: B corrected by E, C still beside it — still one, UNKNOWN.
  const e = at('E', { state: 'MATCH', policy: 'MATCH' }, 'B');
  assert.deepEqual(tally([a, b, c, e, other]), [
    [1, 0, 1],
    [1, 0, 1],
  ]);
  // A plain chain A ← B ← E is no fork.
  assert.deepEqual(tally([a, b, e]), [
    [1, 0, 0],
    [1, 0, 0],
  ]);
});
