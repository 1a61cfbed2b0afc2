/**
 * Input hygiene: a control character in `mission_origin` is refused by the input reader with its
 * JSON path (`mission_binding_invalid`), never reaching the store. Both engines.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatonError } from '../../src/core/errors.js';
import { enginesUnderTest } from '../store/engines.js';
import { ORIGIN, binding } from './fixtures.js';
import { world } from './world.js';

const engines = await enginesUnderTest();

for (const e of engines) {
  test(`${e.name}: a control character in mission_origin is refused at input with its JSON path, nothing written`, async (t) => {
    const w = await world(t, e);
    const before = await w.harness.listItems();
    for (const bad of [`${ORIGIN}\u0000`, `${ORIGIN}/a\u0007b`, `${ORIGIN}\u007f`, `${ORIGIN}\u0085`]) {
      const err = await w.harness
        .createItem(
          {
            kind: 'queue_item',
            action_class: 'consequential_write',
            lineage: 'invoice-agent',
            mission_binding: { ...binding, mission_origin: bad },
            idempotency_key: 'c-1',
          },
          'operator',
        )
        .then(
          () => undefined,
          (x: unknown) => x,
        );
      assert.ok(err instanceof BatonError, String(err));
      assert.equal(err.code, 'mission_binding_invalid');
      assert.equal(err.details?.['path'], '$.mission_binding.mission_origin');
    }
    assert.deepEqual(await w.harness.listItems(), before);
  });
}
