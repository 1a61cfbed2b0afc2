/**
 * The guarded side of the store benchmarks: the OccurrencesService over a store engine, a domain
 * with `executors` lineages (each its own executor and its own authority budget — budgets are hot
 * rows by nature, DESIGN.md §10), and one lifecycle = create+reserve+bind, enter, observe→resolved:
 * three transactions, each call timed.
 */
import { generateEd25519KeyPair, publicKeyRaw } from '../src/core/ed25519.js';
import { OccurrencesService } from '../src/occurrences/index.js';
import type { StoreEngine } from '../src/store/engine.js';
import { migrate, occurrencesUnitOfWork } from '../src/store/index.js';
import { acknowledgementFree, benchProfile, domain, request } from './occurrences-fixtures.js';
import type { CallTimes } from './support.js';

export interface Executor {
  readonly lineage: string;
  readonly credential: string;
  readonly authority: string;
}

export interface Guarded {
  readonly service: OccurrencesService;
  readonly executors: readonly Executor[];
  /** One lifecycle by executor `w` under creation key `key`; `i` varies the request. */
  lifecycle(w: number, key: string, i: number): Promise<CallTimes>;
}

/** Configure a fresh (migrated here) store and return the service and its executors. */
export async function openGuarded(engine: StoreEngine, executors: number): Promise<Guarded> {
  await migrate(engine);
  const pair = generateEd25519KeyPair();
  const service = new OccurrencesService({
    uow: occurrencesUnitOfWork(engine),
    domainKey: { kid: pair.kid, publicKey: publicKeyRaw(pair.publicKey).toString('base64url') },
  });
  await service.configureDomain(domain() as never);
  await service.registerProfile(benchProfile());
  const list: Executor[] = [];
  for (let e = 0; e < executors; e++) {
    const authority = `payouts-${e}`;
    await service.createAuthority({ id: authority, unit: 'EUR-cents', total: 1e12 });
    const { credential } = await service.takeover({ lineage: `bench-agent-${e}` });
    list.push({ lineage: `bench-agent-${e}`, credential, authority });
  }
  const lifecycle = async (w: number, key: string, i: number): Promise<CallTimes> => {
    const x = list[w];
    if (x === undefined) throw new Error(`no executor ${w}`);
    const t0 = performance.now();
    const c = await service.create({
      credential: x.credential,
      creationKey: key,
      provider: { profileId: 'bench-payments', profileVersion: '1' },
      request: request(i),
      // The profile ties the authority to the request's amount (docs/occurrences.md).
      authority: { id: x.authority, amount: request(i).amount },
    });
    const t1 = performance.now();
    const ticket = await service.enter({ credential: x.credential, occurrenceId: c.occurrence.id });
    const t2 = performance.now();
    const reference = `pay_${key.replace(/[^A-Za-z0-9]/g, 'x').padStart(8, '0')}`;
    const r = await service.observe(acknowledgementFree(ticket, reference));
    if (r.occurrence.phase !== 'resolved') throw new Error('the bench lifecycle did not resolve');
    return [t1 - t0, t2 - t1, performance.now() - t2];
  };
  return { service, executors: list, lifecycle };
}
