/**
 * `observeAll` (issue 13 §8: one reconciler stage shares one COMMIT): several observations in ONE
 * transaction, each judged exactly as `observe` judges it alone, in order; a refusal of any one
 * rolls back all of them (the reconciler then records each alone). SQLite file, real service.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SqliteStoreEngine } from '../../src/store/sqlite.js';
import {
  createAndEnter,
  eventTypes,
  expectCode,
  observation,
  openHarness,
  setupDomain,
  snapshot,
} from './helpers.js';

test('observeAll records each observation as observe would, in one transaction', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const { credential } = await h.svc.takeover({ lineage: 'agent' });
  const a = await createAndEnter(h, credential, 'inv-a');
  const b = await createAndEnter(h, credential, 'inv-b');
  const now = h.clock.wallMs();
  const engine = h.engine as SqliteStoreEngine;
  const written = (): number => engine.stats().transactions;
  const before = written();
  const results = await h.svc.observeAll(
    [
      observation(a, 'succeeded', now, { response: { id: 'pay_a0000001', status: 'succeeded' } }),
      observation(b, 'pending', now, { response: { id: 'pay_b0000001', status: 'pending' } }),
    ],
    'operator:test',
  );
  assert.equal(written() - before, 1, 'one transaction for both');
  assert.deepEqual(
    results.map((r) => [r.occurrence.id, r.effective, r.interpretation]),
    [
      [a.occurrence.id, true, 'success'],
      [b.occurrence.id, true, 'accepted'],
    ],
  );
  assert.equal((await h.svc.getOccurrenceView(a.occurrence.id)).unresolved, false);
  assert.equal((await h.svc.getOccurrenceView(b.occurrence.id)).outcome, 'accepted');
  assert.ok((await eventTypes(h, a.occurrence.id)).includes('observation_recorded'));
});

test('observeAll: one refused observation rolls back all of them', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const { credential } = await h.svc.takeover({ lineage: 'agent' });
  const a = await createAndEnter(h, credential, 'inv-a');
  const now = h.clock.wallMs();
  const before = await snapshot(h);
  const good = observation(a, 'succeeded', now, { response: { id: 'pay_a0000001', status: 'succeeded' } });
  const unknown = { ...good, occurrenceId: 'occ_does_not_exist' };
  await expectCode(h.svc.observeAll([good, unknown]), 'occurrence_not_found');
  assert.equal(await snapshot(h), before, 'the good one was not kept either');
  const future = observation(a, 'succeeded', now + 3_600_000);
  await expectCode(h.svc.observeAll([good, future]), 'observation_invalid');
  assert.equal(await snapshot(h), before);
});
