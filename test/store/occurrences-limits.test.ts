/**
 * Domain-wide pending and in-flight limits without a hot row (AOC-REQ-006, AOC-CASE-012;
 * src/store/occurrences-limits.ts): on both engines, with two engines on one store standing for two
 * servers, concurrent commands on many lineages never take the domain past a limit, are refused
 * only when it is at the limit, and the stripe rows always count exactly the open occurrences.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock.js';
import { generateEd25519KeyPair, publicKeyRaw } from '../../src/core/ed25519.js';
import { OccurrencesService, type EntryTicket } from '../../src/occurrences/index.js';
import type { SqlExecutor, StoreEngine } from '../../src/store/engine.js';
import { migrate, occurrencesUnitOfWork, verifyEvidence } from '../../src/store/index.js';
import { OPEN_STRIPES, stripeCap } from '../../src/store/occurrences-limits.js';
import { createInput, domainConfig, observation, paymentsProfile, T0 } from '../occurrences/helpers.js';
import { enginesUnderTest, type EngineUnderTest } from './engines.js';

const engines = await enginesUnderTest();
const pair = generateEd25519KeyPair();
const domainKey = { kid: pair.kid, publicKey: publicKeyRaw(pair.publicKey).toString('base64url') };
const LINEAGES = 8;

function serviceOn(engine: StoreEngine): OccurrencesService {
  return new OccurrencesService({
    uow: occurrencesUnitOfWork(engine),
    domainKey,
    clock: new ManualClock(T0),
  });
}

interface Domain {
  engine: StoreEngine;
  /** Two services on two engines: two servers sharing the store. */
  servers: [OccurrencesService, OccurrencesService];
  credentials: string[];
}

async function domain(e: EngineUnderTest, t: TestContext, limits: Record<string, number>): Promise<Domain> {
  const store = await e.open(t);
  await migrate(store.engine);
  const a = serviceOn(store.engine);
  // Per-lineage limits never bind first here; they are at most the domain's (a larger one is refused).
  const perLineage = {
    maxPendingPerLineage: Math.min(50, limits['maxPendingPerDomain'] ?? 50),
    maxInFlightPerLineage: Math.min(50, limits['maxInFlightPerDomain'] ?? 50),
  };
  await a.configureDomain(domainConfig({ ...perLineage, ...limits }) as never);
  await a.registerProfile(paymentsProfile());
  await a.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 10_000_000 });
  const credentials: string[] = [];
  for (let l = 0; l < LINEAGES; l++)
    credentials.push((await a.takeover({ lineage: `agent-${l}` })).credential);
  return { engine: store.engine, servers: [a, serviceOn(store.another())], credentials };
}

/**
 * The stripes count exactly the open occurrences: per stripe, pending = its reserved ones and
 * in_flight = its entered ones; no open occurrence is uncounted. Returns the domain totals.
 */
async function checkStripes(engine: StoreEngine): Promise<{ pending: number; inFlight: number }> {
  return engine.read(async (ex: SqlExecutor) => {
    const rows = await ex.all<{ stripe: number; pending: number; in_flight: number; r: number; e: number }>(
      `SELECT s.stripe, s.pending, s.in_flight,
         (SELECT COUNT(*) FROM aoc_occurrences o WHERE o.open_stripe = s.stripe AND o.phase = 'reserved') AS r,
         (SELECT COUNT(*) FROM aoc_occurrences o WHERE o.open_stripe = s.stripe AND o.phase = 'entered') AS e
       FROM aoc_open_stripes s ORDER BY s.stripe`,
    );
    assert.equal(rows.length, OPEN_STRIPES);
    for (const r of rows) assert.deepEqual([r.pending, r.in_flight], [r.r, r.e], `stripe ${r.stripe}`);
    const uncounted = await ex.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM aoc_occurrences WHERE phase IN ('reserved', 'entered') AND open_stripe IS NULL",
    );
    assert.equal(uncounted?.n, 0);
    return {
      pending: rows.reduce((s, r) => s + r.pending, 0),
      inFlight: rows.reduce((s, r) => s + r.in_flight, 0),
    };
  });
}

function codes(results: PromiseSettledResult<unknown>[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of results) {
    const key =
      r.status === 'fulfilled'
        ? 'ok'
        : `${(r.reason as { code?: string }).code}/${String((r.reason as { details?: { scope?: string } }).details?.scope)}`;
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

test('a limit is split into shares that sum to it, and every share fits a stripe', () => {
  for (const limit of [1, 2, 5, 63, 64, 65, 100, 1000, 1_000_000]) {
    let sum = 0;
    for (let s = 0; s < OPEN_STRIPES; s++) {
      const cap = stripeCap(limit, s);
      assert.ok(cap >= 0 && cap <= Math.ceil(limit / OPEN_STRIPES));
      sum += cap;
    }
    assert.equal(sum, limit);
  }
});

for (const e of engines) {
  test(`[${e.name}] concurrent creates on many lineages and two servers stop exactly at the domain's pending limit`, async (t) => {
    const d = await domain(e, t, { maxPendingPerDomain: 5, maxInFlightPerDomain: 5 });
    const n = 24;
    const results = await Promise.allSettled(
      Array.from({ length: n }, (_, i) =>
        d.servers[i % 2]!.create(createInput(d.credentials[i % LINEAGES]!, `k-${i}`)),
      ),
    );
    assert.deepEqual(
      codes(results),
      new Map([
        ['ok', 5],
        ['limit_pending_exceeded/domain', n - 5],
      ]),
    );
    assert.deepEqual(await checkStripes(d.engine), { pending: 5, inFlight: 0 });
    // At the limit every further create is refused; one released makes room for exactly one.
    const [a] = d.servers;
    const first = results.find((r) => r.status === 'fulfilled');
    assert.ok(first?.status === 'fulfilled');
    const created = first.value;
    await assert.rejects(a.create(createInput(d.credentials[0]!, 'late')), {
      code: 'limit_pending_exceeded',
    });
    const owner = d.credentials[results.indexOf(first) % LINEAGES]!;
    await a.release({
      credential: owner,
      occurrenceId: created.occurrence.id,
      requestDigest: created.occurrence.provider.requestDigest,
    });
    assert.deepEqual(await checkStripes(d.engine), { pending: 4, inFlight: 0 });
    const again = await Promise.allSettled([
      a.create(createInput(d.credentials[1]!, 'after-1')),
      d.servers[1].create(createInput(d.credentials[2]!, 'after-2')),
    ]);
    assert.deepEqual(codes(again).get('ok'), 1);
    assert.deepEqual(await checkStripes(d.engine), { pending: 5, inFlight: 0 });
    assert.equal((await verifyEvidence(d.engine)).ok, true);
    t.diagnostic(`${n} concurrent creates over ${LINEAGES} lineages and 2 engines`);
  });

  test(`[${e.name}] concurrent entries stop exactly at the domain's in-flight limit; resolving one makes room`, async (t) => {
    const d = await domain(e, t, { maxPendingPerDomain: 20, maxInFlightPerDomain: 3 });
    const [a, b] = d.servers;
    const created = [];
    for (let i = 0; i < 8; i++) {
      const credential = d.credentials[i % LINEAGES]!;
      created.push({ credential, c: await a.create(createInput(credential, `k-${i}`)) });
    }
    const entries = await Promise.allSettled(
      created.map((x, i) =>
        (i % 2 === 0 ? a : b).enter({ credential: x.credential, occurrenceId: x.c.occurrence.id }),
      ),
    );
    assert.deepEqual(
      codes(entries),
      new Map([
        ['ok', 3],
        ['limit_in_flight_exceeded/domain', 5],
      ]),
    );
    assert.deepEqual(await checkStripes(d.engine), { pending: 5, inFlight: 3 });
    const entered = entries.filter((r): r is PromiseFulfilledResult<EntryTicket> => r.status === 'fulfilled');
    const ticket = entered[0]!.value;
    const resolved = await a.observe(
      observation(ticket, 'succeeded', T0, { response: { id: 'pay_limit0001', status: 'succeeded' } }),
    );
    assert.equal(resolved.occurrence.phase, 'resolved');
    assert.deepEqual(await checkStripes(d.engine), { pending: 5, inFlight: 2 });
    const waiting = created.filter((x) => !entered.some((r) => r.value.occurrence.id === x.c.occurrence.id));
    const retried = await Promise.allSettled(
      waiting.map((x) => b.enter({ credential: x.credential, occurrenceId: x.c.occurrence.id })),
    );
    assert.equal(codes(retried).get('ok'), 1);
    assert.deepEqual(await checkStripes(d.engine), { pending: 4, inFlight: 3 });
  });

  test(`[${e.name}] a small limit still admits up to the limit (most stripes have no share)`, async (t) => {
    const d = await domain(e, t, { maxPendingPerDomain: 2, maxInFlightPerDomain: 1 });
    const [a, b] = d.servers;
    const made: { credential: string; id?: string }[] = [];
    const results: PromiseSettledResult<unknown>[] = [];
    for (let i = 0; i < 4; i++) {
      const credential = d.credentials[i] ?? '';
      const [r] = await Promise.allSettled([(i % 2 ? a : b).create(createInput(credential, `s-${i}`))]);
      if (r !== undefined) results.push(r);
      if (r?.status === 'fulfilled') made.push({ credential, id: r.value.occurrence.id });
    }
    assert.deepEqual(
      codes(results),
      new Map([
        ['ok', 2],
        ['limit_pending_exceeded/domain', 2],
      ]),
    );
    const enters = await Promise.allSettled(
      made.map((m, i) => (i ? a : b).enter({ credential: m.credential, occurrenceId: m.id ?? '' })),
    );
    assert.deepEqual(
      codes(enters),
      new Map([
        ['ok', 1],
        ['limit_in_flight_exceeded/domain', 1],
      ]),
    );
    assert.deepEqual(await checkStripes(d.engine), { pending: 1, inFlight: 1 });
  });
}
