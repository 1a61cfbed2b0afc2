/**
 * The reconciler revisits unresolved occurrences through their pinned status sources and NEVER
 * enters a provider: the sandbox's effect ledger and the entry counts are the same before and
 * after (AOC-REQ-007, -009, -010). Backoff is exponential and bounded; progress is reported.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatonError, isBatonError } from '../../src/core/errors.js';
import type { OccurrenceView, ProviderProfile } from '../../src/occurrences/index.js';
import {
  backoffMs,
  lineageLister,
  reconcileOccurrence,
  Reconciler,
  StatusSources,
  type ReconcileProgress,
  type SourceReading,
} from '../../src/providers/index.js';
import { allUnresolvedLister } from '../../src/cli/reconcile-wiring.js';
import { createOcc, entries, openWorld, pay, type World } from './world.js';

test('one lineage: resolves what an authentic source answers, keeps the rest unresolved, enters nothing', async (t) => {
  const w = await openWorld(t, { sources: { pageSize: 10 } });
  const lost = await pay(w, 'inv-a', ['drop_response_after_apply']);
  const failed = await pay(w, 'inv-b', ['fail_terminal', 'drop_response_after_apply']);
  const neverSent = await createOcc(w, 'inv-c');
  await w.svc.enter({ credential: w.credential, occurrenceId: neverSent.id });
  const effectsBefore = w.sandbox.effects().length;
  const authorityBefore = await w.svc.getAuthority('payouts');
  const sleeps: number[] = [];
  const progress: ReconcileProgress[] = [];
  const report = await new Reconciler({
    service: w.svc,
    sources: w.sources,
    list: lineageLister(w.svc, 'invoice-agent'),
    maxPasses: 3,
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
    onProgress: (p) => progress.push(p),
  }).run();
  assert.equal(report.passes, 3);
  assert.deepEqual(sleeps, [250, 500], 'exponential backoff between passes');
  assert.deepEqual(report.resolved, [lost.ticket.occurrence.id]);
  assert.deepEqual([...report.unresolved].sort(), [failed.ticket.occurrence.id, neverSent.id].sort());
  // never sent: by-key and listing answer "not found" on each of 3 passes; failed: one effective answer per pass
  assert.equal(report.byReason['not_found'], 6);
  assert.equal(report.byReason['effective'], 1 + 3);
  assert.equal(progress.length, report.observations);
  assert.equal(w.sandbox.effects().length, effectsBefore, 'the reconciler applied no effect');
  for (const id of [lost.ticket.occurrence.id, failed.ticket.occurrence.id, neverSent.id]) {
    assert.equal(await entries(w, id), 1, 'no new entry');
  }
  assert.deepEqual(await w.svc.getAuthority('payouts'), authorityBefore, 'authority untouched');
});

test('all lineages through the store wiring; an unsigned provider leaves everything unresolved as `unauthenticated`', async (t) => {
  const w = await openWorld(t);
  const first = await pay(w, 'inv-1', ['drop_response_after_apply']);
  w.credential = (await w.svc.takeover({ lineage: 'second-agent' })).credential;
  const second = await pay(w, 'inv-2', ['drop_response_after_apply']);
  w.sandbox.addFault('all', 'unsigned');
  const report = await new Reconciler({
    service: w.svc,
    sources: w.sources,
    list: allUnresolvedLister(w.engine),
    maxPasses: 1,
  }).run();
  assert.equal(report.visited, 2);
  assert.deepEqual(Object.keys(report.byReason), ['unauthenticated']);
  assert.equal(report.unresolved.length, 2);
  for (const p of [first, second]) assert.equal(w.sandbox.effectCount(p.key), 1);
});

test('backoff is bounded', () => {
  const delays = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((n) => backoffMs(n, 250, 8000));
  assert.deepEqual(delays, [250, 500, 1000, 2000, 4000, 8000, 8000, 8000, 8000, 8000]);
});

/**
 * The real status-source layer, except that asking about one occurrence throws. A fake, because
 * the real sandbox cannot make a query throw (every transport or answer failure comes back as an
 * `unavailable` reading); the layer itself throws for a profile that is not the pinned one.
 */
class FailingFor extends StatusSources {
  constructor(
    w: World,
    readonly occurrenceId: string,
  ) {
    super({ keys: w.keys, clock: w.clock });
  }

  override query(profile: ProviderProfile, o: OccurrenceView, sourceId: string): Promise<SourceReading> {
    if (o.id !== this.occurrenceId) return super.query(profile, o, sourceId);
    return Promise.reject(new BatonError('provider_binding_conflict', 'not the pinned profile'));
  }
}

test('one occurrence that cannot be asked is counted as `error`; the others are still reconciled', async (t) => {
  const w = await openWorld(t);
  const ids: string[] = [];
  for (const invoice of ['inv-e1', 'inv-e2', 'inv-e3'])
    ids.push((await pay(w, invoice, ['drop_response_after_apply'])).ticket.occurrence.id);
  const [first, broken = '', last] = ids;
  const errors: [string, string][] = [];
  const report = await new Reconciler({
    service: w.svc,
    sources: new FailingFor(w, broken),
    list: lineageLister(w.svc, 'invoice-agent'),
    maxPasses: 1,
    onError: (e, id) => errors.push([id, isBatonError(e) ? e.code : String(e)]),
  }).run();
  assert.deepEqual(errors, [[broken, 'provider_binding_conflict']]);
  assert.equal(report.visited, 3);
  assert.deepEqual([...report.resolved].sort(), [first, last].sort(), 'the ones after it were visited too');
  assert.deepEqual(report.unresolved, [broken], 'never counted as resolved');
  assert.deepEqual(report.byReason, { effective: 2, error: 1 });
  assert.equal(report.observations, 2, 'an error is not an observation');
  assert.equal((await w.svc.getOccurrence(broken)).occurrence.unresolved, true);
  // Asked about by name (the reconcile route, executor.reconcile), the failure is the answer.
  await assert.rejects(reconcileOccurrence(w.svc, new FailingFor(w, broken), broken), (e: unknown) =>
    isBatonError(e, 'provider_binding_conflict'),
  );
});
