/**
 * A harness world on a real store engine: migrations, the occurrences service with the harness's
 * Mission gate, the harness service signing with a real Ed25519 domain key, one manual clock.
 * Views are driven with PRE-VERIFIED inputs (the objects the consuming half's verifiers output).
 */
import type { TestContext } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import { generateEd25519KeyPair, publicKeyRaw } from '../../src/core/ed25519.js';
import { sequentialIdSource } from '../../src/core/ids.js';
import {
  verifyHarnessEvidence,
  type HarnessEvidence,
  type MissionsService,
  type StalenessBounds,
  type StatusFetcher,
} from '../../src/missions/index.js';
import { OccurrencesService } from '../../src/occurrences/index.js';
import { harnessGate, migrate, occurrencesUnitOfWork, openHarnessOn } from '../../src/store/index.js';
import type { EngineUnderTest, StoreUnderTest } from '../store/engines.js';
import { createInput, domainConfig, paymentsProfile } from '../occurrences/helpers.js';
import { binding, T0 } from './fixtures.js';

export interface World {
  readonly store: StoreUnderTest;
  readonly clock: ManualClock;
  readonly harness: MissionsService;
  readonly occurrences: OccurrencesService;
  readonly publicKey: ReturnType<typeof generateEd25519KeyPair>['publicKey'];
  /** A second harness + occurrences pair on another engine over the same store (another server). */
  another(): { harness: MissionsService; occurrences: OccurrencesService };
}

export async function world(
  t: TestContext,
  e: EngineUnderTest,
  o: { bounds?: StalenessBounds; fetchStatus?: StatusFetcher } = {},
): Promise<World> {
  const store = await e.open(t);
  await migrate(store.engine);
  const clock = new ManualClock(T0);
  const pair = generateEd25519KeyPair();
  const domainKey = { kid: pair.kid, publicKey: publicKeyRaw(pair.publicKey).toString('base64url') };
  const pairOn = (engine: typeof store.engine, seed: string) => {
    const harness = openHarnessOn(engine, {
      domainPrivateKey: pair.privateKey,
      clock,
      ids: sequentialIdSource(seed),
      ...o,
    });
    const occurrences = new OccurrencesService({
      uow: occurrencesUnitOfWork(engine, harnessGate(harness)),
      domainKey,
      clock,
      ids: sequentialIdSource(`${seed}o`),
    });
    return { harness, occurrences };
  };
  const { harness, occurrences } = pairOn(store.engine, 'a');
  await harness.registerMatrix();
  await occurrences.configureDomain(domainConfig() as never);
  await occurrences.registerProfile(paymentsProfile());
  await occurrences.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 100_000 });
  let n = 0;
  return {
    store,
    clock,
    harness,
    occurrences,
    publicKey: pair.publicKey,
    another: () => pairOn(store.another(), `b${++n}`),
  };
}

type Generation = Awaited<ReturnType<World['occurrences']['takeover']>>;

/**
 * A queue item of lineage `invoice-agent` under the fixtures' Mission binding, enqueued and
 * dispatched by a generation (`taken`, or a new takeover), and the create input naming it: the
 * way governed work reaches provider entry (A3.6).
 */
export async function dispatchedItem(w: World, key: string, taken?: Generation) {
  const g = taken ?? (await w.occurrences.takeover({ lineage: 'invoice-agent' }));
  const item = await w.harness.createItem(
    {
      kind: 'queue_item',
      action_class: 'consequential_write',
      lineage: 'invoice-agent',
      mission_binding: binding,
      idempotency_key: key,
    },
    'executor',
  );
  await w.harness.dispatch(item.id, 'executor', g.generation);
  return { g, item, input: { ...createInput(g.credential, key), workItemId: item.id } };
}

/** The verified Harness Evidence appended to one subject (`work:<id>`, `mission:<origin>#<id>`), oldest first. */
export async function evidenceOf(w: World, subject: string): Promise<HarnessEvidence[]> {
  const events = (await w.harness.events(subject)).filter((e) => e.type === 'harness_evidence');
  return Promise.all(events.map((e) => verifyHarnessEvidence(e.body, w.publicKey)));
}
