/**
 * A governed world on a real store engine for the observation tests: migrations, the harness with
 * the occurrences' Mission gate, a real Ed25519 domain key shared by both and by the continuity
 * store, one manual clock. Views are driven with PRE-VERIFIED Status/SET objects.
 */
import type { TestContext } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import { generateEd25519KeyPair, publicKeyRaw } from '../../src/core/ed25519.js';
import { sequentialIdSource } from '../../src/core/ids.js';
import { OccurrencesService } from '../../src/occurrences/index.js';
import {
  ContinuityStore,
  harnessGate,
  migrate,
  occurrencesUnitOfWork,
  openHarnessOn,
} from '../../src/store/index.js';
import { binding, T0 } from '../missions/fixtures.js';
import { createInput, domainConfig, paymentsProfile } from '../occurrences/helpers.js';
import type { EngineUnderTest } from '../store/engines.js';

export async function governedWorld(t: TestContext, e: EngineUnderTest) {
  const store = await e.open(t);
  await migrate(store.engine);
  const clock = new ManualClock(T0);
  const key = generateEd25519KeyPair();
  const harness = openHarnessOn(store.engine, {
    domainPrivateKey: key.privateKey,
    clock,
    ids: sequentialIdSource('h'),
  });
  const occurrences = new OccurrencesService({
    uow: occurrencesUnitOfWork(store.engine, harnessGate(harness)),
    domainKey: { kid: key.kid, publicKey: publicKeyRaw(key.publicKey).toString('base64url') },
    clock,
    ids: sequentialIdSource('o'),
  });
  await harness.registerMatrix();
  await occurrences.configureDomain(domainConfig() as never);
  await occurrences.registerProfile(paymentsProfile());
  await occurrences.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 100_000 });
  const continuity = new ContinuityStore({ engine: store.engine, signingKey: key.privateKey, clock });
  return { store, clock, key, harness, occurrences, continuity };
}

export type GovernedWorld = Awaited<ReturnType<typeof governedWorld>>;

/** Governed items reserved now, one per key; returns their occurrences and a function entering one. */
export async function reserveGoverned(w: GovernedWorld, keys: readonly string[]) {
  const g = await w.occurrences.takeover({ lineage: 'invoice-agent' });
  const ids: string[] = [];
  for (const k of keys) {
    const item = await w.harness.createItem(
      {
        kind: 'queue_item',
        action_class: 'consequential_write',
        lineage: 'invoice-agent',
        mission_binding: binding,
        idempotency_key: k,
      },
      'executor',
    );
    await w.harness.dispatch(item.id, 'executor', g.generation);
    const c = await w.occurrences.create({ ...createInput(g.credential, k), workItemId: item.id });
    ids.push(c.occurrence.id);
  }
  const enter = (id: string) => w.occurrences.enter({ credential: g.credential, occurrenceId: id });
  return { ids, enter, credential: g.credential };
}
