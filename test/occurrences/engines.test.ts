/**
 * The occurrences port over both store engines (DESIGN.md §2: one contract suite, both engines):
 * SQLite always, PostgreSQL when test/support/postgres.ts finds a server. Two engines on one store
 * stand for two Baton servers; row locks and unique indexes, not process memory, must keep entry
 * at most once and the creation binding unique.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock.js';
import { generateEd25519KeyPair, publicKeyRaw } from '../../src/core/ed25519.js';
import { OccurrencesService } from '../../src/occurrences/index.js';
import type { StoreEngine } from '../../src/store/engine.js';
import { migrate, occurrencesUnitOfWork, verifyEvidence } from '../../src/store/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { createInput, domainConfig, observation, paymentsProfile, T0 } from './helpers.js';

const engines = await enginesUnderTest();
const pair = generateEd25519KeyPair();
const domainKey = { kid: pair.kid, publicKey: publicKeyRaw(pair.publicKey).toString('base64url') };

function serviceOn(engine: StoreEngine, clock = new ManualClock(T0)): OccurrencesService {
  return new OccurrencesService({ uow: occurrencesUnitOfWork(engine), domainKey, clock });
}

async function prepared(t: TestContext, name: string) {
  const e = engines.find((x) => x.name === name);
  assert.ok(e !== undefined);
  const store = await e.open(t);
  await migrate(store.engine);
  const a = serviceOn(store.engine);
  await a.configureDomain(domainConfig() as never);
  await a.registerProfile(paymentsProfile());
  await a.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 100_000 });
  return { store, a, b: serviceOn(store.another()) };
}

for (const e of engines) {
  test(`[${e.name}] the lifecycle through the occurrences port`, async (t) => {
    const { store, a } = await prepared(t, e.name);
    const g1 = await a.takeover({ lineage: 'invoice-agent' });
    const released = await a.create(createInput(g1.credential, 'r'));
    await a.release({
      credential: g1.credential,
      occurrenceId: released.occurrence.id,
      requestDigest: released.occurrence.provider.requestDigest,
    });
    const created = await a.create({
      ...createInput(g1.credential, 'x'),
      linkedIds: [{ type: 'bcr_operation_id', value: 'op-1' }],
    });
    const ticket = await a.enter({ credential: g1.credential, occurrenceId: created.occurrence.id });
    const g2 = await a.takeover({ lineage: 'invoice-agent' });
    assert.deepEqual(
      g2.unresolved.map((o) => o.id),
      [created.occurrence.id],
    );
    const r = await a.observe(
      observation(ticket, 'succeeded', T0, { response: { id: 'pay_pg000001', status: 'succeeded' } }),
    );
    assert.deepEqual(
      [r.occurrence.phase, r.occurrence.provider.providerReference],
      ['resolved', 'pay_pg000001'],
    );
    assert.deepEqual(await a.getAuthority('payouts').then((x) => [x.reserved, x.consumed]), [0, 1_000]);
    const counts = await a.counts();
    assert.deepEqual([counts.byPhase.resolved, counts.byPhase.released, counts.total], [1, 1, 2]);
    await assert.rejects(
      a.create({
        ...createInput(g2.credential, 'y'),
        linkedIds: [{ type: 'bcr_operation_id', value: 'op-1' }],
      }),
      {
        code: 'linked_identifier_conflict',
      },
    );
    assert.equal((await verifyEvidence(store.engine)).ok, true);
  });

  test(`[${e.name}] two servers race: one entry, one creation per binding`, async (t) => {
    const { store, a, b } = await prepared(t, e.name);
    const g = await a.takeover({ lineage: 'invoice-agent' });
    const creates = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 === 0 ? a : b).create(createInput(g.credential, 'same-binding')),
      ),
    );
    assert.equal(new Set(creates.map((c) => c.occurrence.id)).size, 1);
    assert.equal(creates.filter((c) => c.created).length, 1);
    const id = creates[0]?.occurrence.id ?? '';
    const entries = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 === 0 ? a : b).enter({ credential: g.credential, occurrenceId: id }),
      ),
    );
    assert.equal(entries.filter((x) => x.status === 'fulfilled').length, 1);
    for (const x of entries) {
      if (x.status === 'rejected') assert.equal((x.reason as { code: string }).code, 'already_entered');
    }
    assert.deepEqual(await b.getAuthority('payouts').then((x) => [x.reserved, x.consumed]), [0, 1_000]);
    assert.equal((await verifyEvidence(store.engine)).ok, true);
    t.diagnostic(`8 concurrent creates and 8 concurrent entries over two engines`);
  });

  test(`[${e.name}] two servers race to reissue one tombstone: one successor`, async (t) => {
    // AOC-REQ-008: the tombstone's row lock serializes reissues; the later ones meet the first.
    const { store, a, b } = await prepared(t, e.name);
    const g = await a.takeover({ lineage: 'invoice-agent' });
    const { occurrence: o } = await a.create(createInput(g.credential, 'to-release'));
    const release = { credential: g.credential, occurrenceId: o.id };
    await b.release({ ...release, requestDigest: o.provider.requestDigest });
    const tries = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 === 0 ? a : b).reissue({ ...release, creationKey: `re-${i}` }),
      ),
    );
    const made = tries.flatMap((x) => (x.status === 'fulfilled' ? [x.value] : []));
    assert.deepEqual(
      made.map((m) => m.created),
      [true],
    );
    const successor = made[0]?.occurrence.id;
    for (const x of tries) {
      if (x.status === 'rejected') {
        const err = x.reason as { code: string; details: Record<string, unknown> };
        assert.deepEqual([err.code, err.details['successor']], ['reissue_invalid', successor]);
      }
    }
    assert.deepEqual(await b.getAuthority('payouts').then((x) => [x.reserved, x.consumed]), [1_000, 0]);
    assert.equal((await verifyEvidence(store.engine)).ok, true);
  });
}
