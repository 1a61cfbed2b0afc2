/**
 * What a stop propagates (A3.7), on both engines: only a Mission that is itself non-active stops
 * its other work — never one binding's `authority_hash` mismatch (A3.2 step 7, "not active for
 * that binding"), at dispatch or at provider entry; a `mission_expiry` passed while the view still
 * reads `active` propagates on the `expired` row, reported `expired` (A2.8: never pause). And a
 * `suspended` view past its bound is refreshed at dispatch like a stale one (A3.1 step 3), so a
 * resume at the issuer is learned; a terminal one is never refreshed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatonError } from '../../src/core/errors.js';
import {
  ACTION_CLASSES,
  DEFAULT_MATRIX,
  pin,
  verifyHarnessEvidence,
  type StopMatrix,
  type WorkItemRecord,
} from '../../src/missions/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { createInput } from '../occurrences/helpers.js';
import { MISSION, ORIGIN, T0, binding, code, verifiedSignal, verifiedStatus } from './fixtures.js';
import { world, type World } from './world.js';

const engines = await enginesUnderTest();

const H1 = `sha-256:${'A'.repeat(43)}`;
const H2 = `sha-256:${'B'.repeat(43)}`;
const BOGUS = `sha-256:${'Z'.repeat(43)}`;

/** revoked/expired/completed/cascaded → terminate for every class. */
function strictMatrix() {
  const rows = { ...DEFAULT_MATRIX.matrix.rows } as Record<string, unknown>;
  for (const r of ['revoked', 'expired', 'completed', 'cascaded'])
    rows[r] = Object.fromEntries(ACTION_CLASSES.map((c) => [c, 'terminate']));
  return pin({ ...DEFAULT_MATRIX.matrix, id: 'strict', rows } as unknown as StopMatrix);
}

async function item(
  w: World,
  lineage: string,
  key: string,
  over: Record<string, unknown> = {},
): Promise<WorkItemRecord> {
  return w.harness.createItem(
    {
      kind: 'queue_item',
      action_class: 'consequential_write',
      lineage,
      mission_binding: binding,
      idempotency_key: key,
      ...over,
    },
    'executor',
  );
}

/** A running item of `lineage` with a reserved governed occurrence. */
async function runningWithOccurrence(
  w: World,
  lineage: string,
  key: string,
  over: Record<string, unknown> = {},
) {
  const g = await w.occurrences.takeover({ lineage });
  const it = await item(w, lineage, key, over);
  await w.harness.dispatch(it.id, 'executor', g.generation);
  const created = await w.occurrences.create({ ...createInput(g.credential, key), workItemId: it.id });
  return { g, item: it, occurrence: created.occurrence };
}

async function evidenceOf(w: World, itemId: string) {
  const events = await w.harness.events(`work:${itemId}`);
  return Promise.all(
    events
      .filter((x) => x.type === 'harness_evidence')
      .map((x) => verifyHarnessEvidence(x.body, w.publicKey)),
  );
}

const stateOf = async (w: World, id: string) => (await w.harness.getItem(id)).state;

for (const e of engines) {
  test(`[${e.name}] A3.2 step 7 a dispatch whose binding hash differs stops that item alone: the active Mission's other lineages keep running, nothing flagged`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedStatus(verifiedStatus('active', T0, { authorityHash: H1 }));
    const bound = { mission_binding: { ...binding, authority_hash: H1 } };
    const a = await runningWithOccurrence(w, 'lin-a', 'a1', bound);
    const queued = await item(w, 'lin-a', 'a2', bound);
    const gb = await w.occurrences.takeover({ lineage: 'lin-b' });
    const bad = await item(w, 'lin-b', 'b1', { mission_binding: { ...binding, authority_hash: BOGUS } });
    assert.equal(await code(w.harness.dispatch(bad.id, 'executor', gb.generation)), 'mission_not_active');
    const [own] = await evidenceOf(w, bad.id);
    assert.deepEqual(
      [own?.state, own?.decision, own?.reason],
      ['active', 'pause', 'authority_hash_mismatch'],
    );
    assert.equal(await stateOf(w, bad.id), 'paused');
    // The other lineage's items are untouched: no transition, no evidence, no cache flag.
    assert.equal(await stateOf(w, a.item.id), 'running');
    assert.equal(await stateOf(w, queued.id), 'queued');
    assert.deepEqual(
      (await evidenceOf(w, a.item.id)).map((x) => x.decision),
      ['continue'],
    );
    assert.deepEqual(await evidenceOf(w, queued.id), []);
    assert.deepEqual(await w.harness.cacheFlags(ORIGIN, MISSION), []);
    assert.equal((await w.occurrences.getOccurrence(a.occurrence.id)).occurrence.phase, 'reserved');
    const d = await w.harness.dispatch(queued.id, 'executor', a.g.generation);
    assert.equal(d.item.state, 'running');
  });

  test(`[${e.name}] A3.2 step 7 A3.6 an entry whose binding carries the hash from before a narrow stops its own item only`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedStatus(verifiedStatus('active', T0, { authorityHash: H1 }));
    const old = await runningWithOccurrence(w, 'lin-a', 'a1', {
      mission_binding: { ...binding, authority_hash: H1 },
    });
    // The issuer narrows the Mission: a newer Status answer with another authority_hash.
    w.clock.advance(2000);
    await w.harness.applyVerifiedStatus(verifiedStatus('active', T0 + 2000, { authorityHash: H2 }));
    const now = { mission_binding: { ...binding, authority_hash: H2 } };
    const b = await runningWithOccurrence(w, 'lin-b', 'b1', now);
    const queued = await item(w, 'lin-b', 'b2', now);
    assert.equal(
      await code(w.occurrences.enter({ credential: old.g.credential, occurrenceId: old.occurrence.id })),
      'mission_not_active',
    );
    const [own] = (await evidenceOf(w, old.item.id)).slice(-1);
    assert.deepEqual([own?.state, own?.reason], ['active', 'authority_hash_mismatch']);
    assert.equal(await stateOf(w, b.item.id), 'running');
    assert.equal(await stateOf(w, queued.id), 'queued');
    assert.deepEqual(await evidenceOf(w, queued.id), []);
    assert.deepEqual(await w.harness.cacheFlags(ORIGIN, MISSION), []);
    const ticket = await w.occurrences.enter({ credential: b.g.credential, occurrenceId: b.occurrence.id });
    assert.equal(ticket.occurrence.phase, 'entered');
  });

  test(`[${e.name}] A2.8 A3.7 a mission_expiry passed under an active view stops the other items on the expired row: terminate releases, evidence reads expired`, async (t) => {
    const w = await world(t, e);
    await w.harness.registerMatrix(strictMatrix());
    await w.harness.applyVerifiedStatus(
      verifiedStatus('active', T0, { missionExpiry: '2026-11-02T08:00:05Z' }),
    );
    const strict = { mission_binding: { ...binding, stop_policy: 'strict@1' } };
    const r = await runningWithOccurrence(w, 'lin-a', 'r1', strict);
    const q = await item(w, 'lin-a', 'q1', strict);
    const c = await item(w, 'lin-a', 'c1', strict);
    w.clock.advance(6000);
    assert.equal(await code(w.harness.dispatch(c.id, 'executor', r.g.generation)), 'mission_not_active');
    for (const id of [c.id, r.item.id, q.id]) {
      assert.equal(await stateOf(w, id), 'terminated', id);
      const [last] = (await evidenceOf(w, id)).slice(-1);
      assert.deepEqual(
        [last?.state, last?.decision, last?.reason],
        ['expired', 'terminate', 'mission_not_active'],
        id,
      );
    }
    assert.equal((await w.occurrences.getOccurrence(r.occurrence.id)).occurrence.phase, 'released');
    assert.equal((await w.occurrences.getAuthority('payouts')).reserved, 0);
    assert.deepEqual(
      (await w.harness.cacheFlags(ORIGIN, MISSION)).map((f) => f.reason),
      ['mission_not_active'],
    );
  });

  test(`[${e.name}] A2.8 a mission_expiry passed under an active view never pauses the other items (default matrix: suppress)`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedStatus(
      verifiedStatus('active', T0, { missionExpiry: '2026-11-02T08:00:05Z' }),
    );
    const q = await item(w, 'lin-a', 'q1');
    const c = await item(w, 'lin-a', 'c1');
    w.clock.advance(6000);
    assert.equal(await code(w.harness.dispatch(c.id, 'executor')), 'mission_not_active');
    assert.equal(await stateOf(w, q.id), 'suppressed');
    const [last] = await evidenceOf(w, q.id);
    assert.deepEqual(
      [last?.state, last?.decision, last?.reason],
      ['expired', 'suppress', 'mission_not_active'],
    );
  });

  test(`[${e.name}] A3.1 step 3 a suspended view past its bound is refreshed at dispatch, so a resume is learned; a terminal one never is`, async (t) => {
    let answer = 'suspended';
    let fetches = 0;
    const w = await world(t, e, {
      fetchStatus: (origin, id) => {
        fetches++;
        if (answer === 'down') return Promise.reject(new BatonError('mission_status_unavailable', 'down'));
        return Promise.resolve(verifiedStatus(answer, w.clock.wallMs(), { origin, missionId: id }));
      },
    });
    const it = await item(w, 'lin-a', 'a1');
    const later = await item(w, 'lin-a', 'a2');
    // Nothing known: the dispatch fetches Status, which says suspended.
    assert.equal(await code(w.harness.dispatch(it.id, 'executor')), 'mission_not_active');
    assert.equal(fetches, 1);
    assert.equal(await stateOf(w, it.id), 'paused');
    // The issuer resumes. Within the suspended answer's bound nothing is fetched again.
    answer = 'active';
    w.clock.advance(1000);
    assert.equal(await code(w.harness.dispatch(it.id, 'executor')), 'mission_not_active');
    assert.equal(fetches, 1);
    // Past the bound the dispatch asks Status again and the work resumes by itself.
    w.clock.advance(61_000);
    const d = await w.harness.dispatch(it.id, 'executor');
    assert.equal(d.item.state, 'running');
    assert.equal(fetches, 2);
    // Suspended by a pushed SET: relied on for the class bound from its arrival, then asked again.
    await w.harness.applyVerifiedSignal(verifiedSignal('suspended', 1, w.clock.wallMs()));
    assert.equal(await stateOf(w, later.id), 'paused');
    w.clock.advance(1000);
    assert.equal(await code(w.harness.dispatch(later.id, 'executor')), 'mission_not_active');
    assert.equal(fetches, 2);
    w.clock.advance(61_000);
    assert.equal((await w.harness.dispatch(later.id, 'executor')).item.state, 'running');
    assert.equal(fetches, 3);
    // A terminal state is final: past every bound no dispatch asks Status again.
    await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, w.clock.wallMs()));
    w.clock.advance(120_000);
    assert.equal(await code(w.harness.dispatch(later.id, 'executor')), 'work_item_not_dispatchable');
    assert.equal(fetches, 3);
    assert.equal((await w.harness.getView(ORIGIN, MISSION))?.state, 'revoked');
  });
}
