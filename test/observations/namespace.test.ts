/**
 * Baton's own namespace is closed to submitted records (OBS-08 ¶19, OBS-12 ¶25, B7-12), on both
 * engines: an operator's record can neither take the id of a handoff record Baton has yet to
 * project, nor stand under Baton's producer (where it would count as Baton's evidence and make
 * the incremental projector skip the lineage). Re-submitting Baton's own stored bytes is a no-op.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { exportEd25519PublicJwk, generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { isBatonError } from '../../src/core/errors.js';
import {
  LOCAL_PRODUCER,
  OBSERVATION_PROFILE,
  handoffRecordId,
  signRecord,
  type ObservationRecord,
} from '../../src/observations/index.js';
import { ProducerKeys } from '../../src/store/index.js';
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
      (err: unknown) => isBatonError(err) && err.details['rule'] === 'producer_unauthenticated',
      'an unsigned record under another producer is refused before its id is looked at',
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
    // An operator's record under the local producer is still accepted.
    assert.equal((await p.continuity.submit(decidedRecord(), 'operator')).status, 'created');
  });

  test(`[${e.name}] OBS-08 OBS-12 B7-13: an unsigned record under another producer's name is refused and stores nothing; the local producer, and a producer signing with its pinned key, are accepted`, async (t) => {
    const p = await prepare(t, e);
    const acme = generateEd25519KeyPair();
    const keys = [exportEd25519PublicJwk(acme.publicKey)];
    await new ProducerKeys(p.store.engine).pin({ producer: 'urn:example:acme', keys }, 'admin', T0);
    const store = p.continuity;
    const squat = decidedRecord({ producer: 'urn:example:acme', record_id: 'acme-1' });
    const unauthenticated = (err: unknown) =>
      isBatonError(err, 'observation_record_invalid') &&
      err.details['rule'] === 'producer_unauthenticated' &&
      err.details['path'] === '$.producer';
    await assert.rejects(store.submit(squat, 'operator:b'), unauthenticated);
    // A correction superseding acme's record under acme's name is refused the same way.
    await assert.rejects(
      store.submit({ ...squat, record_id: 'acme-fix', supersedes: 'acme-1', analysis_revision: 'r2' }, 'b'),
      unauthenticated,
    );
    const signedBy = async (key: typeof acme, record: ObservationRecord) =>
      signRecord(
        {
          ...record,
          profile: OBSERVATION_PROFILE,
          audience: PRODUCER,
          issued_at: new Date(p.clock.wallMs()).toISOString(),
          expires_at: new Date(p.clock.wallMs() + 3_600_000).toISOString(),
        },
        key.privateKey,
      );
    // Signed, but by another key than acme's pin; signed under a producer nobody pinned.
    await assert.rejects(
      store.submit(await signedBy(generateEd25519KeyPair(), squat), 'b'),
      (err: unknown) => isBatonError(err) && err.status === 401,
    );
    await assert.rejects(
      store.submit(await signedBy(acme, { ...squat, producer: 'urn:example:other' }), 'b'),
      (err: unknown) =>
        isBatonError(err, 'observation_record_invalid') &&
        err.details['rule'] === 'envelope' &&
        err.details['path'] === '$.producer',
    );
    assert.deepEqual(await store.list(), [], 'a refusal stores nothing');
    const evidence = await p.store.engine.read((ex) =>
      ex.all<{ n: number | string }>(
        "SELECT COUNT(*) AS n FROM evidence_events WHERE subject LIKE 'observation:%'",
      ),
    );
    assert.equal(Number(evidence[0]?.n), 0, 'and appends no evidence');

    // Acme's real record, signed with its pinned key, still gets its id.
    assert.equal((await store.submit(await signedBy(acme, squat), 'acme')).status, 'created');
    // The local producer, unsigned: named or not.
    assert.equal((await store.submit(decidedRecord({ record_id: 'l-1' }), 'a')).status, 'created');
    assert.equal(
      (await store.submit(decidedRecord({ record_id: 'l-2', producer: LOCAL_PRODUCER }), 'a')).status,
      'created',
    );
    assert.deepEqual((await store.list()).map((r) => `${r.producer} ${r.record_id} ${r.signed}`).sort(), [
      'urn:baton:local l-1 false',
      'urn:baton:local l-2 false',
      'urn:example:acme acme-1 true',
    ]);
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
