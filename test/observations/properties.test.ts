/**
 * Properties (fast-check): OBS-13 a record that lacks evidence is never coded MATCH (by the coder
 * or accepted by the reader); OBS-16 FIC_obs over a tampered chain never counts the tampered
 * occurrence as verified (both engines: the chains are real rows).
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { isBatonError } from '../../src/core/errors.js';
import {
  code,
  projectBarrier,
  readRecordValue,
  type BarrierRecordFacts,
  type Status,
} from '../../src/observations/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { decidedRecord, enterSome, prepare } from './support.js';

test('OBS-13 property: without reference evidence the coder never answers MATCH', () => {
  fc.assert(
    fc.property(
      fc.string(),
      fc.option(fc.string(), { nil: null }),
      fc.array(fc.string(), { maxLength: 3 }),
      fc.boolean(),
      fc.array(fc.string(), { maxLength: 3 }),
      (dimension, value, others, stale, updates) => {
        const r = code(dimension, { value, others, stale }, null, { authorizedUpdates: updates });
        assert.equal(r.status, 'UNKNOWN');
        assert.notEqual(r.reason, null);
      },
    ),
  );
});

test('OBS-13 property: the reader refuses any record that decides an invariant without evidence', () => {
  const status = fc.constantFrom<Status>('MATCH', 'MISMATCH', 'UNKNOWN', 'NOT_APPLICABLE');
  fc.assert(
    fc.property(fc.array(status, { minLength: 1, maxLength: 5 }), (statuses) => {
      const record = decidedRecord({
        evidence: [],
        invariants: statuses.map((s) => ({
          dimension: 'state',
          status: s,
          reference: 'urn:baton:r',
          reason: 'r',
        })),
      });
      const decides = statuses.some((s) => s === 'MATCH' || s === 'MISMATCH');
      try {
        readRecordValue(record);
        assert.equal(decides, false, 'a MATCH/MISMATCH without evidence was accepted');
      } catch (err) {
        assert.ok(isBatonError(err, 'observation_record_invalid'));
        assert.equal(decides, true);
      }
    }),
  );
});

const engines = await enginesUnderTest();
for (const e of engines) {
  test(`[${e.name}] OBS-16 property: a tampered occurrence chain is never counted as verified`, async (t) => {
    const p = await prepare(t, e);
    const ids = await enterSome(p, 'L', 4);
    const edits = [
      `UPDATE evidence_events SET body = REPLACE(body, '"attempt":1', '"attempt":7') WHERE subject = ? AND type = 'provider_entered'`,
      `UPDATE evidence_events SET actor = 'someone-else' WHERE subject = ? AND type = 'occurrence_created'`,
      `UPDATE evidence_events SET at = at + 1 WHERE subject = ? AND type = 'provider_entered'`,
      `DELETE FROM evidence_events WHERE subject = ? AND type = 'provider_entered'`,
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.subarray(ids, { minLength: 1 }),
        fc.nat(edits.length - 1),
        async (victims, which) => {
          for (const v of victims) await p.store.tamper(edits[which] ?? '', [`occurrence:${v}`]);
          const f = await p.continuity.fic();
          const failed = new Set(f.failures.map((x) => x.occurrence));
          for (const v of victims) assert.ok(failed.has(v), `${v} counted as verified after tampering`);
          assert.ok(f.v <= ids.length - victims.length);
        },
      ),
      { numRuns: 4 },
    );
  });
}

test('OBS-13 B3.4 property: a barrier record without a verified entry or over an unverified chain is never MATCH, and every projected one reads back', () => {
  const event = (n: number) => ({ subject: `occurrence:o${n}`, idx: n, hash: `sha-256:${'A'.repeat(43)}` });
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 4_000_000_000_000 }),
      fc.integer({ min: -600_000, max: 600_000 }),
      fc.option(fc.integer({ min: -600_000, max: 0 }), { nil: null }),
      fc.boolean(),
      fc.boolean(),
      (committedAt, offset, earliestOffset, hasEntry, chainsVerify) => {
        const facts: BarrierRecordFacts = {
          domain: 'd',
          origin: 'https://as.example.com',
          missionId: 'm',
          barrier: { ...event(1), seq: 9, at: committedAt + 1000, state: 'revoked', source: 'signal' },
          committedAt,
          committedAtEarliest: earliestOffset === null ? null : committedAt + earliestOffset,
          occurrence: 'o2',
          lineage: 'L',
          entered: hasEntry ? { ...event(2), at: committedAt + offset, generation: 1 } : null,
          chainsVerify,
        };
        const record = projectBarrier(facts);
        const authority = record.invariants[0];
        if (!hasEntry || !chainsVerify) assert.equal(authority?.status, 'UNKNOWN');
        if (earliestOffset === null)
          assert.notEqual(authority?.status, 'MATCH', 'no earliest bound, no MATCH');
        if (authority?.status === 'MATCH') assert.ok(offset < (earliestOffset ?? 0) - 30_000);
        readRecordValue(record); // the projector never writes a record its own reader refuses
      },
    ),
  );
});
