// The client contract against InProcessBatonClient over a real SQLite file, with Baton's status
// sources (src/providers) holding the sandbox's keys, as the server has them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InProcessBatonClient } from '../../src/client/index.js';
import { BatonError, isBatonError } from '../../src/core/errors.js';
import { StatusSources } from '../../src/providers/index.js';
import { runContract } from './contract.js';
import { CountingAdapter, openStore, payments, startSandbox } from './support.js';

runContract('in-process', (_t, store, provider) =>
  Promise.resolve(
    new InProcessBatonClient({
      service: store.service,
      statusSources: new StatusSources({ keys: provider.keys }),
    }),
  ),
);

test('in-process without status sources: perform sends once and stops at awaiting_status, saying why', async (t) => {
  const provider = await startSandbox(t);
  const store = await openStore(t, provider);
  const client = new InProcessBatonClient({ service: store.service });
  const ex = await client.takeover('invoice-agent');
  const adapter = new CountingAdapter(provider);
  const r = await ex.perform(payments(provider)('k-no-sources'), adapter);
  assert.deepEqual(
    [r.status, r.reason, r.errorCode, r.missingKnowledge, r.adapterCalls],
    ['unresolved', 'awaiting_status', undefined, 'unauthenticated', 1],
  );
  assert.ok(r.occurrenceId !== null);
  await assert.rejects(ex.reconcile(r.occurrenceId), (e: unknown) => isBatonError(e, 'unavailable'));
  assert.equal(adapter.calls, 1);
});

/**
 * The real status-source layer, except that asking any source throws its own refusal. A fake,
 * because the real sandbox cannot make a query throw (every transport or answer failure comes back
 * as an `unavailable` reading).
 */
class RefusingSources extends StatusSources {
  override query(): Promise<never> {
    return Promise.reject(new BatonError('provider_binding_conflict', 'not the pinned profile'));
  }
}

test("in-process: a status source that cannot be asked leaves perform awaiting_status with the failure's code", async (t) => {
  const provider = await startSandbox(t);
  const store = await openStore(t, provider);
  const client = new InProcessBatonClient({
    service: store.service,
    statusSources: new RefusingSources({ keys: provider.keys }),
  });
  const ex = await client.takeover('invoice-agent');
  const adapter = new CountingAdapter(provider);
  const r = await ex.perform(payments(provider)('k-source-throws'), adapter);
  assert.deepEqual(
    [r.status, r.reason, r.errorCode, r.missingKnowledge, r.adapterCalls],
    ['unresolved', 'awaiting_status', 'provider_binding_conflict', 'unavailable', 1],
  );
  assert.equal(adapter.calls, 1);
});

test('in-process: acknowledge-and-settle right after its own entry still refuses a generation retired in between, recording nothing', async (t) => {
  const provider = await startSandbox(t);
  const store = await openStore(t, provider);
  const client = new InProcessBatonClient({
    service: store.service,
    statusSources: new StatusSources({ keys: provider.keys }),
  });
  const ex = await client.takeover('invoice-agent');
  const { ticket } = await ex.createAndEnter(payments(provider)('k-retired-ack'));
  assert.ok(ticket !== null);
  await client.takeover('invoice-agent');
  const ack = {
    occurrenceId: ticket.occurrence.id,
    observedAt: Date.now(),
    result: 'unavailable' as const,
    carried: {},
  };
  await assert.rejects(ex.acknowledgeAndSettle(ack), (e: unknown) => isBatonError(e, 'generation_retired'));
  const detail = await client.getOccurrence(ticket.occurrence.id);
  assert.ok(!detail.evidence.some((e) => e.type === 'observation_recorded'), 'nothing was recorded');
});
