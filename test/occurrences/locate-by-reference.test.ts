/**
 * Locating a webhook delivery by the BOUND provider reference (migration 034, docs/api.md
 * "Webhooks"), on both engines: the one occurrence the reference is bound to is found and the
 * delivery is recorded against it in its one transaction; if two occurrences ever held the same
 * reference (the service never writes it: the exclusive linked-id index refuses a reference bound
 * elsewhere; here it is written behind Baton's back), neither the locating read nor the
 * delivery's locking read picks one — fail closed, nothing is observed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ObservationInput } from '../../src/occurrences/index.js';
import { ReconciliationStore } from '../../src/store/reconciliation.js';
import { enginesUnderTest } from '../store/engines.js';
import { ACCOUNT, createInput, ENVIRONMENT, serviceOn, T0 } from './helpers.js';

const engines = await enginesUnderTest();
const PROFILE = 'sandbox-payments';
const REF = 'ref_bound_once';
const SET_REF = 'UPDATE aoc_occurrences SET provider_reference = ? WHERE id = ?';

for (const e of engines) {
  test(`[${e.name}] a delivery is located by the one occurrence its reference is bound to; two such occurrences locate nothing`, async (t) => {
    const { store, svc, g } = await serviceOn(t, e, 10_000);
    const ids: string[] = [];
    for (const key of ['k-ref-a', 'k-ref-b']) {
      const created = await svc.create(createInput(g.credential, key));
      await svc.enter({ credential: g.credential, occurrenceId: created.occurrence.id });
      ids.push(created.occurrence.id);
    }
    const [a, b] = ids as [string, string];
    const located = new ReconciliationStore(store.engine);
    const observed: string[] = [];
    const observe = (_bound: unknown, occurrenceId: string): ObservationInput => {
      observed.push(occurrenceId);
      const unavailable = {
        result: 'unavailable',
        authentication: { verified: false },
        carried: {},
      } as const;
      return { occurrenceId, source: 'webhook', observedAt: T0, ...unavailable };
    };
    const byRef = { account: ACCOUNT, environment: ENVIRONMENT, reference: REF };
    const event = (eventId: string) => ({ profileId: PROFILE, eventId, receivedAt: T0, reference: byRef });

    assert.equal(await located.boundVersionByReference(PROFILE, ACCOUNT, ENVIRONMENT, REF), undefined);
    assert.equal(await store.tamper(SET_REF, [REF, a]), 1);
    assert.equal(await located.boundVersionByReference(PROFILE, ACCOUNT, ENVIRONMENT, REF), '2026-01-01');
    const one = await svc.recordProviderEvent(event('evt_one'), observe, 'webhook:test');
    assert.equal(one.kind, 'recorded');
    assert.deepEqual(observed, [a], 'recorded against the occurrence bound to the reference');

    assert.equal(await store.tamper(SET_REF, [REF, b]), 1);
    assert.equal(
      await located.boundVersionByReference(PROFILE, ACCOUNT, ENVIRONMENT, REF),
      undefined,
      'two occurrences with one reference: the receiver locates nothing',
    );
    const two = await svc.recordProviderEvent(event('evt_two'), observe, 'webhook:test');
    assert.equal(two.kind, 'unknown_occurrence', 'nor does the delivery transaction pick one');
    assert.deepEqual(observed, [a], 'nothing observed for either');
  });
}
