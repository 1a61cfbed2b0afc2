/**
 * A3.6 / issue 11 §8: provider entry decides its common answer, `continue`, from a few columns
 * (`entryContinues`) and leaves everything else to the full check (`decideCheck`, mode `enter`).
 * The two must agree: over every combination of item, view, taint and matrix below, the short
 * check continues exactly when the full one would, and writes the same `mission_checked` body.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  ACTION_CLASSES,
  assess,
  DEFAULT_BOUNDS,
  DEFAULT_MATRIX,
  decideCheck,
  entryContinues,
  entryContinuesWithText,
  ITEM_STATES,
  missionChecked,
  missionCheckedText,
  type MissionViewRecord,
  type WorkItemRecord,
} from '../../src/missions/index.js';
import { canonicalize } from '../../src/core/jcs.js';
import { binding, item, MISSION, ORIGIN, T0 } from './fixtures.js';

const MIN = 60_000;
const instant = fc.constantFrom(null, T0 - 10 * MIN, T0 - 1, T0, T0 + 1, T0 + 10 * MIN, T0 + 2 * 86_400_000);

const arbItem: fc.Arbitrary<WorkItemRecord> = fc
  .record({
    state: fc.constantFrom(...ITEM_STATES),
    hold: fc.boolean(),
    expiresAt: instant,
    binding: fc.constantFrom(null, binding, { ...binding, authority_hash: 'sha-256:h1' }),
    actionClass: fc.constantFrom(...ACTION_CLASSES),
    sessionId: fc.constantFrom(null, 'sess_1'),
  })
  .map((o) => item(o));

const arbView: fc.Arbitrary<MissionViewRecord | undefined> = fc.option(
  fc
    .record({
      state: fc.constantFrom(null, '', 'active', 'Active', 'revoked', 'suspended', 'superseded', 'weird'),
      stateSource: fc.constantFrom(null, 'status' as const, 'signal' as const),
      authorityHash: fc.constantFrom(null, 'sha-256:h1', 'sha-256:h2'),
      checkedAt: instant,
      freshUntil: instant,
      missionExpiry: instant,
    })
    .map((v) => ({
      origin: ORIGIN,
      missionId: MISSION,
      signalVersion: 1,
      lastSignalJti: null,
      nonActiveCommittedAt: null,
      statusIssuedAt: null,
      updatedAt: T0,
      version: 1,
      ...v,
    })),
  { nil: undefined },
);

test('issue 11 §8 A3.6 entryContinues continues exactly when decideCheck (mode enter) does, with the same mission_checked', () => {
  fc.assert(
    fc.property(arbItem, arbView, fc.boolean(), fc.boolean(), (i, view, tainted, known) => {
      const short = entryContinues(
        { item: i, view, sessionTainted: tainted },
        T0,
        DEFAULT_BOUNDS,
        () => known,
      );
      const a =
        i.binding === null
          ? undefined
          : assess(view, i.binding.authority_hash, i.actionClass, T0, DEFAULT_BOUNDS);
      const full = decideCheck({
        item: i,
        assessment: a,
        matrix: DEFAULT_MATRIX.matrix,
        now: T0,
        inFlight: false,
        mode: 'enter',
        tainted: tainted && i.sessionId !== null,
      });
      // An unknown matrix makes the full check refuse before it decides: never a short continue.
      assert.equal(short !== undefined, known && full.kind === 'continue');
      if (short !== undefined) assert.deepEqual(short, missionChecked(i, a, 'continue'));
    }),
    { numRuns: 5000 },
  );
});

test('A3.6 the continue body names the Mission, the item, the state, its source and freshness', () => {
  const view: MissionViewRecord = {
    origin: ORIGIN,
    missionId: MISSION,
    state: 'active',
    stateSource: 'status',
    authorityHash: null,
    signalVersion: 0,
    lastSignalJti: null,
    nonActiveCommittedAt: null,
    statusIssuedAt: null,
    checkedAt: T0,
    freshUntil: T0 + 10 * MIN,
    missionExpiry: null,
    updatedAt: T0,
    version: 1,
  };
  const body = entryContinues(
    { item: item({ state: 'running' }), view, sessionTainted: false },
    T0 + 30_000,
    DEFAULT_BOUNDS,
    () => true,
  );
  assert.deepEqual(body, {
    mission: { id: MISSION, origin: ORIGIN },
    work_item: 'wrk_1',
    action_class: 'consequential_write',
    state: 'active',
    state_source: 'status',
    freshness: { checked_at: '2026-11-02T08:00:00.000Z', expires_at: '2026-11-02T08:01:00.000Z' },
    decision: 'continue',
  });
  // Past the write bound (300 s, capped by mission_max_stale_seconds 60): the full check decides.
  assert.equal(
    entryContinues(
      { item: item({ state: 'running' }), view, sessionTainted: false },
      T0 + 2 * MIN,
      DEFAULT_BOUNDS,
      () => true,
    ),
    undefined,
  );
});

test("issue 11 §8 the continue body's assembled JCS text is canonicalize of the body, whatever its strings", () => {
  // Strings JSON escapes (quotes, backslashes, controls), non-ASCII, astral characters, and
  // authority_hash present or absent; the view's times give freshness or none.
  const text = fc.oneof(
    fc.string(),
    fc.constantFrom('"quoted"', 'back\\slash', 'tab\there', '\u0001\u001f', 'é€😀', '\u2028\u2029', ''),
  );
  fc.assert(
    fc.property(arbItem, arbView, text, text, text, (i, view, id, origin, hash) => {
      if (i.binding === null) return;
      const bound = item({
        ...i,
        id: `wrk_${id}`,
        binding: {
          ...i.binding,
          mission_origin: origin,
          ...(i.binding.authority_hash !== undefined && { authority_hash: hash }),
        },
      });
      const a = assess(view, bound.binding?.authority_hash, bound.actionClass, T0, DEFAULT_BOUNDS);
      for (const decision of ['continue', 'suppress'])
        assert.equal(
          missionCheckedText(bound, a, decision),
          canonicalize(missionChecked(bound, a, decision)),
        );
      const withText = entryContinuesWithText(
        { item: bound, view, sessionTainted: false },
        T0,
        DEFAULT_BOUNDS,
        () => true,
      );
      if (withText !== undefined) assert.equal(withText.text, canonicalize(withText.body));
      // A frozen binding's mission text is kept and reused: two items sharing it, each right.
      const shared = Object.freeze({ ...bound.binding! });
      for (const sharing of [
        item({ ...bound, binding: shared }),
        item({ ...bound, id: `${bound.id}2`, binding: shared }),
      ])
        assert.equal(
          missionCheckedText(sharing, a, 'continue'),
          canonicalize(missionChecked(sharing, a, 'continue')),
        );
    }),
    { numRuns: 3000 },
  );
});

test('issue 11 §8 a lone surrogate in the assembled text is refused as canonicalize refuses it', () => {
  const bound = item({ state: 'running', id: 'wrk_\ud800' });
  assert.throws(() => missionCheckedText(bound, undefined, 'continue'), { code: 'jcs_unsupported_value' });
  assert.throws(() => canonicalize(missionChecked(bound, undefined, 'continue')), {
    code: 'jcs_unsupported_value',
  });
});
