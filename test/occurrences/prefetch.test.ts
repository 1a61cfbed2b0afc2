/**
 * Every refusal of create and enter gives the same answer, and changes nothing, on both engines —
 * on PostgreSQL through migration 012's `baton_lock_create` / `baton_lock_entry`, which load and
 * lock what those commands read in one call and stop where the service refuses (issue 16 §2,
 * docs/store.md "One round trip per transition"). The statements each command sends are counted
 * (test/support/counting-engine.ts): on PostgreSQL the reads are that one call.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock.js';
import { generateEd25519KeyPair, publicKeyRaw } from '../../src/core/ed25519.js';
import { OccurrencesService } from '../../src/occurrences/index.js';
import { randomIdSource, type IdSource } from '../../src/core/ids.js';
import { migrate, occurrencesUnitOfWork, verifyEvidence, type StoreEngine } from '../../src/store/index.js';
import { preferredStripe } from '../../src/store/occurrences-limits.js';
import { enginesUnderTest } from '../store/engines.js';
import { countingEngine, resetCounts } from '../support/counting-engine.js';
import { createInput, domainConfig, paymentsProfile, T0 } from './helpers.js';

const engines = await enginesUnderTest();
const pair = generateEd25519KeyPair();
const domainKey = { kid: pair.kid, publicKey: publicKeyRaw(pair.publicKey).toString('base64url') };

async function prepared(
  t: TestContext,
  name: string,
  limits: Partial<Record<string, number>> = {},
  ids?: IdSource,
) {
  const e = engines.find((x) => x.name === name);
  assert.ok(e !== undefined);
  const store = await e.open(t);
  const { engine, counts } = countingEngine(store.engine);
  await migrate(engine);
  const clock = new ManualClock(T0);
  const svc = new OccurrencesService({
    uow: occurrencesUnitOfWork(engine),
    domainKey,
    clock,
    ...(ids && { ids }),
  });
  await svc.configureDomain(domainConfig(limits) as never);
  await svc.registerProfile(paymentsProfile());
  await svc.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 100_000 });
  const state = async (): Promise<string> => {
    const c = await svc.counts();
    const a = await svc.getAuthority('payouts');
    const log = await verifyEvidence(engine);
    assert.equal(log.ok, true);
    return JSON.stringify([c, a.reserved, a.consumed, a.version, log.events]);
  };
  return { e, svc, counts, state, engine };
}

/** Ids handed out in order (then random ones): the test picks where each occurrence's count goes. */
function idsInOrder(...given: string[]): IdSource {
  const queue = [...given];
  return {
    id: (prefix) => (prefix === 'occ' ? queue.shift() : undefined) ?? randomIdSource.id(prefix),
    secret: () => randomIdSource.secret(),
  };
}

/** `count` occurrence ids whose counts go first to the same domain stripe. */
function sameStripeIds(count: number): string[] {
  const ids = ['occ_warm'];
  for (let n = 0; ids.length < count; n++) {
    const id = `occ_k${n}`;
    if (preferredStripe(id) === preferredStripe('occ_warm')) ids.push(id);
  }
  return ids;
}

async function stripeOf(engine: StoreEngine, id: string): Promise<number> {
  const r = await engine.read((tx) =>
    tx.get<{ s: number }>('SELECT open_stripe AS s FROM aoc_occurrences WHERE id = ?', [id]),
  );
  assert.ok(r !== undefined, `${id} is stored`);
  return Number(r.s);
}

async function refuses(
  state: () => Promise<string>,
  run: () => Promise<unknown>,
  code: string,
): Promise<void> {
  const before = await state();
  await assert.rejects(run(), { code });
  assert.equal(await state(), before, `${code}: no state changed`);
}

for (const e of engines) {
  test(`[${e.name}] create and enter refuse exactly as before, and change nothing`, async (t) => {
    const { svc, state } = await prepared(t, e.name);
    const old = await svc.takeover({ lineage: 'agent-a' });
    const a = await svc.takeover({ lineage: 'agent-a' });
    const b = await svc.takeover({ lineage: 'agent-b' });
    const unknown = 'x'.repeat(43);
    await refuses(state, () => svc.create(createInput(unknown, 'k1')), 'unauthenticated');
    await refuses(state, () => svc.create(createInput(old.credential, 'k1')), 'generation_retired');
    const first = await svc.create(createInput(a.credential, 'k1'));
    // The creation binding found by the prefetch: the original, whatever its state.
    const replay = await svc.create(createInput(a.credential, 'k1'));
    assert.deepEqual([replay.created, replay.occurrence.id], [false, first.occurrence.id]);
    await refuses(state, () => svc.create(createInput(a.credential, 'k1', 7)), 'creation_binding_conflict');
    await refuses(
      state,
      () => svc.create({ ...createInput(a.credential, 'k2'), authority: { id: 'nope', amount: 1_000 } }),
      'authority_not_found',
    );
    const id = first.occurrence.id;
    await refuses(state, () => svc.enter({ credential: unknown, occurrenceId: id }), 'unauthenticated');
    await refuses(
      state,
      () => svc.enter({ credential: old.credential, occurrenceId: id }),
      'generation_retired',
    );
    await refuses(
      state,
      () => svc.enter({ credential: b.credential, occurrenceId: id }),
      'occurrence_not_found',
    );
    await refuses(
      state,
      () => svc.enter({ credential: a.credential, occurrenceId: 'occ_missing' }),
      'occurrence_not_found',
    );
    const ticket = await svc.enter({ credential: a.credential, occurrenceId: id });
    assert.equal(ticket.occurrence.phase, 'entered');
    assert.deepEqual(ticket.request, createInput(a.credential, 'k1').request);
    await refuses(state, () => svc.enter({ credential: a.credential, occurrenceId: id }), 'already_entered');
    const budget = await svc.getAuthority('payouts');
    assert.deepEqual([budget.reserved, budget.consumed], [0, 1_000]);
  });

  test(`[${e.name}] statements per create and per enter`, async (t) => {
    // Every domain stripe with room for both occurrences. Under the default limit of 100, 28 of the
    // 64 stripes hold one, so 'k' (a random id) met the still-pending 'warm' in a full stripe about
    // once in 146 runs (28/64 × 1/64), and its claim took the fallback path: the transaction again,
    // statement by statement, then the scan for another stripe (PostgreSQL 10 statements against a
    // bound of 6, the usual path sending 2; SQLite 14 against 12).
    const roomy = { maxPendingPerDomain: 64 * 4, maxInFlightPerDomain: 64 * 4 };
    const { svc, counts } = await prepared(t, e.name, roomy);
    const a = await svc.takeover({ lineage: 'agent-a' });
    await svc.create(createInput(a.credential, 'warm'));
    resetCounts(counts);
    const c = await svc.create(createInput(a.credential, 'k'));
    const created = { n: counts.statements, texts: counts.texts.join(' | ') };
    resetCounts(counts);
    await svc.enter({ credential: a.credential, occurrenceId: c.occurrence.id });
    const entered = { n: counts.statements, texts: counts.texts.join(' | ') };
    t.diagnostic(`${e.name}: create ${created.n} statements, enter ${entered.n}`);
    // SQLite: statement by statement (in-process calls); PostgreSQL: one call for the reads.
    const bounds = e.kind === 'postgres' ? [6, 6] : [12, 13];
    assert.ok(created.n <= (bounds[0] ?? 0), `create sent ${created.n}: ${created.texts}`);
    assert.ok(entered.n <= (bounds[1] ?? 0), `enter sent ${entered.n}: ${entered.texts}`);
  });
  test(`[${e.name}] a claim skips a stripe already at its share instead of running again`, async (t) => {
    // A share of one unit per stripe, and three occurrences whose counts go first to the same
    // stripe. On PostgreSQL each claim is deferred into the one write call; before migration 025 a
    // claim that met a full stripe there ran its whole transaction again statement by statement
    // (10 statements instead of 2). The lock call now answers the stripes' counts and the claim
    // goes where there was room: a create's pending unit, then an entry's in-flight one.
    const [warm = '', k = '', m = '', n = ''] = sameStripeIds(4);
    const tight = { maxPendingPerDomain: 64, maxInFlightPerDomain: 64 };
    const { svc, counts, engine } = await prepared(t, e.name, tight, idsInOrder(warm, k, m, n));
    const a = await svc.takeover({ lineage: 'agent-a' });
    await svc.create(createInput(a.credential, 'warm'));
    const full = await stripeOf(engine, warm);
    resetCounts(counts);
    assert.equal((await svc.create(createInput(a.credential, 'k'))).occurrence.id, k);
    const created = { n: counts.statements, texts: counts.texts.join(' | ') };
    assert.notEqual(await stripeOf(engine, k), full, 'the pending stripe was full: another one');
    // 'warm' entered: its stripe is full in flight and has room pending again, which 'm' takes.
    await svc.enter({ credential: a.credential, occurrenceId: warm });
    assert.equal((await svc.create(createInput(a.credential, 'm'))).occurrence.id, m);
    assert.equal(await stripeOf(engine, m), full, 'pending had room again in the preferred stripe');
    resetCounts(counts);
    await svc.enter({ credential: a.credential, occurrenceId: m });
    const entered = { n: counts.statements, texts: counts.texts.join(' | ') };
    assert.notEqual(await stripeOf(engine, m), full, 'the in-flight stripe was full: another one');
    // Create-and-enter: pending has room in the preferred stripe, in flight has none.
    resetCounts(counts);
    const both = await svc.createAndEnter(createInput(a.credential, 'n'));
    const createdAndEntered = { n: counts.statements, texts: counts.texts.join(' | ') };
    assert.equal(both.occurrence.id, n);
    assert.ok(both.ticket !== null, 'entered');
    assert.notEqual(await stripeOf(engine, n), full, 'in flight in another stripe');
    const totals = await svc.counts();
    assert.deepEqual([totals.byPhase.reserved, totals.byPhase.entered], [1, 3]);
    type Open = Record<'p' | 'f' | 'mp' | 'mf', number | string>;
    const open = await engine.read((tx) =>
      tx.get<Open>(
        'SELECT SUM(pending) AS p, SUM(in_flight) AS f, MAX(pending) AS mp, MAX(in_flight) AS mf FROM aoc_open_stripes',
      ),
    );
    assert.ok(open !== undefined);
    const got = [open.p, open.f, open.mp, open.mf].map(Number);
    assert.deepEqual(
      got,
      [1, 3, 1, 1],
      'domain totals 1 pending and 3 in flight, each stripe within its share',
    );
    t.diagnostic(
      `${e.name}: create ${created.n} statements, enter ${entered.n}, create-and-enter ${createdAndEntered.n}`,
    );
    // SQLite claims statement by statement (unchanged): a full stripe costs its failed UPDATE and
    // the scan, and an entry's move then a claim and a release elsewhere.
    const bounds = e.kind === 'postgres' ? [6, 6, 6] : [14, 16, 18];
    assert.ok(created.n <= (bounds[0] ?? 0), `create sent ${created.n}: ${created.texts}`);
    assert.ok(entered.n <= (bounds[1] ?? 0), `enter sent ${entered.n}: ${entered.texts}`);
    const ce = createdAndEntered;
    assert.ok(ce.n <= (bounds[2] ?? 0), `create-and-enter sent ${ce.n}: ${ce.texts}`);
  });
}
