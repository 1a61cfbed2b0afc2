/**
 * MSG-02 / seed §13.4: an older Status answer never replaces the newer one a view rests on (two
 * refreshes landing out of order), and MCO-02: a known authority_hash is never cleared. Pure view
 * functions and the stored view on both engines, driven with PRE-VERIFIED Status objects.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isBatonError } from '../../src/core/errors.js';
import { applySignal, applyStatus, emptyView } from '../../src/missions/view.js';
import { enginesUnderTest } from '../store/engines.js';
import { MISSION, ORIGIN, T0, binding, verifiedSignal, verifiedStatus } from './fixtures.js';
import { world } from './world.js';

const engines = await enginesUnderTest();
const HASH = `sha-256:${'A'.repeat(43)}`;

function after(...answers: ReturnType<typeof verifiedStatus>[]) {
  let v = emptyView(ORIGIN, MISSION, T0);
  const results: (string | true)[] = [];
  for (const a of answers) {
    const c = applyStatus(v, a, T0 + 10_000);
    results.push(c.applied ? true : c.reason);
    if (c.applied) v = c.view;
  }
  return { view: v, results };
}

test('MSG-02 seed §13.4 a late older Status answer is ignored, whichever way it points', () => {
  // F2 (suspended, t2) applied, then the late F1 (active, t1 < t2): the view stays suspended.
  const up = after(verifiedStatus('suspended', T0 + 2000), verifiedStatus('active', T0 + 1000));
  assert.deepEqual(up.results, [true, 'status_older_than_view']);
  assert.equal(up.view.state, 'suspended');
  // And a late older non-active answer does not override a newer active one.
  const down = after(verifiedStatus('active', T0 + 2000), verifiedStatus('suspended', T0 + 1000));
  assert.deepEqual(down.results, [true, 'status_older_than_view']);
  assert.equal(down.view.state, 'active');
  // Issued in the same second: may keep or lower the state, never lift it (fail closed).
  const tie = after(verifiedStatus('suspended', T0 + 2000), verifiedStatus('active', T0 + 2400));
  assert.deepEqual(tie.results, [true, 'status_older_than_view']);
  const tieDown = after(verifiedStatus('active', T0 + 2000), verifiedStatus('suspended', T0 + 2400));
  assert.deepEqual(tieDown.results, [true, true]);
  assert.equal(tieDown.view.state, 'suspended');
  // A newer answer still applies.
  const newer = after(verifiedStatus('suspended', T0 + 2000), verifiedStatus('active', T0 + 3000));
  assert.deepEqual(newer.results, [true, true]);
  assert.equal(newer.view.state, 'active');
});

test('A3.3 MSG-02 an active SET committed before the Status answer the view rests on never lifts it', () => {
  const live = (at: number): number => at + 60_000;
  const sig = (state: string, version: number, committed: number) =>
    verifiedSignal(state, version, committed, { issuedAt: Math.floor((T0 + 20_000) / 1000) });
  // v1 applied; the Status answer at T0+10 s already reflects the issuer's v4 (suspended).
  let v = emptyView(ORIGIN, MISSION, T0);
  const approval = applySignal(v, sig('active', 1, T0), T0, live(T0));
  assert.ok(approval.applied);
  const status = applyStatus(approval.view, verifiedStatus('suspended', T0 + 10_000), T0 + 10_000);
  assert.ok(status.applied);
  v = status.view;
  // The late v3 (active, committed T0+5 s): ignored.
  assert.deepEqual(applySignal(v, sig('active', 3, T0 + 5_000), T0 + 20_000, live(T0 + 20_000)), {
    applied: false,
    reason: 'signal_older_than_status',
  });
  // Committed within the answer's own `iat` second: not known to be older, taken by version.
  assert.ok(applySignal(v, sig('active', 3, T0 + 10_000), T0 + 20_000, live(T0 + 20_000)).applied);
  // An even older non-active SET (v2) is not taken either, so it cannot open the way for v3.
  assert.deepEqual(applySignal(v, sig('suspended', 2, T0 + 1_000), T0 + 20_000, live(T0 + 20_000)), {
    applied: false,
    reason: 'signal_older_than_status',
  });
  // A terminal SET is always taken, however old (A3.3: terminal is sticky).
  const revoked = applySignal(v, sig('revoked', 2, T0 + 1_000), T0 + 20_000, live(T0 + 20_000));
  assert.ok(revoked.applied && revoked.view.state === 'revoked');
  // An active Status answer leaves nothing to order against: signals go by version again.
  const up = applyStatus(v, verifiedStatus('active', T0 + 12_000), T0 + 12_000);
  assert.ok(up.applied);
  const down = applySignal(up.view, sig('suspended', 2, T0 + 1_000), T0 + 20_000, live(T0 + 20_000));
  assert.ok(down.applied);
  assert.ok(applySignal(down.view, sig('active', 3, T0 + 5_000), T0 + 20_000, live(T0 + 20_000)).applied);
});

test('MCO-02 A3.2 step 7 a known authority_hash is never overwritten with none', () => {
  const v = after(
    verifiedStatus('active', T0 + 1000, { authorityHash: HASH }),
    verifiedStatus('active', T0 + 2000, { authorityHash: null }),
  );
  assert.equal(v.view.authorityHash, HASH);
});

for (const e of engines) {
  test(`[${e.name}] MSG-02 two refreshes out of order: the later-issued suspended answer holds, dispatch is refused`, async (t) => {
    const w = await world(t, e);
    const item = await w.harness.createItem(
      { kind: 'queue_item', action_class: 'consequential_write', mission_binding: binding },
      'executor',
    );
    assert.equal((await w.harness.applyVerifiedStatus(verifiedStatus('suspended', T0))).applied, true);
    const late = await w.harness.applyVerifiedStatus(verifiedStatus('active', T0 - 1000));
    assert.deepEqual([late.applied, late.reason], [false, 'status_older_than_view']);
    assert.equal((await w.harness.getView(ORIGIN, MISSION))?.state, 'suspended');
    await assert.rejects(w.harness.dispatch(item.id, 'executor'), (err: unknown) =>
      isBatonError(err, 'mission_not_active'),
    );
  });
}
