/** A3.1 resume, A2.7 item machine, A3.7 propagation, A3.8 retry: the pure transitions. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_MATRIX } from '../../src/missions/matrix.js';
import {
  decideCheck,
  isRefusal,
  decideRequeue,
  decideRetry,
  decideStop,
  propagationTargets,
  type Decision,
} from '../../src/missions/machine.js';
import type { WorkItemRecord } from '../../src/missions/model.js';
import {
  applySignal,
  applyStatus,
  assess,
  DEFAULT_BOUNDS,
  emptyView,
  type Assessment,
} from '../../src/missions/view.js';
import { MISSION, ORIGIN, T0, binding, item, verifiedSignal, verifiedStatus } from './fixtures.js';

const m = DEFAULT_MATRIX.matrix;
const activeView = (() => {
  const c = applyStatus(emptyView(ORIGIN, MISSION, T0), verifiedStatus('active', T0), T0);
  assert.ok(c.applied);
  return c.view;
})();
const a = (
  v = activeView,
  now = T0,
  cls: WorkItemRecord['actionClass'] = 'consequential_write',
): Assessment => assess(v, undefined, cls, now, DEFAULT_BOUNDS);
const revoked = (() => {
  const c = applySignal(activeView, verifiedSignal('revoked', 2, T0), T0, T0);
  assert.ok(c.applied);
  return c.view;
})();

function check(
  i: WorkItemRecord,
  as: Assessment | undefined,
  mode: 'dispatch' | 'enter' = 'dispatch',
): Decision {
  return decideCheck({ item: i, assessment: as, matrix: m, now: T0, inFlight: false, mode });
}

test('HAR-11 A3.1 step 6 an active, fresh Mission dispatches queued → running with resume_allowed', () => {
  const d = check(item(), a());
  assert.equal(d.kind, 'continue');
  assert.ok(d.kind === 'continue');
  assert.equal(d.item.state, 'running');
  assert.equal(d.item.version, 2);
  assert.equal(d.evidence.eventType, 'resume_allowed');
  assert.equal(d.evidence.reason, 'mission_active');
  assert.ok(d.recheckAt !== null && d.recheckAt > T0);
});

test('HAR-13 A7#1 revoked ⇒ queued item suppressed with queue_suppressed / suppress / mission_not_active', () => {
  const d = check(item(), a(revoked));
  assert.ok(d.kind === 'stop');
  assert.equal(d.item.state, 'suppressed');
  assert.equal(d.code, 'mission_not_active');
  assert.deepEqual(
    [d.evidence.eventType, d.evidence.decision, d.evidence.reason, d.evidence.state, d.evidence.stateSource],
    ['queue_suppressed', 'suppress', 'mission_not_active', 'revoked', 'signal'],
  );
});

test('HAR-07 A7#16 a legacy item without binding is refused with missing_mission_binding', () => {
  const d = check(item({ binding: null }), undefined);
  assert.ok(d.kind === 'stop');
  assert.equal(d.code, 'mission_binding_missing');
  assert.equal(d.evidence.reason, 'missing_mission_binding');
  assert.equal(d.evidence.state, 'unknown');
  assert.equal(d.evidence.stateSource, 'harness');
});

test('HAR-15 A7#15 an expired item is suppressed even when the Mission is active (state active)', () => {
  const d = check(item({ expiresAt: T0 }), a());
  assert.ok(d.kind === 'stop');
  assert.deepEqual(
    [d.evidence.eventType, d.evidence.reason, d.evidence.state],
    ['queue_suppressed', 'queue_item_expired', 'active'],
  );
});

test('HAR-08 an orchestrator hold is handed off, never resumed, even if active', () => {
  const d = check(item({ hold: true }), a());
  assert.ok(d.kind === 'stop');
  assert.equal(d.item.state, 'handed_off');
  assert.equal(d.evidence.reason, 'orchestrator_hold');
});

test('A3.5 stale or unknown ⇒ paused with mission_state_stale and 503 mission_status_unavailable', () => {
  const d = check(item(), a(activeView, T0 + 301_000));
  assert.ok(d.kind === 'stop');
  assert.deepEqual(
    [d.item.state, d.code, d.evidence.eventType],
    ['paused', 'mission_status_unavailable', 'mission_state_stale'],
  );
  const u = check(item(), assess(undefined, undefined, 'consequential_write', T0, DEFAULT_BOUNDS));
  assert.ok(u.kind === 'stop' && u.item.state === 'paused' && u.evidence.state === 'unknown');
});

test('A7#24 superseded ⇒ suppressed; requeue under the old Mission needs a successor binding', () => {
  const sup = applySignal(activeView, verifiedSignal('superseded', 2, T0), T0, T0);
  assert.ok(sup.applied);
  const d = check(item(), a(sup.view));
  assert.ok(d.kind === 'stop' && d.item.state === 'suppressed');
  const r = decideRequeue(d.item, 'superseded', T0);
  assert.ok(isRefusal(r) && r.code === 'successor_binding_required');
  const ok = decideRequeue(d.item, 'active', T0);
  assert.ok(!isRefusal(ok) && ok.state === 'queued');
});

test('HAR-12 A3.8 a retry keeps binding and idempotency_key and goes through the same check', () => {
  const first = check(item(), a(revoked));
  assert.ok(first.kind === 'stop');
  const r = decideRetry(first.item, 'wrk_2', T0);
  assert.ok(!isRefusal(r));
  assert.deepEqual([r.retryOf, r.idempotencyKey, r.state, r.version], ['wrk_1', 'idem-1', 'queued', 1]);
  const again = check(r, a(revoked));
  assert.ok(again.kind === 'stop' && again.item.state === 'suppressed');
  assert.ok(isRefusal(decideRetry(item({ state: 'running' }), 'x', T0)));
});

test('HAR-21..23 A7#18 propagation: dependent handles stop; an independent active child continues; one whose parent is the stopped Mission stops', () => {
  const handle = (
    id: string,
    kind: 'parent_mission' | 'child_mission' | 'independent_mission',
    parent?: { id: string; origin: string },
  ) =>
    item({
      id,
      kind: 'subagent_handle',
      state: 'running',
      binding: kind === 'parent_mission' ? binding : { ...binding, mission_id: `msn_${id}` },
      handle: {
        actor: { client_id: `agent_${id}` },
        parent_mission: { id: MISSION, origin: ORIGIN },
        governed_by: {
          kind,
          ...(kind !== 'parent_mission' && {
            mission: { id: `msn_${id}`, origin: ORIGIN, ...(parent && { parent }) },
          }),
        },
      },
    });
  const items = [
    item({ id: 'q1' }),
    item({ id: 'q1-child', parentId: 'q1', binding: { ...binding, mission_id: 'other' } }),
    handle('h1', 'parent_mission'),
    handle('h2', 'child_mission'),
    handle('h3', 'independent_mission'),
    handle('h4', 'independent_mission', { id: MISSION, origin: ORIGIN }),
    item({ id: 'done', state: 'done' }),
  ];
  const t = propagationTargets({ id: MISSION, origin: ORIGIN }, items, () => true);
  const by = Object.fromEntries(t.map((x) => [x.item.id, [x.action, x.reason]]));
  assert.deepEqual(by, {
    q1: ['stop', 'mission_not_active'],
    'q1-child': ['stop', 'parent_mission_not_active'],
    h1: ['stop', 'parent_mission_not_active'],
    h2: ['stop', 'parent_mission_not_active'],
    h3: ['continue', 'independent_mission_active'],
    h4: ['stop', 'parent_mission_not_active'],
  });
  const none = propagationTargets({ id: MISSION, origin: ORIGIN }, items, () => false);
  assert.equal(none.find((x) => x.item.id === 'h3')?.action, 'stop');
  const s = decideStop(items[3]!, 'terminate', 'parent_mission_not_active', a(revoked), T0);
  assert.ok(
    s !== undefined && s.evidence.eventType === 'subagent_stopped' && s.evidence.actor === 'agent_h2',
  );
});

test('property: no dispatch from a non-active, unknown or stale view; continue only when assessed active', () => {
  const stateArb = fc.oneof(
    fc.constantFrom('active', 'revoked', 'suspended', 'expired', 'frozen'),
    fc.string(),
  );
  fc.assert(
    fc.property(
      stateArb,
      fc.integer({ min: 0, max: 2_000_000 }),
      fc.constantFrom(...(['non_consequential', 'consequential_write', 'irreversible'] as const)),
      fc.constantFrom(...(['queued', 'paused'] as const)),
      (state, dt, cls, st) => {
        const c = applyStatus(emptyView(ORIGIN, MISSION, T0), verifiedStatus(state, T0), T0);
        assert.ok(c.applied);
        const as = assess(c.view, undefined, cls, T0 + dt, DEFAULT_BOUNDS);
        const d = decideCheck({
          item: item({ state: st, actionClass: cls }),
          assessment: as,
          matrix: m,
          now: T0 + dt,
          inFlight: false,
          mode: 'dispatch',
        });
        if (d.kind === 'continue') {
          assert.equal(state, 'active');
          assert.equal(as.verdict, 'active');
        } else {
          assert.notEqual(d.kind === 'stop' ? d.item.state : 'refused', 'running');
        }
      },
    ),
    { numRuns: 500 },
  );
});

test('property HAR-28: concurrent dispatch/resume/stop on one version ⇒ exactly one CAS winner; never running after a committed stop', () => {
  type Cmd = 'dispatch' | 'stop' | 'requeue';
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom<Cmd>('dispatch', 'stop', 'requeue'), fc.nat(3)), {
        minLength: 2,
        maxLength: 40,
      }),
      (cmds) => {
        let row = item();
        let stopped = false;
        // Each round: every command decided against the same read version; only the first write wins.
        for (let i = 0; i < cmds.length; i += 4) {
          const round = cmds.slice(i, i + 4);
          const read = row;
          let winners = 0;
          for (const [cmd] of round) {
            const next: WorkItemRecord | undefined =
              cmd === 'dispatch'
                ? (() => {
                    const d = check(read, stopped ? a(revoked) : a());
                    return d.kind === 'refused' ? undefined : d.item;
                  })()
                : cmd === 'stop'
                  ? decideStop(read, 'suppress', 'operator_stop', a(), T0)?.item
                  : (() => {
                      const r = decideRequeue(read, stopped ? 'revoked' : 'active', T0);
                      return isRefusal(r) ? undefined : r;
                    })();
            if (next === undefined) continue;
            if (row.version === read.version) {
              row = next;
              winners++;
              if (cmd === 'stop') stopped = true;
            }
          }
          assert.ok(winners <= 1);
          if (stopped) assert.notEqual(row.state, 'running');
        }
      },
    ),
    { numRuns: 300 },
  );
});
