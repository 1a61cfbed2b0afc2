/**
 * A3.3 precedence and A3.5 staleness, driving the view with pre-verified inputs (the objects the
 * status and SET verifiers output; the end-to-end path with real JWTs comes with the consuming half).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applySignal, applyStatus, assess, DEFAULT_BOUNDS, emptyView } from '../../src/missions/view.js';
import type { MissionViewRecord } from '../../src/missions/model.js';
import { MISSION, ORIGIN, T0, verifiedSignal, verifiedStatus } from './fixtures.js';

const live = (now: number): number => now + 60_000;

function viewAfter(...steps: ((v: MissionViewRecord) => MissionViewRecord)[]): MissionViewRecord {
  return steps.reduce((v, s) => s(v), emptyView(ORIGIN, MISSION, T0));
}
function sig(state: string, version: number, at: number) {
  return (v: MissionViewRecord): MissionViewRecord => {
    const c = applySignal(v, verifiedSignal(state, version, at), at, live(at));
    return c.applied ? c.view : v;
  };
}

test('MCO-01 A7#9 unrecognised states (frozen, ACTIVE, "") are non-active, never continue', () => {
  for (const state of ['frozen', 'ACTIVE', '', 'active ']) {
    const v = viewAfter(sig(state, 1, T0));
    const a = assess(v, undefined, 'non_consequential', T0, DEFAULT_BOUNDS);
    assert.equal(a.verdict, 'non_active', state);
    assert.equal(a.row, 'other');
  }
  assert.equal(assess(undefined, undefined, 'non_consequential', T0, DEFAULT_BOUNDS).verdict, 'unknown');
});

test('MSG-02 A7#10/#12 a SET applies only with a newer version; late suspended v2 after active v3 is ignored', () => {
  const v = viewAfter(sig('active', 1, T0), sig('suspended', 2, T0 + 1000), sig('active', 3, T0 + 2000));
  assert.equal(v.state, 'active');
  const late = applySignal(v, verifiedSignal('suspended', 2, T0 + 3000), T0 + 3000, live(T0 + 3000));
  assert.deepEqual(late, { applied: false, reason: 'version_not_newer' });
  const gap = applySignal(v, verifiedSignal('suspended', 5, T0 + 3000), T0 + 3000, live(T0 + 3000));
  assert.ok(gap.applied && gap.gap);
});

test('A3.3 terminal is sticky: active v9 after revoked v2, and an active Status after revoked, change nothing', () => {
  const v = viewAfter(sig('active', 1, T0), sig('revoked', 2, T0 + 1000));
  assert.deepEqual(applySignal(v, verifiedSignal('active', 9, T0 + 2000), T0 + 2000, live(T0)), {
    applied: false,
    reason: 'terminal_sticky',
  });
  assert.equal(applyStatus(v, verifiedStatus('active', T0 + 5000), T0 + 5000).applied, false);
});

test('A3.3 a Status lifts suspended only if issued after the SET was committed', () => {
  const v = viewAfter(sig('active', 1, T0), sig('suspended', 2, T0 + 10_000));
  assert.deepEqual(applyStatus(v, verifiedStatus('active', T0 + 5000), T0 + 20_000), {
    applied: false,
    reason: 'status_older_than_signal',
  });
  const lifted = applyStatus(v, verifiedStatus('active', T0 + 11_000), T0 + 11_000);
  assert.ok(lifted.applied);
  assert.equal(lifted.view.state, 'active');
  // Toward non-active always applies.
  const down = applyStatus(viewAfter(sig('active', 1, T0)), verifiedStatus('suspended', T0 - 50_000), T0);
  assert.ok(down.applied && down.view.state === 'suspended');
});

test('A3.5 HAR-03 staleness: read 900 s / write 300 s / high-consequence 5 s, all capped by max stale', () => {
  const s = applyStatus(
    emptyView(ORIGIN, MISSION, T0),
    verifiedStatus('active', T0, { freshUntil: '2026-11-02T09:00:00Z' }),
    T0,
  );
  assert.ok(s.applied);
  const bounds = { ...DEFAULT_BOUNDS, maxStaleSeconds: 3600 };
  const at = (ms: number, c: Parameters<typeof assess>[2]) =>
    assess(s.view, undefined, c, T0 + ms, bounds).verdict;
  assert.equal(at(5_000, 'irreversible'), 'active');
  assert.equal(at(5_001, 'irreversible'), 'stale');
  assert.equal(at(300_000, 'consequential_write'), 'active');
  assert.equal(at(300_001, 'consequential_write'), 'stale');
  assert.equal(at(900_000, 'consequential_read'), 'active');
  assert.equal(at(900_001, 'consequential_read'), 'stale');
  assert.equal(assess(s.view, undefined, 'consequential_read', T0 + 60_001, DEFAULT_BOUNDS).verdict, 'stale');
});

test('A7#8 a Status whose fresh_until has passed is verified but not relied on', () => {
  const s = applyStatus(emptyView(ORIGIN, MISSION, T0), verifiedStatus('active', T0), T0);
  assert.ok(s.applied);
  assert.equal(
    assess(s.view, undefined, 'non_consequential', T0 + 89_000, { ...DEFAULT_BOUNDS, maxStaleSeconds: 3600 })
      .verdict,
    'active',
  );
  assert.equal(
    assess(s.view, undefined, 'non_consequential', T0 + 90_001, { ...DEFAULT_BOUNDS, maxStaleSeconds: 3600 })
      .verdict,
    'stale',
  );
});

test('A3.2 step 7 a known, different authority_hash is not active for that binding', () => {
  const s = applyStatus(
    emptyView(ORIGIN, MISSION, T0),
    verifiedStatus('active', T0, { authorityHash: 'sha-256:new' }),
    T0,
  );
  assert.ok(s.applied);
  const a = assess(s.view, 'sha-256:old', 'consequential_read', T0, DEFAULT_BOUNDS);
  assert.equal(a.verdict, 'non_active');
  assert.equal(a.reason, 'authority_hash_mismatch');
  assert.equal(assess(s.view, 'sha-256:new', 'consequential_read', T0, DEFAULT_BOUNDS).verdict, 'active');
});

test('property: a view assesses active only when its state is exactly "active" and within the bound', () => {
  const stateArb = fc.oneof(fc.constantFrom('active', 'revoked', 'suspended', 'ACTIVE', ''), fc.string());
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(
          fc.boolean(),
          stateArb,
          fc.integer({ min: 1, max: 20 }),
          fc.integer({ min: 0, max: 600_000 }),
        ),
        { maxLength: 12 },
      ),
      fc.integer({ min: 0, max: 1_200_000 }),
      (steps, probe) => {
        let v = emptyView(ORIGIN, MISSION, T0);
        let terminalSeen = false;
        for (const [isSignal, state, version, dt] of steps) {
          const at = T0 + dt;
          const c = isSignal
            ? applySignal(v, verifiedSignal(state, version, at), at, live(at))
            : applyStatus(v, verifiedStatus(state, at), at);
          if (c.applied) v = c.view;
          if (['revoked', 'expired', 'completed', 'superseded', 'cascaded'].includes(v.state ?? ''))
            terminalSeen = true;
        }
        const a = assess(v, undefined, 'consequential_write', T0 + probe, DEFAULT_BOUNDS);
        if (a.verdict === 'active') {
          assert.equal(v.state, 'active');
          assert.equal(terminalSeen, false);
          assert.ok(v.freshUntil !== null && T0 + probe <= v.freshUntil);
        }
      },
    ),
    { numRuns: 400 },
  );
});
