/**
 * A correction restates its predecessor, it never rewrites it (OBS-08 ¶19, draft ¶39, ¶107): same
 * scope, observed_at and order, its event type or `correction`, and at least one evidence item the
 * predecessor did not hold (or a re-analysis under another analysis revision). Anything else is 400
 * `observation_record_invalid`, rule `correction_unbound`, and stores nothing — on both engines.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { isBatonError } from '../../src/core/index.js';
import { LOCAL_PRODUCER, type ObservationRecord } from '../../src/observations/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { correctionEvidence, decidedRecord, prepare } from './support.js';

const original = (): ObservationRecord =>
  decidedRecord({
    producer: LOCAL_PRODUCER,
    record_id: 'orig',
    analysis_revision: 'r1',
    invariants: [{ dimension: 'authority', status: 'MISMATCH', reference: 'urn:baton:r', reason: null }],
  });
/** A correction dropping the MISMATCH, with new evidence, then `overrides`. */
const fix = (overrides: Record<string, unknown> = {}): ObservationRecord =>
  decidedRecord({
    producer: LOCAL_PRODUCER,
    record_id: 'orig-fix',
    supersedes: 'orig',
    analysis_revision: 'r1',
    ...overrides,
  });

const unbound = (path: string) => (err: unknown) =>
  isBatonError(err, 'observation_record_invalid') &&
  err.status === 400 &&
  err.details['rule'] === 'correction_unbound' &&
  err.details['path'] === path;

const engines = await enginesUnderTest();
for (const e of engines) {
  test(`[${e.name}] draft ¶39 ¶107: a correction that moves, re-types or re-dates its predecessor, or adds no evidence, is 400 correction_unbound and stores nothing`, async (t) => {
    const p = await prepare(t, e);
    await p.continuity.submit(original(), 'operator');
    const o = original();
    const refused: [Record<string, unknown>, string][] = [
      [{ scope_id: 'urn:example:elsewhere' }, '$.scope_id'],
      [{ event_type: 'model_change' }, '$.event_type'],
      [{ observed_at: '2030-01-01T00:00:00Z' }, '$.observed_at'],
      [{ order: { ...o.order, sequence: '999' } }, '$.order'],
      // The predecessor's evidence again (reordered), under the same analysis revision.
      [{ evidence: [...o.evidence].reverse() }, '$.evidence'],
    ];
    for (const [overrides, path] of refused) {
      await assert.rejects(p.continuity.submit(fix(overrides), 'operator'), unbound(path), path);
    }
    const chain = await p.continuity.get(LOCAL_PRODUCER, 'orig');
    assert.deepEqual(chain?.corrections, [], 'nothing was stored');
    const c = await p.continuity.cif();
    assert.equal(c.per_dimension['authority']?.mismatch, 1, 'the MISMATCH still counts');
  });

  test(`[${e.name}] draft ¶39: a correction with new evidence, or a re-analysis under another revision, is stored and replaces its predecessor`, async (t) => {
    const p = await prepare(t, e);
    await p.continuity.submit(original(), 'operator');
    // Typed `correction` (the binding's event type) with a new evidence item.
    assert.equal(
      (await p.continuity.submit(fix({ event_type: 'correction' }), 'operator')).status,
      'created',
    );
    // A re-analysis of the same evidence: no new item, another analysis revision.
    const again = fix({
      record_id: 'orig-fix-2',
      supersedes: 'orig-fix',
      event_type: 'correction',
      analysis_revision: 'r2',
      evidence: [...original().evidence, correctionEvidence('orig-fix')],
    });
    assert.equal((await p.continuity.submit(again, 'operator')).status, 'created');
    const chain = await p.continuity.get(LOCAL_PRODUCER, 'orig');
    assert.deepEqual(
      chain?.corrections.map((c) => c.record_id),
      ['orig-fix', 'orig-fix-2'],
    );
  });
}
