/**
 * Revocation-barrier records written by Baton itself (B3.4, B7-14, issue 12 §2) on both engines: a
 * governed Mission with occurrences entered well before, near and after the revocation's
 * `committed_at` (the SET arrives late, as a delayed push does), then the harness commits the
 * non-active view. Each entry is coded against committed_at ± 30 s; the projector is idempotent
 * and the store refuses overwrites; `baton observe verify` accepts the signed records.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { observeCommand } from '../../src/cli/commands/observe.js';
import { exportPublicPem } from '../../src/core/ed25519.js';
import { readRecord, verifyRecord, type ObservationRecord } from '../../src/observations/index.js';
import { T0, verifiedSignal, verifiedStatus } from '../missions/fixtures.js';
import { enginesUnderTest } from '../store/engines.js';
import { captureIo, tempDir } from '../store/support.js';
import { governedWorld, reserveGoverned } from './governed.js';

const engines = await enginesUnderTest();
const PRODUCER = 'urn:baton:test-domain';

const authorityOf = (r: ObservationRecord) => r.invariants.find((i) => i.dimension === 'authority');

for (const e of engines) {
  test(`[${e.name}] B3.6: a lineage-scoped CIF counts the barrier records of the lineage's occurrences, even one whose entering generation is unreadable`, async (t) => {
    const w = await governedWorld(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const { ids, enter } = await reserveGoverned(w, ['a', 'b']);
    const [a, b] = ids as [string, string];
    w.clock.advance(1_000);
    await enter(a);
    await enter(b);
    // b's entry loses its generation (the barrier record then names no runtime: only its
    // occurrence ties it to the lineage).
    await w.store.tamper(
      `UPDATE evidence_events SET body = REPLACE(body, '"generation":1', '"generation":null') WHERE subject = ? AND type = 'provider_entered'`,
      [`occurrence:${b}`],
    );
    w.clock.advance(1_000);
    await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0 + 200_000));
    await w.continuity.project();
    const barriers = await w.continuity.list({ eventType: 'revocation_barrier' });
    assert.deepEqual(
      barriers.map((r) => r.record.source_runtime === null).sort(),
      [false, true],
      'one barrier record names no runtime',
    );
    const authority = async (lineage: string) => {
      const tally = (await w.continuity.cif({ lineage })).per_dimension['authority'];
      return [tally?.match, tally?.unknown];
    };
    // invoice-agent: a's MATCH, b's UNKNOWN (evidence_chain_unverified), the handoff's UNKNOWN
    // (its authority_created shares the takeover's millisecond and actor).
    assert.deepEqual(await authority('invoice-agent'), [1, 2]);
    assert.deepEqual(await authority('someone-else'), [0, 0]);
  });

  test(`[${e.name}] B7-14 B3.4 a late revocation SET: entries 1 s, 50 s and 95 s after T0 against committed_at T0+40 s ⇒ MATCH, UNKNOWN timing_ambiguous, MISMATCH`, async (t) => {
    const w = await governedWorld(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const { ids, enter } = await reserveGoverned(w, ['early', 'near', 'late']);
    const [early, near, late] = ids as [string, string, string];
    w.clock.advance(1_000);
    await enter(early); // T0+1 s < 40 − 30
    w.clock.advance(39_000);
    await w.harness.applyVerifiedStatus(verifiedStatus('active', T0 + 40_000)); // keeps the view fresh
    w.clock.advance(10_000);
    await enter(near); // T0+50 s, within 40 ± 30
    w.clock.advance(45_000);
    await enter(late); // T0+95 s > 40 + 30: the issuer had revoked, Baton had not heard yet
    w.clock.advance(5_000);
    // The issuer committed the revocation at T0+40 s; the SET reaches Baton at T0+100 s.
    const applied = await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0 + 40_000));
    assert.equal(applied.result, 'applied');

    const first = await w.continuity.project();
    assert.deepEqual([first.created, first.conflicts], [4, []], 'one handoff + three barrier records');
    const again = await w.continuity.project();
    assert.deepEqual([again.created, again.existing, again.conflicts], [0, 4, []], 'idempotent');

    const barriers = await w.continuity.list({ eventType: 'revocation_barrier' });
    assert.equal(barriers.length, 3);
    const byOccurrence = new Map(
      barriers.map((b) => [String(b.record.outcome.operation_ref).split(':').at(-1), b.record]),
    );
    const coded = ids.map((id) => {
      const a = authorityOf(byOccurrence.get(id) as ObservationRecord);
      return [a?.status, a?.reason];
    });
    assert.deepEqual(coded, [
      ['MATCH', 'entered before the barrier'],
      ['UNKNOWN', 'timing_ambiguous'],
      ['MISMATCH', 'entered after the barrier'],
    ]);
    const r = byOccurrence.get(late) as ObservationRecord;
    assert.equal(r.event_type, 'revocation_barrier');
    assert.equal(r.order.uncertainty_ms, 30_000);
    assert.equal(r.authority_epoch, 1);
    assert.equal(r.observed_at, '2026-11-02T08:01:40.000Z', 'Baton’s commit time of the non-active view');
    assert.equal(r.evidence.length, 2, 'the mission event and the provider_entered event');
    assert.ok(r.limitations.some((l) => /admission fencing only/.test(l)));

    // Same facts, same bytes: the stored envelope is what signing again produces.
    const stored = barriers.find((b) => b.record.record_id === r.record_id);
    assert.ok(stored?.signed);
    const verified = await verifyRecord(stored.record, {
      key: w.key.publicKey,
      audience: PRODUCER,
      now: T0 + 200_000,
    });
    assert.equal(verified.record.record_id, r.record_id);
    assert.ok(readRecord(JSON.stringify(stored.record)).record);

    // `baton observe verify` accepts it with the domain's public key.
    const dir = tempDir(t);
    writeFileSync(join(dir, 'pub.pem'), exportPublicPem(w.key.publicKey));
    writeFileSync(join(dir, 'b.json'), JSON.stringify(stored.record));
    const io = captureIo();
    const code = await observeCommand.run(
      [
        'verify',
        join(dir, 'b.json'),
        '--key',
        join(dir, 'pub.pem'),
        '--producer',
        PRODUCER,
        '--audience',
        PRODUCER,
        '--now',
        '2026-11-03T00:00:00Z',
      ],
      io,
    );
    assert.equal(code, 0, io.err.join(''));
    assert.match(
      io.out.join(''),
      new RegExp(`^verified ${r.record_id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );

    // Appended, never overwritten: the store refuses UPDATE and DELETE of the stored records.
    for (const sql of ["UPDATE cop_records SET body = '{}'", 'DELETE FROM cop_records'])
      await assert.rejects(w.store.engine.transaction((tx) => tx.run(sql)));
    assert.equal((await w.continuity.list({ eventType: 'revocation_barrier' })).length, 3);
  });

  test(`[${e.name}] B3.4 a Status-driven revocation bounds t_r between the last active answer's iat and the revoking one's: early entry MATCH, entry after the last active answer UNKNOWN`, async (t) => {
    const w = await governedWorld(t, e);
    const jws = (iat: number) =>
      `eyJhbGciOiJFZERTQSJ9.${Buffer.from(JSON.stringify({ iat: Math.floor(iat / 1000) })).toString('base64url')}.sig`;
    await w.harness.applyVerifiedStatus(
      verifiedStatus('active', T0, { jws: jws(T0), jwsDigest: 'sha-256:active0' }),
    );
    const { ids, enter } = await reserveGoverned(w, ['early', 'near', 'late']);
    const [early, near] = ids as [string, string, string];
    w.clock.advance(1_000);
    await enter(early);
    w.clock.advance(39_000);
    await w.harness.applyVerifiedStatus(
      verifiedStatus('active', T0 + 40_000, { jws: jws(T0 + 40_000), jwsDigest: 'sha-256:active40' }),
    );
    w.clock.advance(5_000);
    await enter(near); // T0+45 s: after the last "active" answer, before Baton heard "revoked"
    w.clock.advance(15_000);
    await w.harness.applyVerifiedStatus(
      verifiedStatus('revoked', T0 + 60_000, { jws: jws(T0 + 60_000), jwsDigest: 'sha-256:revoked60' }),
    );
    await w.continuity.project();
    const barriers = await w.continuity.list({ eventType: 'revocation_barrier' });
    const status = (id: string) =>
      authorityOf(
        barriers.find((b) => b.record.outcome.operation_ref?.endsWith(`:${id}`))?.record as ObservationRecord,
      );
    assert.equal(barriers.length, 2, 'the third occurrence never entered: no record');
    assert.equal(status(early)?.status, 'MATCH');
    assert.deepEqual([status(near)?.status, status(near)?.reason], ['UNKNOWN', 'timing_ambiguous']);
  });
}
