/** HAR-25, A2.8, A3.10: the stop matrix is strict JSON and every cell meets the draft's minimum. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatonError } from '../../src/core/errors.js';
import { ALLOWED, DEFAULT_MATRIX, behaviourFor, parseMatrix } from '../../src/missions/matrix.js';
import { ACTION_CLASSES, MATRIX_ROWS } from '../../src/missions/model.js';

const text = (m: unknown): string => JSON.stringify(m);
const base = (): Record<string, unknown> =>
  JSON.parse(text(DEFAULT_MATRIX.matrix)) as Record<string, unknown>;

function refused(input: string, detail?: Record<string, unknown>): void {
  assert.throws(
    () => parseMatrix(input),
    (e: unknown) => {
      assert.ok(e instanceof BatonError);
      assert.equal(e.code, 'stop_matrix_invalid');
      for (const [k, v] of Object.entries(detail ?? {})) assert.equal(e.details[k], v);
      return true;
    },
  );
}

test('HAR-25 the default matrix validates, meets every minimum and follows the A2.8 default', () => {
  const p = parseMatrix(text(DEFAULT_MATRIX.matrix));
  assert.equal(p.ref, 'baton-default@1');
  assert.equal(p.digest, DEFAULT_MATRIX.digest);
  for (const row of MATRIX_ROWS)
    for (const c of ACTION_CLASSES) assert.ok(ALLOWED[row].includes(p.matrix.rows[row][c]), `${row} ${c}`);
  assert.equal(behaviourFor(p.matrix, 'suspended', 'consequential_read'), 'pause');
  assert.equal(behaviourFor(p.matrix, 'stale', 'consequential_write'), 'pause');
  assert.equal(behaviourFor(p.matrix, 'cascaded', 'consequential_write'), 'terminate');
  assert.equal(behaviourFor(p.matrix, 'revoked', 'consequential_write'), 'suppress');
  assert.equal(behaviourFor(p.matrix, 'revoked', 'irreversible', true), 'handoff');
  assert.equal(behaviourFor(p.matrix, 'revoked', 'consequential_write', true), 'suppress');
});

test('HAR-25 A7#23 revoked → pause and any non-active → continue are stop_matrix_invalid', () => {
  const m = base();
  (m['rows'] as Record<string, Record<string, string>>)['revoked']!['irreversible'] = 'pause';
  refused(text(m), { row: 'revoked', actionClass: 'irreversible', value: 'pause' });
  for (const row of MATRIX_ROWS) {
    const n = base();
    (n['rows'] as Record<string, Record<string, string>>)[row]!['consequential_read'] = 'continue';
    refused(text(n), { row, value: 'continue' });
  }
  const s = base();
  (s['rows'] as Record<string, Record<string, string>>)['superseded']!['consequential_read'] = 'terminate';
  refused(text(s), { row: 'superseded' });
});

test('A3.10 missing rows or classes, unknown members, duplicate members and non-JSON are refused', () => {
  const missingRow = base();
  delete (missingRow['rows'] as Record<string, unknown>)['other'];
  refused(text(missingRow), { member: 'other' });
  const missingClass = base();
  delete (missingClass['rows'] as Record<string, Record<string, string>>)['stale']!['irreversible'];
  refused(text(missingClass), { member: 'irreversible' });
  const extra = base();
  extra['note'] = 'x';
  refused(text(extra), { member: 'note' });
  refused(text(base()).replace('"id":"baton-default"', '"id":"a","id":"b"'));
  refused('{not json');
  refused(text({ ...base(), version: '' }));
  refused(text({ ...base(), in_flight_high_consequence: 'continue' }));
});

test('A3.10 the digest pins the exact document: any cell change changes it', () => {
  const m = base();
  (m['rows'] as Record<string, Record<string, string>>)['revoked']!['irreversible'] = 'terminate';
  const changed = parseMatrix(text(m));
  assert.notEqual(changed.digest, DEFAULT_MATRIX.digest);
  assert.match(changed.digest, /^sha-256:[A-Za-z0-9_-]{43}$/);
});
