/**
 * Serve's background reconciler (src/server/background-reconciler.ts) against the real sandbox on
 * a SQLite file, with a manual clock and seeded jitter, ticks driven by the test: per-occurrence
 * exponential backoff (the exact next-ask times), Retry-After as a floor, bounded concurrency,
 * and a clean stop. The single-asker rule on three servers: reconcile-multi-server.test.ts.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { nextAskAt, seededRandom, StatusSources, type SandboxProvider } from '../../src/providers/index.js';
import { BackgroundReconciler, type VisitReport } from '../../src/server/background-reconciler.js';
import { waitUntil } from '../support/wait.js';
import { openReconcileWorld, pay, type ReconcileWorld } from './reconcile-world.js';

const POLICY = { initialMs: 1000, maxMs: 8000 };

/** By-key lookups the sandbox served, per key, and the most in flight at once. */
class LookupCounter {
  readonly perKey = new Map<string, number>();
  inFlight = 0;
  maxInFlight = 0;
  delayMs = 0;
  retryAfter: string | undefined;

  install(sandbox: SandboxProvider): void {
    sandbox.app.addHook('onRequest', async (request) => {
      const m = /\/payments\/by-key\/([^/?]+)/.exec(request.url);
      if (request.method !== 'GET' || m === null) return;
      const key = decodeURIComponent(m[1]!);
      this.perKey.set(key, (this.perKey.get(key) ?? 0) + 1);
      this.inFlight += 1;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      if (this.delayMs > 0) await sleep(this.delayMs);
    });
    sandbox.app.addHook('onResponse', (request, _reply, done) => {
      if (request.method === 'GET' && request.url.includes('/payments/by-key/')) this.inFlight -= 1;
      done();
    });
    sandbox.app.addHook('onSend', async (request, reply, payload) => {
      if (
        this.retryAfter !== undefined &&
        request.url.startsWith('/v1/accounts/') &&
        request.method === 'GET'
      ) {
        reply.code(503).header('retry-after', this.retryAfter);
      }
      return payload;
    });
  }
}

interface Rig {
  readonly w: ReconcileWorld;
  readonly counter: LookupCounter;
  readonly visits: VisitReport[];
  readonly errors: unknown[];
  reconciler(random?: () => number, concurrency?: number): BackgroundReconciler;
}

async function rig(t: TestContext): Promise<Rig> {
  const counter = new LookupCounter();
  const w = await openReconcileWorld(t, {
    engine: 'sqlite',
    webhooks: false,
    beforeListen: (s) => counter.install(s),
  });
  const visits: VisitReport[] = [];
  const errors: unknown[] = [];
  const reconciler = (random = seededRandom(1), concurrency = 1): BackgroundReconciler =>
    new BackgroundReconciler({
      engine: w.opened.engine,
      service: w.svc,
      sources: new StatusSources({ keys: w.keys, clock: w.clock }),
      clock: w.clock,
      everyMs: 1000,
      concurrency,
      backoff: POLICY,
      random,
      metrics: w.reconcileMetrics,
      onVisit: (v) => visits.push(v),
      onError: (e) => errors.push(e),
    });
  return { w, counter, visits, errors, reconciler };
}

test('each unanswered ask backs the occurrence off exponentially, with the seeded jitter, and nothing asks before its time', async (t) => {
  const r = await rig(t);
  const ticket = await pay(r.w, 'inv-backoff', ['drop_response_after_apply']);
  r.w.sandbox.addFault('all', 'unsigned'); // every answer now proves nothing
  const bg = r.reconciler(seededRandom(99));
  const mirror = seededRandom(99);
  const key = ticket.nativeKey!;
  for (let attempt = 1; attempt <= 4; attempt++) {
    assert.equal(await bg.tick(), 1, `ask ${attempt} is due`);
    const v = r.visits.at(-1)!;
    assert.equal(v.attempts, attempt);
    assert.equal(v.resolved, false);
    const expectedAt = nextAskAt(r.w.clock.wallMs(), attempt, POLICY, mirror);
    assert.equal(v.nextAt, expectedAt, `ask ${attempt}: the exact next-ask time`);
    assert.equal(r.counter.perKey.get(key), attempt);
    assert.equal(await bg.tick(), 0, 'not due yet: no ask');
    r.w.clock.advance(expectedAt - r.w.clock.wallMs() - 1);
    assert.equal(await bg.tick(), 0, 'one millisecond early: still no ask');
    r.w.clock.advance(1);
  }
  const gaps = r.visits.map((v, i) => (v.nextAt ?? 0) - (i === 0 ? 0 : r.visits[i - 1]!.nextAt!));
  assert.ok(
    gaps.slice(1).every((g, i) => g >= 500 * 2 ** i),
    `delays grow: ${gaps.slice(1).join(', ')}`,
  );
  assert.equal((await r.w.svc.getOccurrence(ticket.occurrence.id)).occurrence.unresolved, true);
  assert.deepEqual(r.errors, []);
});

test('Retry-After is honoured: no ask before the provider said, even when the backoff is shorter', async (t) => {
  const r = await rig(t);
  const ticket = await pay(r.w, 'inv-retry-after', ['drop_response_after_apply']);
  r.counter.retryAfter = '120';
  const bg = r.reconciler(() => 0);
  assert.equal(await bg.tick(), 1);
  const start = r.w.clock.wallMs();
  assert.equal(
    r.visits[0]!.nextAt,
    start + 120_000,
    'the floor is the provider’s 120 s, not the 0.5 s backoff',
  );
  r.w.clock.advance(60_000);
  assert.equal(await bg.tick(), 0, 'half-way: no ask');
  r.counter.retryAfter = undefined;
  r.w.clock.advance(60_000);
  assert.equal(await bg.tick(), 1, 'after Retry-After: asked again');
  const { occurrence } = await r.w.svc.getOccurrence(ticket.occurrence.id);
  assert.equal(occurrence.outcome, 'success', 'the provider answered once it could');
  assert.equal(r.visits[1]!.resolved, true);
  assert.equal(r.counter.perKey.get(ticket.nativeKey!), 2);
});

test('at most --reconcile-concurrency asks at once; every due occurrence is asked in one tick', async (t) => {
  const r = await rig(t);
  const keys: string[] = [];
  for (let i = 0; i < 6; i++)
    keys.push((await pay(r.w, `inv-conc-${i}`, ['drop_response_after_apply'])).nativeKey!);
  r.counter.delayMs = 40;
  const bg = r.reconciler(seededRandom(3), 2);
  assert.equal(await bg.tick(), 6);
  assert.equal(r.counter.maxInFlight, 2, 'two lookups overlapped, never three');
  assert.deepEqual(
    keys.map((k) => r.counter.perKey.get(k)),
    [1, 1, 1, 1, 1, 1],
  );
  assert.ok(r.visits.every((v) => v.resolved));
  assert.equal(await bg.tick(), 0, 'resolved occurrences are no longer asked about');
});

test('stop() lets the ask in flight answer and starts no new one', async (t) => {
  const r = await rig(t);
  const ticket = await pay(r.w, 'inv-stop', ['drop_response_after_apply']);
  r.w.sandbox.addFault('all', 'unsigned');
  r.counter.delayMs = 150;
  const bg = new BackgroundReconciler({
    engine: r.w.opened.engine,
    service: r.w.svc,
    sources: new StatusSources({ keys: r.w.keys, clock: r.w.clock }),
    clock: r.w.clock,
    everyMs: 100,
    backoff: { initialMs: 1, maxMs: 1 },
    onVisit: (v) => r.visits.push(v),
  });
  bg.start();
  await waitUntil('the first lookup to start', () => r.counter.inFlight > 0, { pollMs: 5 });
  await bg.stop();
  assert.equal(r.counter.inFlight, 0, 'the lookup in flight had answered');
  assert.equal(r.visits.length, 1, 'and its claim was given back');
  const asked = r.counter.perKey.get(ticket.nativeKey!);
  r.w.clock.advance(10_000);
  await sleep(350);
  assert.equal(r.counter.perKey.get(ticket.nativeKey!), asked, 'nothing asked after stop');
});

test('/metrics: lookups by source kind, answers by verdict, and the age of the oldest unresolved occurrence', async (t) => {
  const r = await rig(t);
  const scrape = async (): Promise<string> => (await fetch(`${r.w.url}/metrics`)).text();
  assert.match(await scrape(), /^baton_oldest_unresolved_age_seconds 0$/m, 'nothing unresolved yet');
  const ticket = await pay(r.w, 'inv-metrics', ['drop_response_after_apply']);
  r.w.sandbox.addFault('all', 'unsigned');
  r.w.clock.advance(90_000);
  assert.equal(await r.reconciler().tick(), 1);
  const text = await scrape();
  assert.match(text, /^baton_oldest_unresolved_age_seconds 90$/m);
  const asks = r.counter.perKey.get(ticket.nativeKey!) ?? 0;
  assert.match(
    text,
    new RegExp(`^baton_reconciler_lookups_total\\{source_kind="lookup_by_key"\\} ${asks}$`, 'm'),
  );
  assert.match(text, /^baton_reconciler_lookups_total\{source_kind="listing"\} 1$/m);
  assert.match(text, /^baton_reconciler_answers_total\{verdict="unauthenticated"\} 2$/m);
});
