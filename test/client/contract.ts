/**
 * The BatonClient contract: the SAME assertions for every implementation (in-process, HTTP).
 * Each case gets its own sandbox provider and SQLite file; `open` builds the client under test over
 * that file. The perform cases live in contract-perform.ts.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { BatonClient } from '../../src/client/index.js';
import { isBatonError } from '../../src/core/errors.js';
import { performCases } from './contract-perform.js';
import {
  CountingAdapter,
  openStore,
  payments,
  reconcileByKey,
  startSandbox,
  type MakeEnv,
  type Provider,
  type Store,
} from './support.js';

/**
 * Build the client under test over `store`; its status sources (the server's, or the in-process
 * client's) hold `provider.keys`, as a deployment holds the provider's verification keys.
 */
export type OpenClient = (t: TestContext, store: Store, provider: Provider) => Promise<BatonClient>;

export async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(isBatonError(e), `expected a BatonError ${code}, got ${String(e)}`);
    assert.equal(e.code, code, `expected ${code}, got ${e.code}: ${e.message}`);
    return true;
  });
}

export function runContract(label: string, open: OpenClient): void {
  const env: MakeEnv = async (t, options = {}) => {
    const provider = await startSandbox(t);
    const store = await openStore(t, provider, options.total);
    const client = await open(t, store, provider);
    return { sandbox: provider.sandbox, provider, op: payments(provider), store, client };
  };
  lifecycleCases(label, env);
  fencingCases(label, env);
  performCases(label, env);
}

function lifecycleCases(label: string, env: MakeEnv): void {
  test(`${label}: create → enter → acknowledge → resolved, with evidence and counts`, async (t) => {
    const { client, sandbox, provider, store, op } = await env(t);
    const ex = await client.takeover('invoice-agent');
    assert.equal(ex.generation, 1);
    assert.deepEqual(ex.handover, { reserved: [], unresolved: [] });
    const operation = op('k-life');
    const c = await ex.create(operation);
    assert.equal(c.created, true);
    assert.equal(c.occurrence.phase, 'reserved');
    const ticket = await ex.enter(c.occurrence.id);
    assert.equal(ticket.occurrence.phase, 'entered');
    assert.deepEqual(ticket.request, operation.request);
    assert.equal(ticket.requestDigest, c.occurrence.provider.requestDigest);
    assert.equal(ticket.nativeKeyHeader, 'Idempotency-Key');
    assert.deepEqual(
      (await client.listUnresolved('invoice-agent')).map((o) => o.id),
      [c.occurrence.id],
    );
    const sent = await new CountingAdapter(provider).send(ticket);
    const recorded = await ex.acknowledge(sent.acknowledgement);
    assert.deepEqual([recorded.effective, recorded.missingKnowledge], [false, 'unauthenticated']);
    assert.equal(recorded.occurrence.phase, 'entered', "an executor's report never resolves");
    const trusted = await reconcileByKey(store, c.occurrence.id, provider);
    assert.equal(trusted.effective, true);
    const detail = await client.getOccurrence(c.occurrence.id);
    assert.equal(detail.occurrence.phase, 'resolved');
    assert.match(detail.occurrence.provider.providerReference ?? '', /^pay_/);
    assert.equal(detail.evidence.filter((e) => e.type === 'provider_entered').length, 1);
    assert.ok(detail.evidence.length >= 4, 'created, entered, acknowledged, observed');
    const counts = await client.counts();
    assert.equal(counts.total, 1);
    assert.equal(counts.byPhase.resolved, 1);
    assert.equal(counts.unresolved, 0);
    assert.equal(sandbox.effectCount(ticket.nativeKey ?? ''), 1);
  });

  test(`${label}: release, reissue and remedy mint linked occurrences`, async (t) => {
    const { client, op } = await env(t);
    const ex = await client.takeover('invoice-agent');
    const first = (await ex.create(op('k-rel'))).occurrence;
    const released = await ex.release(first.id, first.provider.requestDigest);
    assert.equal(released.phase, 'released');
    const again = await ex.create(op('k-rel'));
    assert.equal(again.created, false, 'the tombstone answers its creation binding');
    assert.equal(again.occurrence.phase, 'released');
    const reissued = await ex.reissue({ occurrenceId: first.id, creationKey: 'k-rel-2' });
    assert.equal(reissued.created, true);
    assert.equal(reissued.occurrence.reissueOf, first.id);
    assert.notEqual(reissued.occurrence.id, first.id);
    await ex.enter(reissued.occurrence.id);
    // AOC-REQ-008: one tombstone, one successor. The same key replays it; another key, or another
    // generation, never mints a second (the first may already have been sent), and names it.
    const replayed = await ex.reissue({ occurrenceId: first.id, creationKey: 'k-rel-2' });
    assert.deepEqual([replayed.created, replayed.occurrence.id], [false, reissued.occurrence.id]);
    const later = await client.takeover('invoice-agent');
    const before = (await client.getOccurrence(first.id)).evidence.length;
    await assert.rejects(later.reissue({ occurrenceId: first.id, creationKey: 'k-rel-3' }), (e: unknown) => {
      assert.ok(isBatonError(e), String(e));
      assert.deepEqual([e.code, e.details['successor']], ['reissue_invalid', reissued.occurrence.id]);
      return true;
    });
    assert.equal(
      (await client.getOccurrence(first.id)).evidence.length,
      before,
      'the refusal appended nothing',
    );
    const remedy = await later.remedy({
      ...op('k-refund', 500),
      remedyOf: reissued.occurrence.id,
      kind: 'refund',
    });
    assert.equal(remedy.occurrence.remedyOf, reissued.occurrence.id);
    assert.equal(remedy.occurrence.remedyKind, 'refund');
    const open = await client.listOpen('invoice-agent');
    assert.deepEqual(
      open.reserved.map((o) => o.id),
      [remedy.occurrence.id],
    );
    assert.deepEqual(
      open.unresolved.map((o) => o.id),
      [reissued.occurrence.id],
    );
  });

  test(`${label}: creation binding replay returns the original; another request conflicts`, async (t) => {
    const { client, op } = await env(t);
    const ex = await client.takeover('invoice-agent');
    const a = await ex.create(op('k-bind'));
    const b = await ex.create(op('k-bind'));
    assert.equal(b.created, false);
    assert.deepEqual(b.occurrence, a.occurrence);
    await ex.enter(a.occurrence.id);
    const c = await ex.create(op('k-bind'));
    assert.equal(c.occurrence.id, a.occurrence.id);
    assert.equal(c.occurrence.phase, 'entered');
    const successor = await client.takeover('invoice-agent');
    assert.equal((await successor.create(op('k-bind'))).occurrence.id, a.occurrence.id);
    await expectCode(successor.create(op('k-bind', 9_999)), 'creation_binding_conflict');
  });

  test(`${label}: findByCreationKey reads the lineage's occurrence under a key, creating nothing`, async (t) => {
    const { client, op } = await env(t);
    const ex = await client.takeover('invoice-agent');
    assert.equal(await ex.findByCreationKey('k-find'), null, 'none yet');
    assert.equal(await ex.findByCreationKey('k-find'), null, 'the read created nothing');
    const a = await ex.create(op('k-find'));
    await ex.enter(a.occurrence.id);
    const found = await ex.findByCreationKey('k-find');
    assert.deepEqual([found?.id, found?.phase], [a.occurrence.id, 'entered']);
    const other = await client.takeover('other-agent');
    assert.equal(await other.findByCreationKey('k-find'), null, "another lineage's is not seen");
  });

  test(`${label}: queries answer with the same codes`, async (t) => {
    const { client } = await env(t);
    await expectCode(client.getOccurrence('occ_missing'), 'occurrence_not_found');
    assert.deepEqual(await client.listUnresolved('nobody'), []);
    assert.equal((await client.counts()).total, 0);
  });
}

function fencingCases(label: string, env: MakeEnv): void {
  test(`${label}: a retired generation is refused everywhere; the successor inherits the work`, async (t) => {
    const { client, op } = await env(t);
    const old = await client.takeover('invoice-agent');
    const held = (await old.create(op('k-held'))).occurrence;
    const successor = await client.takeover('invoice-agent');
    assert.equal(successor.generation, old.generation + 1);
    assert.deepEqual(
      successor.handover.reserved.map((o) => o.id),
      [held.id],
    );
    await expectCode(old.create(op('k-new')), 'generation_retired');
    await expectCode(old.enter(held.id), 'generation_retired');
    await expectCode(old.release(held.id, held.provider.requestDigest), 'generation_retired');
    await expectCode(successor.enter(held.id), 'generation_mismatch');
    const released = await successor.release(held.id, held.provider.requestDigest);
    assert.equal(released.phase, 'released');
  });

  test(`${label}: an entered occurrence is never entered again, by anyone`, async (t) => {
    const { client, op } = await env(t);
    const ex = await client.takeover('invoice-agent');
    const o = (await ex.create(op('k-once'))).occurrence;
    await ex.enter(o.id);
    await expectCode(ex.enter(o.id), 'already_entered');
    const successor = await client.takeover('invoice-agent');
    assert.deepEqual(
      successor.handover.unresolved.map((u) => u.id),
      [o.id],
    );
    await expectCode(successor.enter(o.id), 'already_entered');
    const detail = await client.getOccurrence(o.id);
    assert.equal(detail.evidence.filter((e) => e.type === 'provider_entered').length, 1);
  });

  test(`${label}: another lineage's occurrence answers like a missing one`, async (t) => {
    const { client, provider, op } = await env(t);
    const owner = await client.takeover('invoice-agent');
    const o = (await owner.create(op('k-mine'))).occurrence;
    const ticket = await owner.enter(o.id);
    const before = (await client.getOccurrence(o.id)).evidence.length;
    const stranger = await client.takeover('refund-agent');
    await expectCode(stranger.enter(o.id), 'occurrence_not_found');
    await expectCode(stranger.release(o.id, o.provider.requestDigest), 'occurrence_not_found');
    await expectCode(
      stranger.reissue({ occurrenceId: o.id, creationKey: 'k-steal' }),
      'occurrence_not_found',
    );
    const { acknowledgement } = await new CountingAdapter(provider).send(ticket);
    await expectCode(stranger.acknowledge(acknowledgement), 'occurrence_not_found');
    await expectCode(stranger.enter('occ_missing'), 'occurrence_not_found');
    assert.equal((await client.getOccurrence(o.id)).evidence.length, before, 'the refusals appended nothing');
  });

  test(`${label}: a resumed executor acts with the binding; a retired one is refused`, async (t) => {
    const { client, op } = await env(t);
    const taken = await client.takeover('invoice-agent');
    const worker = client.resume(taken.binding());
    assert.deepEqual([worker.lineage, worker.generation], [taken.lineage, taken.generation]);
    const o = (await worker.create(op('k-resume'))).occurrence;
    assert.equal(o.capturedGeneration, taken.generation);
    await client.takeover('invoice-agent');
    await expectCode(worker.enter(o.id), 'generation_retired');
    await expectCode(worker.create(op('k-resume-2')), 'generation_retired');
    const forged = client.resume({ ...taken.binding(), credential: 'A'.repeat(43) });
    await expectCode(forged.create(op('k-forged')), 'unauthenticated');
  });
}
