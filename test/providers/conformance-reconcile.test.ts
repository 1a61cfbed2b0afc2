/**
 * The conformance kit's reconciler (src/cli/conformance/kit.ts, used by AOC-CASE-004): a visit that
 * fails is a failed check naming the occurrence and the error's code, so the case fails instead of
 * passing on a silent `byReason.error` count. Real conformance env (service, sandbox over HTTP);
 * only the status sources are a fake that throws for one occurrence, because the real sandbox
 * cannot make a query throw.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openEnv, type Env } from '../../src/cli/conformance/env.js';
import { Kit, LOST } from '../../src/cli/conformance/kit.js';
import { BatonError } from '../../src/core/errors.js';
import type { OccurrenceView, ProviderProfile } from '../../src/occurrences/index.js';
import { StatusSources, type SourceReading } from '../../src/providers/index.js';

class FailingFor extends StatusSources {
  readonly failing = new Map<string, Error>();

  override query(profile: ProviderProfile, o: OccurrenceView, sourceId: string): Promise<SourceReading> {
    const error = this.failing.get(o.id);
    return error === undefined ? super.query(profile, o, sourceId) : Promise.reject(error);
  }
}

test('a reconcile visit that fails is a failed check with its code, a BatonError and a plain Error alike', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-conf-reconcile-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env = await openEnv(dir);
  t.after(() => env.close());
  const sources = new FailingFor({ keys: env.keys, clock: env.clock });
  const k = new Kit({ ...env, sources } satisfies Env);
  const e = await k.executor('case-reconcile');
  await k.authority('budget-reconcile');
  const paid = [];
  // Two: the conformance domain holds at most two in flight per lineage.
  for (const invoice of ['inv-r1', 'inv-r2'])
    paid.push((await k.pay(e, invoice, invoice, 'budget-reconcile', LOST)).ticket.occurrence.id);
  const [broken = '', faulty = ''] = paid;
  sources.failing.set(broken, new BatonError('provider_binding_conflict', 'not the pinned profile'));
  sources.failing.set(faulty, new TypeError('cannot read x of undefined: hunter2'));

  const report = await k.reconciler('case-reconcile').run();
  assert.deepEqual(report.byReason, { error: 2 });
  assert.deepEqual(report.resolved, []);
  const failed = k.checks.filter((c) => !c.ok).map((c) => c.name);
  assert.deepEqual(
    failed.sort(),
    [
      `reconcile visits ${broken} without error (failed: provider_binding_conflict)`,
      `reconcile visits ${faulty} without error (failed: internal)`,
    ].sort(),
  );
  assert.ok(!JSON.stringify(k.checks).includes('hunter2'), 'the check names the code, never the message');
  // The runner's rule (runner.ts runCase): one failed check fails the case.
  assert.equal(k.checks.length > 0 && k.checks.every((c) => c.ok), false);
});

test('a reconcile pass with no failure adds no check', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-conf-reconcile-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env = await openEnv(dir);
  t.after(() => env.close());
  const k = new Kit(env);
  const e = await k.executor('case-reconcile-ok');
  await k.authority('budget-ok');
  const { ticket } = await k.pay(e, 'only', 'inv-ok', 'budget-ok', LOST);
  const report = await k.reconciler('case-reconcile-ok').run();
  assert.deepEqual(report.resolved, [ticket.occurrence.id]);
  assert.deepEqual(k.checks, []);
});
