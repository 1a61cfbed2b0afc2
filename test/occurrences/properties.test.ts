/**
 * Property-based tests over random interleavings of commands from several lineages, generations
 * and callers, on a real SQLite file per run. Seeded: set FC_SEED to replay a failure (the seed is
 * printed as a diagnostic). Invariants checked after every command:
 * - a refused command changes no row of any table;
 * - an occurrence is entered at most once, ever;
 * - consumed authority never decreases, never exceeds the budget, and equals the entered amounts;
 * - release happens only from reserved; no phase ever goes back to reserved or leaves released;
 * - no evidence entry is ever changed or removed; every chain verifies;
 * - lineage generations only grow.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { ManualClock } from '../../src/core/clock.js';
import { isBatonError } from '../../src/core/errors.js';
import { openOccurrencesOnSqlite, verifyEvidence } from '../../src/store/index.js';
import type { OccurrencesOnSqlite } from '../../src/store/index.js';
import { createInput, domainConfig, observation, paymentsProfile, snapshot, T0 } from './helpers.js';

const LINEAGES = ['alpha', 'beta'] as const;
const STATUSES = [
  'pending',
  'succeeded',
  'failed',
  'canceled_before_processing',
  'processing',
  null,
] as const;

type Cmd =
  | { k: 'takeover'; lineage: number }
  | { k: 'create'; cred: number; key: number; amount: number }
  | { k: 'enter'; cred: number; occ: number }
  | { k: 'release'; cred: number; occ: number; exact: boolean }
  | { k: 'observe'; occ: number; status: (typeof STATUSES)[number]; authenticated: boolean; bound: boolean }
  | { k: 'reissue'; cred: number; occ: number; key: number }
  | { k: 'remedy'; cred: number; occ: number; key: number }
  | { k: 'advance'; ms: number };

const small = fc.nat({ max: 4 });
const cmdArb: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 1, arbitrary: fc.record({ k: fc.constant('takeover' as const), lineage: fc.nat({ max: 1 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant('create' as const),
      cred: small,
      key: fc.nat({ max: 5 }),
      amount: fc.constantFrom(100, 700, 4_000),
    }),
  },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('enter' as const), cred: small, occ: small }) },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('release' as const),
      cred: small,
      occ: small,
      exact: fc.boolean(),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant('observe' as const),
      occ: small,
      status: fc.constantFrom(...STATUSES),
      authenticated: fc.boolean(),
      bound: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('reissue' as const),
      cred: small,
      occ: small,
      key: fc.nat({ max: 5 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('remedy' as const),
      cred: small,
      occ: small,
      key: fc.nat({ max: 5 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ k: fc.constant('advance' as const), ms: fc.constantFrom(0, 1_000, 400_000) }),
  },
);

/** Pick from the end of a list: recent credentials and occurrences are the interesting ones. */
function recent<T>(list: readonly T[], i: number): T | undefined {
  return list.length === 0 ? undefined : list[list.length - 1 - (i % list.length)];
}

interface World {
  readonly h: OccurrencesOnSqlite;
  readonly clock: ManualClock;
  readonly creds: { credential: string; lineage: string }[];
  readonly occs: string[];
  readonly tickets: Map<string, { nativeKey: string | null; requestDigest: string }>;
}

async function run(w: World, c: Cmd): Promise<void> {
  const svc = w.h.service;
  const cred = 'cred' in c ? (recent(w.creds, c.cred)?.credential ?? 'A'.repeat(43)) : '';
  const occ = 'occ' in c ? (recent(w.occs, c.occ) ?? 'occ_missing') : '';
  switch (c.k) {
    case 'takeover': {
      const r = await svc.takeover({ lineage: LINEAGES[c.lineage] ?? 'alpha' });
      w.creds.push({ credential: r.credential, lineage: r.lineage });
      return;
    }
    case 'create': {
      const r = await svc.create(createInput(cred, `key-${c.key}`, c.amount));
      if (r.created) w.occs.push(r.occurrence.id);
      return;
    }
    case 'enter': {
      const t = await svc.enter({ credential: cred, occurrenceId: occ });
      w.tickets.set(occ, { nativeKey: t.nativeKey, requestDigest: t.requestDigest });
      return;
    }
    case 'release': {
      const o = (await svc.getOccurrence(occ).catch(() => undefined))?.occurrence;
      const digest = c.exact && o ? o.provider.requestDigest : `sha-256:${'A'.repeat(43)}`;
      await svc.release({ credential: cred, occurrenceId: occ, requestDigest: digest });
      return;
    }
    case 'observe': {
      const ticket = w.tickets.get(occ) ?? {
        nativeKey: 'baton:prop:unknown',
        requestDigest: `sha-256:${'B'.repeat(43)}`,
      };
      const base = observation({ ...ticket, occurrence: { id: occ } }, c.status, w.clock.wallMs());
      await svc.observe({
        ...base,
        ...(c.authenticated ? {} : { authentication: { verified: false } }),
        ...(c.bound ? {} : { carried: { ...base.carried, nativeKey: 'baton:prop:other' } }),
      });
      return;
    }
    case 'reissue': {
      const r = await svc.reissue({ credential: cred, occurrenceId: occ, creationKey: `re-${c.key}` });
      if (r.created) w.occs.push(r.occurrence.id);
      return;
    }
    case 'remedy': {
      const r = await svc.remedy({
        ...createInput(cred, `rem-${c.key}`, 100),
        remedyOf: occ,
        kind: 'refund',
      });
      if (r.created) w.occs.push(r.occurrence.id);
      return;
    }
    case 'advance':
      w.clock.advance(c.ms);
  }
}

interface Facts {
  readonly phases: Map<string, string>;
  readonly consumed: number;
  readonly generations: Map<string, number>;
  readonly evidence: Map<number, string>;
}

async function facts(h: OccurrencesOnSqlite): Promise<Facts> {
  return h.engine.read(async (ex) => {
    const occ = await ex.all<{ id: string; phase: string }>('SELECT id, phase FROM aoc_occurrences');
    const auth = await ex.all<{ reserved: number; consumed: number; total: number }>(
      'SELECT * FROM aoc_authorities',
    );
    const sums = await ex.get<{ r: number | null; c: number | null }>(
      `SELECT SUM(CASE WHEN phase = 'reserved' THEN authority_amount ELSE 0 END) AS r,
              SUM(CASE WHEN phase IN ('entered', 'resolved') THEN authority_amount ELSE 0 END) AS c FROM aoc_occurrences`,
    );
    const a = auth[0];
    assert.ok(a !== undefined);
    assert.ok(a.reserved >= 0 && a.consumed >= 0 && a.reserved + a.consumed <= a.total, 'budget bounds');
    assert.equal(a.reserved, sums?.r ?? 0, 'reserved = sum of reserved occurrences');
    assert.equal(a.consumed, sums?.c ?? 0, 'consumed = sum of entered occurrences');
    const twice = await ex.all(
      "SELECT subject FROM evidence_events WHERE type = 'provider_entered' GROUP BY subject HAVING COUNT(*) > 1",
    );
    assert.deepEqual(twice, [], 'an occurrence was entered twice');
    const lineages = await ex.all<{ id: string; generation: number }>(
      'SELECT id, generation FROM aoc_lineages',
    );
    const events = await ex.all<{ seq: number; hash: string; body: string }>(
      'SELECT seq, hash, body FROM evidence_events',
    );
    return {
      phases: new Map(occ.map((o) => [o.id, o.phase])),
      consumed: a.consumed,
      generations: new Map(lineages.map((l) => [l.id, Number(l.generation)])),
      evidence: new Map(events.map((e) => [Number(e.seq), `${e.hash}|${e.body}`])),
    };
  });
}

const ALLOWED = new Set(['reserved>entered', 'reserved>released', 'entered>resolved', 'resolved>entered']);

function compare(before: Facts, after: Facts, cmd: Cmd): void {
  assert.ok(after.consumed >= before.consumed, 'consumed authority decreased');
  for (const [id, phase] of before.phases) {
    const next = after.phases.get(id);
    assert.ok(next !== undefined, 'an occurrence disappeared');
    if (next !== phase) assert.ok(ALLOWED.has(`${phase}>${next}`), `illegal ${phase} → ${next} on ${cmd.k}`);
    if (next === 'released')
      assert.ok(phase === 'released' || cmd.k === 'release', 'released other than by release');
  }
  for (const [lineage, g] of before.generations)
    assert.ok((after.generations.get(lineage) ?? 0) >= g, 'generation shrank');
  for (const [seq, row] of before.evidence)
    assert.equal(after.evidence.get(seq), row, `evidence ${seq} changed`);
}

async function openWorld(dir: string): Promise<World> {
  const clock = new ManualClock(T0);
  const h = await openOccurrencesOnSqlite(join(dir, 'prop.db'), { clock });
  await h.service.configureDomain(
    domainConfig({
      maxPendingPerLineage: 3,
      maxInFlightPerLineage: 3,
      maxPendingPerDomain: 5,
      maxInFlightPerDomain: 5,
    }) as never,
  );
  await h.service.registerProfile(paymentsProfile());
  await h.service.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 10_000 });
  return { h, clock, creds: [], occs: [], tickets: new Map() };
}

test('random interleavings keep the AOC invariants (seeded)', async (t) => {
  const seed = Number(process.env['FC_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
  const numRuns = Number(process.env['FC_RUNS'] ?? 40);
  t.diagnostic(`fast-check seed=${seed} numRuns=${numRuns} (replay with FC_SEED=${seed})`);
  let commands = 0;
  let refusals = 0;
  const applied = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(fc.array(cmdArb, { minLength: 10, maxLength: 60, size: 'medium' }), async (cmds) => {
      const dir = mkdtempSync(join(tmpdir(), 'baton-prop-'));
      const w = await openWorld(dir);
      try {
        await run(w, { k: 'takeover', lineage: 0 });
        for (const cmd of cmds) {
          const before = await facts(w.h);
          const rows = await snapshot(w.h);
          try {
            await run(w, cmd);
            applied.set(cmd.k, (applied.get(cmd.k) ?? 0) + 1);
          } catch (error) {
            if (!isBatonError(error)) throw error;
            refusals++;
            assert.equal(await snapshot(w.h), rows, `refused ${cmd.k} (${error.code}) changed state`);
          }
          commands++;
          compare(before, await facts(w.h), cmd);
        }
        const report = await verifyEvidence(w.h.engine);
        assert.equal(report.ok, true, JSON.stringify(report.firstBroken));
      } finally {
        await w.h.close();
        rmSync(dir, { recursive: true, force: true });
      }
    }),
    { seed, numRuns },
  );
  t.diagnostic(`checked ${commands} commands (${refusals} refused) over ${numRuns} runs`);
  t.diagnostic(`applied: ${[...applied].map(([k, n]) => `${k}=${n}`).join(' ')}`);
  assert.ok(commands > numRuns * 10);
});
