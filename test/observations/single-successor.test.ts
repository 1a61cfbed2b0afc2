/**
 * A continuity record has one correction (OBS-08 ¶19: a correction replaces its predecessor), on
 * both engines: a second correction of a record is refused 409 `observation_record_conflict`, rule
 * `single_successor`, inside the storing transaction; of two submitted at once exactly one is
 * stored (migration 032's unique index); and a store that already held a fork migrates and counts
 * the fork once, UNKNOWN `conflicting_evidence` (B3.2), never once per correction.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { canonicalize } from '../../src/core/jcs.js';
import { digestBytes } from '../../src/core/digest.js';
import { isBatonError } from '../../src/core/errors.js';
import { LOCAL_PRODUCER, type ObservationRecord } from '../../src/observations/index.js';
import { ContinuityStore, migrate } from '../../src/store/index.js';
import { T0 } from '../occurrences/helpers.js';
import { observationSubject } from '../../src/store/observations-records.js';
import { enginesUnderTest } from '../store/engines.js';
import { correctionEvidence, example, prepare } from './support.js';

const engines = await enginesUnderTest();

const EVIDENCE = [
  {
    locator: 'urn:baton:capture:1',
    method: 'direct_capture',
    verification: 'OBSERVED_WITH_STATED_EVIDENCE',
    byte_digest: null,
  },
];

/** A local record deciding `state`; a correction when it names `supersedes`. */
function rec(id: string, status: 'MATCH' | 'MISMATCH', supersedes?: string): ObservationRecord {
  return {
    ...example(),
    record_id: id,
    evidence: supersedes === undefined ? EVIDENCE : [...EVIDENCE, correctionEvidence(id)],
    invariants: [{ dimension: 'state', status, reference: 'urn:baton:ref:1', reason: null }],
    ...(supersedes !== undefined && { event_type: 'correction', supersedes, analysis_revision: 'r1' }),
  } as unknown as ObservationRecord;
}

const secondSuccessor = (predecessor: string, successor: string) => (err: unknown) =>
  isBatonError(err, 'observation_record_conflict') &&
  err.status === 409 &&
  err.details['rule'] === 'single_successor' &&
  err.details['supersedes'] === predecessor &&
  err.details['successor'] === successor;

async function stateTally(continuity: ContinuityStore): Promise<number[]> {
  const t = (await continuity.cif()).per_dimension['state'];
  return [t?.match ?? -1, t?.mismatch ?? -1, t?.unknown ?? -1];
}

for (const e of engines) {
  test(`[${e.name}] OBS-08 ¶19: a second correction of one record is 409 single_successor and stores nothing; CIF counts one result per observation`, async (t) => {
    const p = await prepare(t, e);
    assert.equal((await p.continuity.submit(rec('A', 'MISMATCH'), 'op')).status, 'created');
    assert.deepEqual(await stateTally(p.continuity), [0, 1, 0]);
    assert.equal((await p.continuity.submit(rec('B', 'MATCH', 'A'), 'op')).status, 'created');
    assert.deepEqual(await stateTally(p.continuity), [1, 0, 0], 'B replaced A');
    // Before: both accepted (201) and counted, match 1 → 2 → 3.
    await assert.rejects(p.continuity.submit(rec('C', 'MATCH', 'A'), 'op'), secondSuccessor('A', 'B'));
    await assert.rejects(p.continuity.submit(rec('D', 'MISMATCH', 'A'), 'op'), secondSuccessor('A', 'B'));
    assert.deepEqual(await stateTally(p.continuity), [1, 0, 0], 'one observation, one result');
    // Nothing of C or D is stored, in cop_records or in the evidence log.
    assert.equal(await p.continuity.get(LOCAL_PRODUCER, 'C'), undefined);
    assert.equal(await p.continuity.get(LOCAL_PRODUCER, 'D'), undefined);
    const events = await p.store.engine.read((ex) =>
      ex.all<{ subject: string; type: string }>(
        'SELECT subject, type FROM evidence_events WHERE subject IN (?, ?, ?) ORDER BY seq',
        [
          observationSubject(LOCAL_PRODUCER, 'A'),
          observationSubject(LOCAL_PRODUCER, 'C'),
          observationSubject(LOCAL_PRODUCER, 'D'),
        ],
      ),
    );
    assert.deepEqual(
      events.map((x) => x.type),
      ['observation_recorded', 'observation_corrected'],
    );
    // The same correction again is still the usual no-op; the correction itself may be corrected.
    assert.equal((await p.continuity.submit(rec('B', 'MATCH', 'A'), 'op')).status, 'exists');
    assert.equal((await p.continuity.submit(rec('E', 'MISMATCH', 'B'), 'op')).status, 'created');
    assert.deepEqual(await stateTally(p.continuity), [0, 1, 0], 'E replaced B');
    const chain = await p.continuity.get(LOCAL_PRODUCER, 'A');
    assert.deepEqual(
      chain?.corrections.map((c) => c.record_id),
      ['B', 'E'],
    );
  });

  test(`[${e.name}] OBS-08 ¶19: of two corrections of one record submitted at once, exactly one is stored`, async (t) => {
    const p = await prepare(t, e);
    const other = new ContinuityStore({
      engine: p.store.another(),
      signingKey: p.key.privateKey,
      clock: p.clock,
    });
    for (let round = 0; round < 6; round++) {
      const original = `P${round}`;
      await p.continuity.submit(rec(original, 'MISMATCH'), 'op');
      const results = await Promise.allSettled([
        p.continuity.submit(rec(`${original}-x`, 'MATCH', original), 'op-1'),
        other.submit(rec(`${original}-y`, 'MISMATCH', original), 'op-2'),
      ]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      assert.equal(won.length, 1, `round ${round}: exactly one stored`);
      assert.equal(lost.length, 1);
      assert.ok(isBatonError(lost[0], 'observation_record_conflict'), String(lost[0]));
      const rows = await p.store.engine.read((ex) =>
        ex.all<{ record_id: string }>('SELECT record_id FROM cop_records WHERE supersedes = ?', [original]),
      );
      assert.equal(rows.length, 1, `round ${round}: one successor row`);
    }
    // Six observations, six results: one per original, nothing UNKNOWN.
    const [match, mismatch, unknown] = await stateTally(p.continuity);
    assert.deepEqual([(match ?? 0) + (mismatch ?? 0), unknown], [6, 0]);
  });

  test(`[${e.name}] migration 032 on a store that already holds a fork: it applies, the fork counts once UNKNOWN conflicting_evidence, and no further correction of the record is taken`, async (t) => {
    // A store as a Baton before migration 032 left it.
    const { store, key, clock } = await prepare(t, e, undefined, 31);
    // Rows as a Baton before this fix stored them: A, and three corrections of it.
    const rows = [
      rec('A', 'MISMATCH'),
      rec('B', 'MATCH', 'A'),
      rec('C', 'MATCH', 'A'),
      rec('D', 'MISMATCH', 'A'),
      rec('X', 'MATCH'),
    ];
    for (const [i, r] of rows.entries()) {
      const body = canonicalize(r);
      await store.tamper(
        `INSERT INTO cop_records (producer, record_id, digest, body, event_type, scope_id, observed_at, supersedes, analysis_revision, envelope, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)`,
        [
          LOCAL_PRODUCER,
          r.record_id,
          digestBytes(body),
          body,
          r.event_type,
          r.scope_id,
          Date.parse(r.observed_at),
          r.supersedes ?? null,
          r.analysis_revision ?? null,
          T0 + i,
        ],
      );
    }
    const migrated = await migrate(store.engine);
    // The store stood at 031: 032 applies first (later migrations follow it).
    assert.equal(migrated.applied[0]?.name, 'observation_single_successor');
    const continuity = new ContinuityStore({ engine: store.engine, signingKey: key.privateKey, clock });
    // Before: B, C and D each counted (match 3, mismatch 1 with X); now the fork is one UNKNOWN.
    assert.deepEqual(await stateTally(continuity), [1, 0, 1]);
    await assert.rejects(continuity.submit(rec('F', 'MATCH', 'A'), 'op'), secondSuccessor('A', 'B'));
    // Its members posted again are still the usual no-op.
    assert.equal((await continuity.submit(rec('C', 'MATCH', 'A'), 'op')).status, 'exists');
    assert.deepEqual(await stateTally(continuity), [1, 0, 1]);
  });
}
