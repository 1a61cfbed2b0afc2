/**
 * A record holding U+0000 is refused by the reader, typed (`observation_record_invalid`, rule
 * `type`, its path), before the store is asked — on both engines, never the store's untyped
 * `input_invalid` — and nothing is stored.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { isBatonError } from '../../src/core/index.js';
import { LOCAL_PRODUCER } from '../../src/observations/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { decidedRecord, prepare } from './support.js';

const engines = await enginesUnderTest();
for (const e of engines) {
  test(`[${e.name}] a record with U+0000 in a string is 400 observation_record_invalid rule type, nothing stored`, async (t) => {
    const p = await prepare(t, e);
    const record = decidedRecord({ producer: LOCAL_PRODUCER, scope_id: 'urn:example:a\u0000b' });
    await assert.rejects(
      p.continuity.submit(record, 'operator'),
      (err: unknown) =>
        isBatonError(err, 'observation_record_invalid') &&
        err.status === 400 &&
        err.details['rule'] === 'type' &&
        err.details['path'] === '$.scope_id',
    );
    assert.deepEqual(await p.continuity.list(), []);
  });
}
