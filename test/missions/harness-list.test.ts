/**
 * `listItems` by keyset (created_at, id) on both engines: the pages of `GET /v1/harness/items`
 * and `baton harness list` (migration 018). Items created in the same millisecond are told apart
 * by id, so no item is skipped or listed twice at a page boundary.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { WorkItemRecord } from '../../src/missions/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { T0, binding, verifiedSignal } from './fixtures.js';
import { world } from './world.js';

const engines = await enginesUnderTest();

for (const e of engines) {
  test(`[${e.name}] listItems pages by (created_at, id): every item once, in order, ties broken by id; filters hold across pages`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const made: WorkItemRecord[] = [];
    for (let i = 0; i < 9; i++) {
      made.push(
        await w.harness.createItem(
          {
            kind: 'queue_item',
            action_class: 'consequential_write',
            lineage: 'invoice-agent',
            mission_binding: binding,
          },
          'executor',
        ),
      );
    }
    // The world's clock does not move between creates: all nine share one created_at.
    assert.equal(new Set(made.map((m) => m.createdAt)).size, 1);
    await w.harness.stop(made[4]?.id ?? '', 'suppress', 'operator');
    const seen: WorkItemRecord[] = [];
    let after: { createdAt: number; id: string } | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await w.harness.listItems({ limit: 4, ...(after && { after }) });
      seen.push(...page);
      const last = page.at(-1);
      if (page.length < 4 || last === undefined) break;
      after = { createdAt: last.createdAt, id: last.id };
    }
    const ids = seen.map((s) => s.id);
    // The database's own order (its collation decides between equal created_at): one list of all.
    const whole = (await w.harness.listItems({ limit: 100 })).map((s) => s.id);
    assert.deepEqual(ids, whole);
    assert.deepEqual(new Set(ids), new Set(made.map((m) => m.id)));
    assert.equal(ids.length, 9);
    const queued = await w.harness.listItems({
      states: ['queued'],
      limit: 3,
      after: { createdAt: T0 - 1, id: '' },
    });
    assert.equal(queued.length, 3);
    assert.ok(queued.every((q) => q.state === 'queued'));
    const rest = await w.harness.listItems({
      states: ['queued'],
      limit: 100,
      after: { createdAt: queued[2]?.createdAt ?? 0, id: queued[2]?.id ?? '' },
    });
    assert.equal(queued.length + rest.length, 8);
  });
}
