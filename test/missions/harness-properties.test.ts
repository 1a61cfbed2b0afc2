/**
 * Property tests of issue 11 §7 on the stored harness, both engines, two servers over one store:
 * - no provider entry after a committed non-active view: over random sequences of SETs and Status
 *   answers (active, suspended, revoked, unrecognised), enqueue/dispatch/create and enter, an
 *   `enter` succeeds only while the committed view is active, and the provider is called exactly
 *   once per successful entry (the counting simulator is the oracle); work created while the
 *   view is terminal is `suppressed` with one Harness Evidence record, else `queued` with none;
 * - concurrent dispatch/resume/stop on one item has one winner per version: every committed
 *   transition moves the version by one, and nothing runs after a committed stop.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isBatonError } from '../../src/core/errors.js';
import { isTerminal, type MissionsService } from '../../src/missions/index.js';
import type { OccurrencesService } from '../../src/occurrences/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { createInput, SimulatedProvider } from '../occurrences/helpers.js';
import { binding, MISSION, ORIGIN, T0, verifiedSignal, verifiedStatus } from './fixtures.js';
import { world } from './world.js';

const engines = await enginesUnderTest();

type Step =
  | { readonly kind: 'signal'; readonly state: string }
  | { readonly kind: 'status'; readonly state: string }
  | { readonly kind: 'work' }
  | { readonly kind: 'enter'; readonly pick: number; readonly server: 0 | 1 };

const STATES = ['active', 'active', 'suspended', 'revoked', 'frozen'];
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('signal' as const), state: fc.constantFrom(...STATES) }),
  fc.record({ kind: fc.constant('status' as const), state: fc.constantFrom(...STATES) }),
  fc.record({ kind: fc.constant('work' as const) }),
  fc.record({
    kind: fc.constant('enter' as const),
    pick: fc.nat({ max: 7 }),
    server: fc.constantFrom(0 as const, 1 as const),
  }),
);

/** A refusal is fine (typed); anything else is a bug. */
async function attempt<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (e) {
    assert.ok(isBatonError(e), String(e));
    return undefined;
  }
}

for (const e of engines) {
  test(`[${e.name}] property HAR-24 A3.6: no provider entry after a committed non-active view (two servers)`, async (t) => {
    const seen = { entered: 0, refusedNonActive: 0, suppressedAtCreate: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 14 }), async (steps) => {
        const w = await world(t, e);
        const servers: { harness: MissionsService; occurrences: OccurrencesService }[] = [
          { harness: w.harness, occurrences: w.occurrences },
          w.another(),
        ];
        const provider = new SimulatedProvider();
        const g = await w.occurrences.takeover({ lineage: 'invoice-agent' });
        const reserved: string[] = [];
        let version = 1;
        let entered = 0;
        let n = 0;
        await w.harness.applyVerifiedSignal(verifiedSignal('active', version, T0));
        for (const s of steps) {
          w.clock.advance(1000);
          const now = w.clock.wallMs();
          if (s.kind === 'signal') {
            await w.harness.applyVerifiedSignal(verifiedSignal(s.state, ++version, now));
          } else if (s.kind === 'status') {
            await w.harness.applyVerifiedStatus(verifiedStatus(s.state, now));
          } else if (s.kind === 'work') {
            // Work is created on the first server (the test worlds' id sources are per server).
            const { harness, occurrences } = servers[0]!;
            const key = `pay-${++n}`;
            const before = await w.harness.getView(ORIGIN, MISSION);
            const item = await harness.createItem(
              {
                kind: 'queue_item',
                action_class: 'consequential_write',
                lineage: 'invoice-agent',
                mission_binding: binding,
                idempotency_key: key,
              },
              'executor',
            );
            // Seed §7 (HAR-13), A7#14: under a Mission known final (revoked, sticky) work is
            // created suppressed, never queued, with its evidence (HAR-26); else it is queued.
            const final = isTerminal(before?.state);
            assert.equal(item.state, final ? 'suppressed' : 'queued', `created under ${before?.state}`);
            const evidence = (await harness.events(`work:${item.id}`)).filter(
              (ev) => ev.type === 'harness_evidence',
            );
            assert.equal(evidence.length, final ? 1 : 0, 'evidence exactly when suppressed');
            if (final) seen.suppressedAtCreate += 1;
            if ((await attempt(harness.dispatch(item.id, 'executor', g.generation))) === undefined) continue;
            const created = await attempt(
              occurrences.create({ ...createInput(g.credential, key), workItemId: item.id }),
            );
            if (created !== undefined) reserved.push(created.occurrence.id);
          } else {
            const id = reserved[s.pick % Math.max(reserved.length, 1)];
            if (id === undefined) continue;
            const committed = await w.harness.getView(ORIGIN, MISSION);
            const ticket = await attempt(
              servers[s.server]!.occurrences.enter({ credential: g.credential, occurrenceId: id }),
            );
            if (ticket !== undefined) {
              provider.send(ticket);
              entered += 1;
              assert.equal(committed?.state, 'active', 'entered while the committed view was not active');
              seen.entered += 1;
            } else if (committed?.state !== 'active') seen.refusedNonActive += 1;
          }
        }
        const calls = [...provider.calls.values()].reduce((a, b) => a + b, 0);
        assert.equal(calls, entered, 'one provider call per successful entry');
      }),
      { numRuns: e.kind === 'sqlite' ? 12 : 6, seed: 11_2026 },
    );
    // The generated runs exercised both sides of the property, not only refusals.
    assert.ok(
      seen.entered > 0 && seen.refusedNonActive > 0 && seen.suppressedAtCreate > 0,
      JSON.stringify(seen),
    );
    t.diagnostic(JSON.stringify(seen));
  });

  test(`[${e.name}] property HAR-28 A7#20: concurrent dispatch/resume/stop on one item, one winner per version`, async (t) => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('dispatch', 'stop', 'requeue', 'pause'), { minLength: 6, maxLength: 24 }),
        async (ops) => {
          const w = await world(t, e);
          await w.harness.applyVerifiedStatus(verifiedStatus('active', T0));
          const item = await w.harness.createItem(
            {
              kind: 'queue_item',
              action_class: 'consequential_write',
              mission_binding: binding,
              idempotency_key: 'k',
            },
            'executor',
          );
          const b = w.another().harness;
          await Promise.allSettled(
            ops.map((op, i) => {
              const h = i % 2 === 0 ? w.harness : b;
              if (op === 'dispatch') return attempt(h.dispatch(item.id, 'executor'));
              if (op === 'requeue') return attempt(h.requeue(item.id, 'operator'));
              return attempt(h.stop(item.id, op === 'stop' ? 'suppress' : 'pause', 'operator'));
            }),
          );
          const final = await w.harness.getItem(item.id);
          const changes = (await w.harness.events(`work:${item.id}`)).filter(
            (x) => x.type === 'work_state_changed',
          );
          assert.deepEqual(
            changes.map((c) => (c.body as { version: number }).version),
            Array.from({ length: final.version - 1 }, (_, i) => i + 2),
          );
          let stopped = false;
          for (const c of changes) {
            const to = (c.body as { to: string }).to;
            if (to === 'suppressed') stopped = true;
            if (to === 'queued') stopped = false;
            assert.ok(!(stopped && to === 'running'), 'running after a committed stop');
          }
        },
      ),
      { numRuns: e.kind === 'sqlite' ? 10 : 5, seed: 20_2026 },
    );
  });
}
