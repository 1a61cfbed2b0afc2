/**
 * A3.2 step 7 / HAR-02 (fail closed): a binding's `authority_hash` a view cannot confirm — an
 * `active` view learned from SETs alone, which carry no hash — never counts as a match: the check
 * fetches Status, and without an answer naming the hash the item stops as unknown. Both engines;
 * SIMULATED issuer (a counted `StatusFetcher` answering PRE-VERIFIED objects), real signed evidence.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatonError } from '../../src/core/errors.js';
import { type VerifiedMissionStatus } from '../../src/missions/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { MISSION, ORIGIN, T0, binding, code, verifiedSignal, verifiedStatus } from './fixtures.js';
import { evidenceOf, world } from './world.js';

const engines = await enginesUnderTest();

const ISSUED = 'sha-256:-rBZZJ8tVIyGoR1tBg6BO6QG0kimVvef8vjigpoVuPw';
const FORGED = `sha-256:${'A'.repeat(43)}`;

for (const e of engines) {
  test(`${e.name}: a binding authority_hash a SET-only view cannot confirm is never dispatched (A3.2 step 7, HAR-02)`, async (t) => {
    // SIMULATED issuer: Status fetches are counted and answer (or fail) as the case needs.
    let fetches = 0;
    const issuer: { answer?: () => VerifiedMissionStatus } = {};
    const w = await world(t, e, {
      fetchStatus: () => {
        fetches++;
        const answer = issuer.answer;
        if (answer === undefined)
          return Promise.reject(new BatonError('mission_status_unavailable', 'SIMULATED: issuer down'));
        return Promise.resolve(answer());
      },
    });
    // The view is learned from a pushed SET only: state active, no authority_hash.
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    assert.equal((await w.harness.getView(ORIGIN, MISSION))?.authorityHash, null);
    const mk = (key: string) =>
      w.harness.createItem(
        {
          kind: 'queue_item',
          action_class: 'consequential_write',
          lineage: 'invoice-agent',
          mission_binding: { ...binding, authority_hash: FORGED },
          idempotency_key: key,
        },
        'operator',
      );
    // Status cannot be fetched: the hash stays unconfirmed, the item is paused as unknown.
    const a = await mk('k-1');
    assert.equal(await code(w.harness.dispatch(a.id, 'operator')), 'mission_status_unavailable');
    assert.equal(fetches, 1, 'the check fetched Status to learn the hash (A3.1 step 3)');
    assert.equal((await w.harness.getItem(a.id)).state, 'paused');
    assert.equal((await evidenceOf(w, `work:${a.id}`)).at(-1)?.reason, 'mission_state_unknown');
    // Status answers with the hash the issuer did issue: the forged binding is a mismatch.
    issuer.answer = () => verifiedStatus('active', w.clock.wallMs(), { authorityHash: ISSUED });
    const b = await mk('k-2');
    assert.equal(await code(w.harness.dispatch(b.id, 'operator')), 'mission_not_active');
    assert.notEqual((await w.harness.getItem(b.id)).state, 'running');
    assert.equal((await evidenceOf(w, `work:${b.id}`)).at(-1)?.reason, 'authority_hash_mismatch');
    // …and an item bound to the issued hash runs.
    const c = await w.harness.createItem(
      {
        kind: 'queue_item',
        action_class: 'consequential_write',
        lineage: 'invoice-agent',
        mission_binding: { ...binding, authority_hash: ISSUED },
        idempotency_key: 'k-3',
      },
      'operator',
    );
    assert.equal((await w.harness.dispatch(c.id, 'operator')).item.state, 'running');
  });
}
