/**
 * create-and-enter and acknowledge-and-observe (issue 16 §4) against the single steps they compose,
 * on both engines (SQLite always, PostgreSQL when test/support/postgres.ts finds a server): the same
 * evidence kinds in the same order, the same refusals, the same state. The two services run on one
 * store under different lineages, so each step's evidence can be compared event type by event type.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock.js';
import { generateEd25519KeyPair, publicKeyRaw } from '../../src/core/ed25519.js';
import { isBatonError } from '../../src/core/errors.js';
import { OccurrencesService, type OccurrenceView } from '../../src/occurrences/index.js';
import { migrate, occurrencesUnitOfWork } from '../../src/store/index.js';
import { enginesUnderTest } from '../store/engines.js';
import {
  acknowledgement,
  createInput,
  domainConfig,
  observation,
  paymentsProfile,
  SimulatedProvider,
  T0,
} from './helpers.js';

const engines = await enginesUnderTest();
const pair = generateEd25519KeyPair();
const domainKey = { kid: pair.kid, publicKey: publicKeyRaw(pair.publicKey).toString('base64url') };

async function prepared(t: TestContext, name: string, total = 100_000, limits = {}) {
  const e = engines.find((x) => x.name === name);
  assert.ok(e !== undefined);
  const store = await e.open(t);
  await migrate(store.engine);
  const clock = new ManualClock(T0);
  const svc = new OccurrencesService({ uow: occurrencesUnitOfWork(store.engine), domainKey, clock });
  await svc.configureDomain(domainConfig(limits) as never);
  await svc.registerProfile(paymentsProfile());
  await svc.createAuthority({ id: 'payouts', unit: 'EUR-cents', total });
  return { svc, clock };
}

async function refusal(p: Promise<unknown>): Promise<{ code: string; occurrenceId: unknown }> {
  try {
    await p;
  } catch (e) {
    assert.ok(isBatonError(e), String(e));
    return { code: e.code, occurrenceId: e.details['occurrenceId'] };
  }
  return { code: 'ok', occurrenceId: undefined };
}

/** Evidence types, and the state, without the ids and times that differ by construction. */
async function shape(svc: OccurrencesService, id: string) {
  const d = await svc.getOccurrence(id);
  const o: OccurrenceView = d.occurrence;
  return {
    types: d.evidence.map((e) => e.type),
    actors: d.evidence.map((e) => e.actor.replace(/executor:[a-z-]+#/, 'executor:#')),
    state: [o.phase, o.outcome, o.effect, o.unresolved, o.conflict],
  };
}

for (const e of engines) {
  test(`[${e.name}] create-and-enter + acknowledge-and-observe leave the evidence of the five single steps`, async (t) => {
    const { svc } = await prepared(t, e.name);
    const provider = new SimulatedProvider();
    const single = await svc.takeover({ lineage: 'single-agent' });
    const both = await svc.takeover({ lineage: 'both-agent' });

    const created = await svc.create(createInput(single.credential, 'k-1'));
    const ticket1 = await svc.enter({ credential: single.credential, occurrenceId: created.occurrence.id });
    const answer1 = provider.send(ticket1);
    await svc.recordAcknowledgement(
      { ...acknowledgement(ticket1, answer1, T0), authentication: { verified: false } },
      'executor:single-agent#1',
    );
    await svc.observe(observation(ticket1, 'succeeded', T0), undefined, 'executor:single-agent#1');

    const r = await svc.createAndEnter(createInput(both.credential, 'k-1'));
    assert.equal(r.created, true);
    assert.ok(r.ticket !== null);
    assert.equal(r.ticket.occurrence.phase, 'entered');
    assert.equal(r.occurrence.id, r.ticket.occurrence.id);
    assert.equal(r.ticket.request['amount'], ticket1.request['amount']);
    const answer2 = provider.send(r.ticket);
    const settled = await svc.acknowledgeAndObserve(
      { ...acknowledgement(r.ticket, answer2, T0), authentication: { verified: false } },
      [observation(r.ticket, 'succeeded', T0)],
      'executor:both-agent#1',
      'executor:both-agent#1',
    );
    assert.deepEqual(
      [settled.acknowledgement.effective, settled.acknowledgement.missingKnowledge],
      [false, 'unauthenticated'],
    );
    assert.deepEqual(
      settled.observations.map((o) => [o.effective, o.occurrence.phase]),
      [[true, 'resolved']],
    );
    assert.deepEqual(await shape(svc, r.occurrence.id), await shape(svc, created.occurrence.id));
    const types = (await shape(svc, r.occurrence.id)).types;
    assert.equal(types.filter((x) => x === 'observation_recorded').length, 2);
    // The authority moved the same way: two amounts consumed, nothing left reserved.
    const a = await svc.getAuthority('payouts');
    assert.deepEqual([a.reserved, a.consumed], [0, 2_000]);
  });

  test(`[${e.name}] create-and-enter replays like create: the original, never a second entry`, async (t) => {
    const { svc } = await prepared(t, e.name);
    const g = await svc.takeover({ lineage: 'invoice-agent' });
    const first = await svc.createAndEnter(createInput(g.credential, 'k-replay'));
    const again = await svc.createAndEnter(createInput(g.credential, 'k-replay'));
    assert.deepEqual(
      [again.created, again.ticket, again.occurrence.id, again.occurrence.phase],
      [false, null, first.occurrence.id, 'entered'],
    );
    const types = (await svc.getOccurrence(first.occurrence.id)).evidence.map((x) => x.type);
    assert.deepEqual(types, ['occurrence_created', 'provider_entered']);
    // A reserved original (created by the single step) is entered by the replay, exactly once.
    const held = await svc.create(createInput(g.credential, 'k-held'));
    const entered = await svc.createAndEnter(createInput(g.credential, 'k-held'));
    assert.deepEqual([entered.created, entered.ticket?.occurrence.id], [false, held.occurrence.id]);
    // Another request under the same key conflicts, as create's does, and changes nothing.
    const other = await refusal(svc.createAndEnter(createInput(g.credential, 'k-replay', 999)));
    const plain = await refusal(svc.create(createInput(g.credential, 'k-replay', 999)));
    assert.equal(other.code, plain.code);
    assert.notEqual(other.code, 'ok');
  });

  test(`[${e.name}] create-and-enter refuses what create then enter refuse, and keeps what they keep`, async (t) => {
    const { svc } = await prepared(t, e.name, 5_000);
    const g1 = await svc.takeover({ lineage: 'invoice-agent' });
    // Authority exhausted: create's refusal, nothing written.
    const big = await refusal(svc.createAndEnter(createInput(g1.credential, 'k-big', 50_000)));
    const bigPlain = await refusal(svc.create(createInput(g1.credential, 'k-big', 50_000)));
    assert.deepEqual([big.code, big.occurrenceId], [bigPlain.code, undefined]);
    assert.equal(big.code, 'authority_insufficient');
    // Stale generation: the predecessor's reservation cannot be entered by its successor.
    const pred = await svc.create(createInput(g1.credential, 'k-pred'));
    const g2 = await svc.takeover({ lineage: 'invoice-agent' });
    const stale = await refusal(svc.createAndEnter(createInput(g2.credential, 'k-pred')));
    const stalePlain = await refusal(
      svc.enter({ credential: g2.credential, occurrenceId: pred.occurrence.id }),
    );
    assert.deepEqual(stale, { code: stalePlain.code, occurrenceId: pred.occurrence.id });
    assert.equal(stale.code, 'generation_mismatch');
    // The retired generation itself: refused before anything, as by create.
    const retired = await refusal(svc.createAndEnter(createInput(g1.credential, 'k-late')));
    assert.deepEqual(retired, { code: 'generation_retired', occurrenceId: undefined });
    assert.deepEqual(
      (await svc.getOccurrence(pred.occurrence.id)).evidence.map((x) => x.type),
      ['occurrence_created'],
    );
    // Unknown expectations refuse before the transaction; a wrong one refuses the entry, keeping the create.
    const wrong = await refusal(
      svc.createAndEnter({ ...createInput(g2.credential, 'k-expect'), expect: { account: 'acct_other' } }),
    );
    const plainHeld = await svc.create(createInput(g2.credential, 'k-expect-plain'));
    const wrongPlain = await refusal(
      svc.enter({
        credential: g2.credential,
        occurrenceId: plainHeld.occurrence.id,
        expect: { account: 'acct_other' },
      }),
    );
    assert.equal(wrong.code, wrongPlain.code);
    assert.equal(wrong.code, 'provider_binding_conflict');
    assert.equal(typeof wrong.occurrenceId, 'string');
    const kept = await svc.getOccurrenceView(wrong.occurrenceId as string);
    assert.deepEqual([kept.phase, kept.capturedGeneration], ['reserved', 2]);
    const bad = await refusal(
      svc.createAndEnter({ ...createInput(g2.credential, 'k-bad'), expect: { nope: 'x' } } as never),
    );
    assert.equal(bad.code, 'input_invalid');
    assert.equal((await svc.listOpen('invoice-agent')).reserved.length, 3, 'k-pred and both k-expect only');
  });

  test(`[${e.name}] an in-flight limit refuses the entry of a replayed reservation, which stays reserved`, async (t) => {
    const { svc } = await prepared(t, e.name, 100_000, { maxInFlightPerLineage: 1 });
    const g = await svc.takeover({ lineage: 'invoice-agent' });
    const held = await svc.create(createInput(g.credential, 'k-b'));
    const heldPlain = await svc.create(createInput(g.credential, 'k-c'));
    await svc.createAndEnter(createInput(g.credential, 'k-a'));
    const second = await refusal(svc.createAndEnter(createInput(g.credential, 'k-b')));
    const plain = await refusal(
      svc.enter({ credential: g.credential, occurrenceId: heldPlain.occurrence.id }),
    );
    assert.deepEqual(second, { code: plain.code, occurrenceId: held.occurrence.id });
    assert.equal(second.code, 'limit_in_flight_exceeded');
    assert.equal((await svc.getOccurrenceView(held.occurrence.id)).phase, 'reserved');
  });

  test(`[${e.name}] acknowledge-and-observe refuses an observation of another occurrence and records nothing`, async (t) => {
    const { svc } = await prepared(t, e.name);
    const g = await svc.takeover({ lineage: 'invoice-agent' });
    const a = await svc.createAndEnter(createInput(g.credential, 'k-a'));
    const b = await svc.createAndEnter(createInput(g.credential, 'k-b'));
    assert.ok(a.ticket !== null && b.ticket !== null);
    const ack = { ...acknowledgement(a.ticket, { id: 'pay_1', status: 'succeeded' }, T0) };
    const r = await refusal(svc.acknowledgeAndObserve(ack, [observation(b.ticket, 'succeeded', T0)]));
    assert.equal(r.code, 'observation_invalid');
    for (const id of [a.occurrence.id, b.occurrence.id])
      assert.equal((await svc.getOccurrence(id)).evidence.length, 2, 'created and entered only');
  });
}
