/**
 * OBS-13 ¶26, decision C-B6: a MATCH or MISMATCH names its reference evidence and an UNKNOWN or
 * NOT_APPLICABLE its reason. A whitespace-only value names nothing, so it is refused with the
 * same rule as a null one — by the reader (`baton observe validate`) and by the store the API
 * calls, which then stores nothing (so CIF never counts such a MATCH).
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { isBatonError } from '../../src/core/errors.js';
import { LOCAL_PRODUCER, readRecordValue } from '../../src/observations/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { decidedRecord, prepare } from './support.js';

const BLANKS = [' ', '   ', '\t', '\n \r\n', '\u00a0', '\u3000'];

const isRefusal = (rule: string, path: string) => (err: unknown) =>
  isBatonError(err, 'observation_record_invalid') &&
  err.status === 400 &&
  err.details['rule'] === rule &&
  err.details['path'] === path;

const withInvariant = (status: string, reference: string | null, reason: string | null) =>
  decidedRecord({ invariants: [{ dimension: 'state', status, reference, reason }] });

test('OBS-13: a whitespace-only reference does not decide MATCH or MISMATCH (reference_required)', () => {
  for (const status of ['MATCH', 'MISMATCH']) {
    for (const blank of BLANKS) {
      assert.throws(
        () => readRecordValue(withInvariant(status, blank, null)),
        isRefusal('reference_required', '$.invariants[0].reference'),
        `${status} ${JSON.stringify(blank)}`,
      );
    }
    // A reference with text around spaces still names something.
    assert.ok(readRecordValue(withInvariant(status, ' urn:baton:evidence:x#1 ', null)));
  }
});

test('OBS-13: a whitespace-only reason does not explain UNKNOWN or NOT_APPLICABLE (reason_required)', () => {
  for (const status of ['UNKNOWN', 'NOT_APPLICABLE']) {
    for (const blank of BLANKS) {
      assert.throws(
        () => readRecordValue(withInvariant(status, null, blank)),
        isRefusal('reason_required', '$.invariants[0].reason'),
        `${status} ${JSON.stringify(blank)}`,
      );
    }
    assert.ok(readRecordValue(withInvariant(status, null, 'not observed')));
  }
});

const engines = await enginesUnderTest();
for (const e of engines) {
  test(`[${e.name}] OBS-13: the store refuses a MATCH with a whitespace-only reference and stores nothing`, async (t) => {
    const p = await prepare(t, e);
    const record = decidedRecord({
      producer: LOCAL_PRODUCER,
      invariants: [{ dimension: 'authority', status: 'MATCH', reference: '  ', reason: null }],
    });
    await assert.rejects(
      p.continuity.submit(record, 'operator'),
      isRefusal('reference_required', '$.invariants[0].reference'),
    );
    assert.deepEqual(await p.continuity.list(), []);
  });
}
