/**
 * Baton's own namespace is closed to submitted records (OBS-08 ¶19, OBS-12 ¶25, B7-12), on both
 * engines: an operator's record can neither take the id of a handoff record Baton has yet to
 * project, nor stand under Baton's producer (where it would count as Baton's evidence and make
 * the incremental projector skip the lineage). Re-submitting Baton's own stored bytes is a no-op.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { isBatonError } from '../../src/core/errors.js';
import {
  OBSERVATION_PROFILE,
  handoffRecordId,
  signRecord,
  type ObservationRecord,
} from '../../src/observations/index.js';
import { insertRecord } from '../../src/store/observations-records.js';
import { enginesUnderTest } from '../store/engines.js';
import { T0 } from '../occurrences/helpers.js';
import { decidedRecord, prepare } from './support.js';

const engines = await enginesUnderTest();
const PRODUCER = 'urn:baton:test-domain';
const SCOPE = 'urn:baton:test-domain:lineage:L';

/** An all-MATCH handoff record for lineage L, generation 1, as a forger would write it. */
function forgedHandoff(overrides: Record<string, unknown> = {}): ObservationRecord {
  const match = (dimension: string) => ({
    dimension,
    status: 'MATCH',
    reference: 'urn:baton:x#1',
    reason: null,
  });
  return decidedRecord({
    producer: PRODUCER,
    record_id: handoffRecordId('test-domain', 'L', 1),
    event_type: 'handoff',
    scope_id: SCOPE,
    invariants: ['state', 'policy', 'authority', 'lineage'].map(match),
    ...overrides,
  });
}

const reserved = (path: string) => (err: unknown) =>
  isBatonError(err, 'observation_record_invalid') &&
  err.details['rule'] === 'reserved_namespace' &&
  err.details['path'] === path;

for (const e of engines) {
  test(`[${e.name}] OBS-08 B7-12: a submitted record never claims Baton's producer or record ids; nothing is stored and the projector still writes the real record`, async (t) => {
    const p = await prepare(t, e);
    await p.svc.takeover({ lineage: 'L' });
    const realId = handoffRecordId('test-domain', 'L', 1);
    await assert.rejects(p.continuity.submit(forgedHandoff(), 'operator'), reserved('$.producer'));
    await assert.rejects(
      p.continuity.submit(forgedHandoff({ record_id: 'urn:example:other' }), 'operator'),
      reserved('$.producer'),
    );
    await assert.rejects(
      p.continuity.submit(forgedHandoff({ producer: 'URN:Baton:test-domain:sub' }), 'operator'),
      reserved('$.producer'),
      'a sub-namespace, in other case',
    );
    await assert.rejects(
      p.continuity.submit(forgedHandoff({ producer: 'urn:example:op' }), 'operator'),
      reserved('$.record_id'),
    );
    const { producer: _dropped, ...unnamed } = forgedHandoff();
    await assert.rejects(
      p.continuity.submit(unnamed, 'operator'),
      reserved('$.record_id'),
      'the local producer, with Baton’s record id',
    );
    // Signed by the domain key but not projected by Baton: still not Baton's evidence log.
    const signed = await signRecord(
      forgedHandoff({
        record_id: 'urn:baton:test-domain:record:other',
        profile: OBSERVATION_PROFILE,
        audience: PRODUCER,
        issued_at: new Date(T0).toISOString(),
        expires_at: new Date(T0 + 3_600_000).toISOString(),
      }),
      p.key.privateKey,
    );
    await assert.rejects(p.continuity.submit(signed, 'operator'), reserved('$.producer'));
    assert.deepEqual(await p.continuity.list(), [], 'a refusal stores nothing');

    const projected = await p.continuity.project('t', undefined, { incremental: true });
    assert.deepEqual([projected.created, projected.conflicts], [1, []]);
    const real = await p.continuity.get(PRODUCER, realId);
    assert.ok(real !== undefined);
    assert.equal(real.record.signed, true);
    assert.equal(real.record.record.invariants.find((i) => i.dimension === 'memory')?.status, 'UNKNOWN');
    // Posting Baton's own stored bytes back (an exported record) is the usual no-op.
    assert.equal((await p.continuity.submit(real.record.record, 'operator')).status, 'exists');
    // An operator's record under its own producer is still accepted.
    assert.equal(
      (await p.continuity.submit(decidedRecord({ producer: 'urn:example:op' }), 'operator')).status,
      'created',
    );
  });

  test(`[${e.name}] B3.3: a stray row under Baton's producer (stored before the namespace was closed) does not make the incremental projector skip its lineage`, async (t) => {
    const p = await prepare(t, e);
    await p.svc.takeover({ lineage: 'L' });
    // Written straight into the store, as an older Baton accepted it from an operator.
    await p.store.engine.transaction((tx) =>
      insertRecord(tx, forgedHandoff({ record_id: 'urn:baton:test-domain:forged' }), T0, 'operator'),
    );
    const projected = await p.continuity.project('t', undefined, { incremental: true });
    assert.deepEqual([projected.created, projected.conflicts], [1, []]);
    assert.ok((await p.continuity.get(PRODUCER, handoffRecordId('test-domain', 'L', 1))) !== undefined);
  });
}
