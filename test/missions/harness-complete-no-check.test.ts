/**
 * `complete` runs no Mission check (docs/harness.md "Completion"): it records work already done;
 * a stop has already moved a stopped item off `running`. Both engines, views driven with
 * PRE-VERIFIED Status/SET objects (SIMULATED issuer), real signed evidence.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { enginesUnderTest } from '../store/engines.js';
import { T0, binding, code, verifiedSignal, verifiedStatus } from './fixtures.js';
import { evidenceOf, world } from './world.js';

const engines = await enginesUnderTest();

for (const e of engines) {
  test(`${e.name}: complete runs no Mission check: a running item completes though its view went stale; a stopped one is refused`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedStatus(verifiedStatus('active', T0));
    const mk = (key: string) =>
      w.harness.createItem(
        {
          kind: 'queue_item',
          action_class: 'consequential_write',
          lineage: 'invoice-agent',
          mission_binding: binding,
          idempotency_key: key,
        },
        'operator',
      );
    const a = await mk('d-1');
    const b = await mk('d-2');
    await w.harness.dispatch(a.id, 'operator');
    await w.harness.dispatch(b.id, 'operator');
    w.clock.advance(3_600_000); // far past every bound: the view is stale
    const evidence = (await evidenceOf(w, `work:${a.id}`)).length;
    assert.equal((await w.harness.complete(a.id, 'operator')).state, 'done');
    assert.equal((await evidenceOf(w, `work:${a.id}`)).length, evidence, 'no check, no evidence');
    await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 1, w.clock.wallMs()));
    assert.notEqual((await w.harness.getItem(b.id)).state, 'running', 'the revocation moved it');
    assert.equal(await code(w.harness.complete(b.id, 'operator')), 'work_item_not_dispatchable');
  });
}
