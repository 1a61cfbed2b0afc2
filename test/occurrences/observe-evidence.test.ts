/**
 * Authenticated answers that must be kept as evidence yet move nothing, on both store engines
 * (AOC-REQ-004, AOC-CASE-007, AOC-CASE-009):
 * - an answer naming a provider reference already bound to ANOTHER occurrence is recorded as
 *   `binding_mismatch` (it used to be refused `provider_binding_conflict` with nothing recorded,
 *   so the occurrence could never be reconciled and a webhook's id was never remembered);
 * - an answer arriving while the occurrence is in conflict picks no side and is not `effective`;
 * - one answer holding several matching items that disagree puts the occurrence in conflict,
 *   whatever their order, and keeps every item's facts.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { OccurrencesService } from '../../src/occurrences/index.js';
import { verifyEvidence } from '../../src/store/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { createInput, observation, serviceOn, T0 } from './helpers.js';

const engines = await enginesUnderTest();

async function prepared(t: TestContext, name: string) {
  const e = engines.find((x) => x.name === name);
  assert.ok(e !== undefined);
  const { store, svc, g } = await serviceOn(t, e, 100_000);
  const entered = async (key: string) => {
    const created = await svc.create(createInput(g.credential, key));
    return svc.enter({ credential: g.credential, occurrenceId: created.occurrence.id });
  };
  return { store, svc, entered };
}

interface Observed {
  readonly type: string;
  readonly body: {
    readonly observation?: Record<string, unknown>;
    readonly interpretation?: Record<string, unknown>;
  };
}

async function observations(svc: OccurrencesService, id: string): Promise<Observed[]> {
  const { evidence } = await svc.getOccurrence(id);
  return (evidence as unknown as Observed[]).filter((e) => e.type === 'observation_recorded');
}

for (const e of engines) {
  test(`[${e.name}] an authenticated answer naming a reference bound to another occurrence is kept as binding_mismatch and moves neither`, async (t) => {
    const { store, svc, entered } = await prepared(t, e.name);
    const a = await entered('inv-a');
    const b = await entered('inv-b');
    const first = await svc.observe(
      observation(a, 'succeeded', T0, { response: { id: 'pay_taken0001', status: 'succeeded' } }),
    );
    assert.equal(first.occurrence.provider.providerReference, 'pay_taken0001');
    const aBefore = await svc.getOccurrence(a.occurrence.id);
    // B's own native key, but the reference A holds: never bound twice, never refused unrecorded.
    const r = await svc.observe(
      observation(b, 'succeeded', T0, { response: { id: 'pay_taken0001', status: 'succeeded' } }),
    );
    assert.equal(r.effective, false);
    assert.equal(r.missingKnowledge, 'binding_mismatch');
    assert.equal(r.changed, false);
    assert.deepEqual(
      [r.occurrence.phase, r.occurrence.outcome, r.occurrence.effect, r.occurrence.conflict],
      ['entered', 'unknown', 'unresolved', false],
    );
    assert.equal(r.occurrence.provider.providerReference, null);
    const kept = (await observations(svc, b.occurrence.id)).at(-1);
    assert.equal(kept?.body.interpretation?.['missingKnowledge'], 'binding_mismatch');
    assert.equal(kept?.body.interpretation?.['effective'], false);
    assert.equal(kept?.body.interpretation?.['referenceBoundElsewhere'], 'pay_taken0001');
    const bAfter = await svc.getOccurrence(b.occurrence.id);
    assert.equal(
      bAfter.evidence.some((x) => x.type === 'provider_reference_bound'),
      false,
      'nothing bound',
    );
    assert.deepEqual(await svc.getOccurrence(a.occurrence.id), aBefore, 'the other occurrence is untouched');
    // Its own reference still resolves it: the mismatch left it reconcilable.
    const own = await svc.observe(
      observation(b, 'succeeded', T0, { response: { id: 'pay_own000002', status: 'succeeded' } }),
    );
    assert.equal(own.effective, true);
    assert.deepEqual(
      [own.occurrence.phase, own.occurrence.provider.providerReference],
      ['resolved', 'pay_own000002'],
    );
    assert.equal((await verifyEvidence(store.engine)).ok, true);
  });

  test(`[${e.name}] during a conflict a later authenticated answer is kept, picks no side and is not effective`, async (t) => {
    const { svc, entered } = await prepared(t, e.name);
    const a = await entered('inv-c');
    const response = (status: string) => ({ response: { id: 'pay_conflict01', status } });
    const ok = await svc.observe(observation(a, 'succeeded', T0, response('succeeded')));
    assert.equal(ok.effective, true);
    const contra = await svc.observe(observation(a, 'failed', T0, response('failed')));
    assert.deepEqual([contra.effective, contra.missingKnowledge, contra.changed], [false, 'conflict', true]);
    const again = await svc.observe(observation(a, 'succeeded', T0, response('succeeded')));
    assert.deepEqual([again.effective, again.missingKnowledge, again.changed], [false, 'conflict', false]);
    assert.equal(again.interpretation, 'success', 'the profile’s reading is still recorded');
    assert.deepEqual(
      [again.occurrence.phase, again.occurrence.outcome, again.occurrence.conflict],
      ['entered', 'unknown', true],
    );
    const kept = (await observations(svc, a.occurrence.id)).at(-1);
    assert.equal(kept?.body.interpretation?.['effective'], false);
    assert.equal(kept?.body.interpretation?.['missingKnowledge'], 'conflict');
  });

  test(`[${e.name}] one answer whose items disagree is a conflict whatever their order; agreeing items take the furthest reading`, async (t) => {
    const { svc, entered } = await prepared(t, e.name);
    const item = (
      ticket: Awaited<ReturnType<typeof entered>>,
      status: string,
      ref: string,
    ): { nativeStatus: string; carried: Record<string, string> } => ({
      nativeStatus: status,
      carried: {
        account: 'acct_sandbox_001',
        environment: 'sandbox',
        nativeKey: ticket.nativeKey!,
        providerReference: ref,
      },
    });
    const answer = (
      ticket: Awaited<ReturnType<typeof entered>>,
      [first, ...rest]: { nativeStatus: string; carried: Record<string, string> }[],
    ) =>
      observation(ticket, first!.nativeStatus, T0, {
        source: 'listing',
        carried: first!.carried,
        alsoMatched: rest,
      });
    for (const [n, order] of [
      ['a', ['succeeded', 'failed']],
      ['b', ['failed', 'succeeded']],
    ] as const) {
      const x = await entered(`inv-two-${n}`);
      const items = order.map((st) => item(x, st, st === 'succeeded' ? 'pay_bbbb0001' : 'pay_aaaa0001'));
      const r = await svc.observe(answer(x, items));
      assert.deepEqual([r.effective, r.missingKnowledge, r.changed], [false, 'conflict', true], order.join());
      assert.deepEqual(
        [r.occurrence.phase, r.occurrence.outcome, r.occurrence.effect, r.occurrence.conflict],
        ['entered', 'unknown', 'unresolved', true],
      );
      assert.equal(r.occurrence.provider.providerReference, null, 'neither reference is bound');
      const kept = (await observations(svc, x.occurrence.id)).at(-1);
      assert.equal(kept?.body.interpretation?.['conflictingItems'], true);
      assert.deepEqual(
        (kept?.body.observation?.['alsoMatched'] as { nativeStatus: string }[]).map((m) => m.nativeStatus),
        [order[1]],
        'every matching item is kept',
      );
    }
    // The same reference, a succeeded and a failed reading: contradicting statuses are a conflict too.
    const y = await entered('inv-same-ref');
    const same = await svc.observe(
      answer(y, [item(y, 'failed', 'pay_cccc0001'), item(y, 'succeeded', 'pay_cccc0001')]),
    );
    assert.deepEqual([same.missingKnowledge, same.occurrence.conflict], ['conflict', true]);
    // Agreeing items (pending, then succeeded, of one payment) in either order: success.
    for (const [n, order] of [
      ['c', ['pending', 'succeeded']],
      ['d', ['succeeded', 'pending']],
    ] as const) {
      const z = await entered(`inv-agree-${n}`);
      const r = await svc.observe(
        answer(
          z,
          order.map((st) => item(z, st, 'pay_dddd0001'.replace('d', n))),
        ),
      );
      assert.deepEqual(
        [r.effective, r.occurrence.outcome, r.occurrence.phase, r.occurrence.conflict],
        [true, 'success', 'resolved', false],
        order.join(),
      );
      const kept = (await observations(svc, z.occurrence.id)).at(-1);
      assert.equal(kept?.body.interpretation?.['nativeStatus'], 'succeeded');
    }
    // Once a reference is bound, an item about another one (a later event of another request) is
    // not about this attempt: ignored, as it would be alone (binding_mismatch), in either order.
    for (const n of ['e', 'f']) {
      const b = await entered(`inv-bound-${n}`);
      const ref = `pay_${n}eee0001`;
      await svc.observe(observation(b, 'pending', T0, { response: { id: ref, status: 'pending' } }));
      const items = [item(b, 'failed', `pay_${n}fff0001`), item(b, 'succeeded', ref)];
      const r = await svc.observe(answer(b, n === 'e' ? items : items.reverse()));
      assert.deepEqual([r.effective, r.occurrence.outcome, r.occurrence.conflict], [true, 'success', false]);
    }
  });
}
