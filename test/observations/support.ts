/**
 * Shared setup for the observation tests: the draft example, and a real store (either engine)
 * with a configured domain, a profile, a budget, the occurrences service and the continuity store.
 */
import { readFileSync } from 'node:fs';
import type { TestContext } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import { generateEd25519KeyPair, publicKeyRaw } from '../../src/core/ed25519.js';
import { OccurrencesService } from '../../src/occurrences/index.js';
import type { ObservationRecord } from '../../src/observations/index.js';
import { ContinuityStore, migrate, occurrencesUnitOfWork } from '../../src/store/index.js';
import { migrations } from '../../src/store/migrations/index.js';
import type { EngineUnderTest, StoreUnderTest } from '../store/engines.js';
import { join } from 'node:path';
import { repoRoot } from '../support/paths.js';
import { createInput, domainConfig, paymentsProfile, T0 } from '../occurrences/helpers.js';

export const EXAMPLE_PATH = join(repoRoot, 'test/observations/fixtures/example.json');
export const EXAMPLE_BYTES = readFileSync(EXAMPLE_PATH);
export const EXAMPLE_DIGEST = 'sha-256:54hNl1a1auKkbkc-4gcnX-pKHljqto4dxHbYbZKtQG0';

export function example(): Record<string, unknown> {
  return JSON.parse(EXAMPLE_BYTES.toString('utf8')) as Record<string, unknown>;
}

/** An evidence item no fixture holds: what a correction appends (draft ¶39, `checkCorrection`). */
export function correctionEvidence(tag: string): Record<string, unknown> {
  return {
    locator: `urn:example:evidence:correction:${tag}`,
    method: 'direct_capture',
    verification: 'OBSERVED_WITH_STATED_EVIDENCE',
    byte_digest: null,
  };
}

/**
 * A locally valid record that decides something (MATCH needs a reference and evidence). A
 * correction (`supersedes` given, `evidence` not) appends `correctionEvidence` to the example's.
 */
export function decidedRecord(overrides: Record<string, unknown> = {}): ObservationRecord {
  const base = example();
  const appended =
    overrides['supersedes'] !== undefined && overrides['evidence'] === undefined
      ? {
          evidence: [
            ...(base['evidence'] as unknown[]),
            correctionEvidence(typeof overrides['record_id'] === 'string' ? overrides['record_id'] : 'fix'),
          ],
        }
      : {};
  return {
    ...base,
    invariants: [
      { dimension: 'authority', status: 'MATCH', reference: 'urn:baton:evidence:x#1', reason: null },
      { dimension: 'memory', status: 'UNKNOWN', reference: null, reason: 'not observed' },
    ],
    ...appended,
    ...overrides,
  } as unknown as ObservationRecord;
}

export interface Prepared {
  readonly store: StoreUnderTest;
  readonly svc: OccurrencesService;
  readonly continuity: ContinuityStore;
  readonly clock: ManualClock;
  readonly key: ReturnType<typeof generateEd25519KeyPair>;
}

/** `through`: migrate only up to that migration id (a store as an older Baton left it). */
export async function prepare(
  t: TestContext,
  e: EngineUnderTest,
  bypass?: 'all-absent',
  through?: number,
): Promise<Prepared> {
  const store = await e.open(t);
  await migrate(
    store.engine,
    through === undefined ? {} : { list: migrations.filter((m) => m.id <= through) },
  );
  const key = generateEd25519KeyPair();
  const clock = new ManualClock(T0);
  const svc = new OccurrencesService({
    uow: occurrencesUnitOfWork(store.engine),
    domainKey: { kid: key.kid, publicKey: publicKeyRaw(key.publicKey).toString('base64url') },
    clock,
  });
  const config = domainConfig() as { bypassPaths: { status: string }[] };
  if (bypass === 'all-absent')
    config.bypassPaths = config.bypassPaths.map((p) => ({ ...p, status: 'absent' }));
  await svc.configureDomain(config as never);
  await svc.registerProfile(paymentsProfile());
  await svc.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 100_000 });
  // The setup's last event is an authority_created by `operator`: a takeover by the same actor in
  // the same millisecond leaves its handoff's authority UNKNOWN (B3.3, the log records no
  // transaction identity). Tests that want that case make it themselves.
  clock.advance(1);
  const continuity = new ContinuityStore({ engine: store.engine, signingKey: key.privateKey, clock });
  return { store, svc, continuity, clock, key };
}

/** Take over `lineage` and enter `count` occurrences with the new executor. */
export async function enterSome(
  p: Prepared,
  lineage: string,
  count: number,
  prefix = 'k',
): Promise<string[]> {
  const g = await p.svc.takeover({ lineage });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const created = await p.svc.create(createInput(g.credential, `${prefix}-${i}`));
    await p.svc.enter({ credential: g.credential, occurrenceId: created.occurrence.id });
    ids.push(created.occurrence.id);
    p.clock.advance(1_000);
  }
  return ids;
}
