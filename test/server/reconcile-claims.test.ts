/**
 * The single-asker rule's claim (src/store/reconciliation.ts) takes only an occurrence that is
 * still entered, on both engines: the due list is read before the claim, and a server that
 * resolved the occurrence and dropped its claim in between must not be followed by a second ask
 * (the three-server test saw exactly that under load: an answerable occurrence looked up twice).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reconcileOccurrence, StatusSources } from '../../src/providers/index.js';
import { ReconciliationStore } from '../../src/store/reconciliation.js';
import { postgresForTests } from '../support/postgres.js';
import { openReconcileWorld, pay, type EngineName } from './reconcile-world.js';

const db = await postgresForTests();
const engines: EngineName[] = db === undefined ? ['sqlite'] : ['sqlite', 'postgres'];

for (const engine of engines) {
  test(`[${engine}] a claim takes an entered occurrence, never one resolved after the due list was read`, async (t) => {
    const w = await openReconcileWorld(t, {
      engine,
      webhooks: false,
      ...(engine === 'postgres' && { postgresUrl: await db!.schema() }),
    });
    const store = new ReconciliationStore(w.opened.engine);
    const lost = await pay(w, 'inv-claim-lost', ['drop_response_after_apply']);
    const now = w.clock.wallMs();
    const due = await store.dueOccurrences(now, 10);
    assert.deepEqual(due, [lost.occurrence.id]);
    // Another server's whole visit between this server's read and its claim: asked, resolved, released.
    const other = await store.claim(due, 'server-b', now, now + 60_000);
    assert.deepEqual(
      other.map((c) => c.occurrenceId),
      [lost.occurrence.id],
    );
    const sources = new StatusSources({ keys: w.keys, clock: w.clock });
    const settled = await reconcileOccurrence(w.svc, sources, lost.occurrence.id);
    assert.equal(settled.occurrence.unresolved, false);
    await store.release('server-b', [{ kind: 'resolved', occurrenceId: lost.occurrence.id }]);
    assert.deepEqual(await store.claim(due, 'server-a', now, now + 60_000), []);
    assert.deepEqual(await store.dueOccurrences(now, 10), []);
  });
}
