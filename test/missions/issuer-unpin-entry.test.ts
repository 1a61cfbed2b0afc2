/**
 * A3.6 provider entry after an issuer unpin (docs/missions.md "Unpinning an issuer"): an item
 * dispatched under an active, fresh Mission may enter — until its issuer is unpinned. The unpin
 * makes the view stale in its own transaction, so the entry check (which never fetches Status)
 * refuses the entry, nothing is sent, the reservation is kept. Both engines; views driven with
 * pre-verified Status objects, the provider the occurrences tests' counting simulator.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readIssuerRegistration } from '../../src/missions/index.js';
import { IssuerRegistry } from '../../src/store/missions-issuers.js';
import { SimulatedProvider } from '../occurrences/helpers.js';
import { enginesUnderTest } from '../store/engines.js';
import { code, LOOPBACK_PUSH_PIN, ORIGIN, T0, verifiedStatus } from './fixtures.js';
import { dispatchedItem, world, type World } from './world.js';

const engines = await enginesUnderTest();

const PIN = {
  ...LOOPBACK_PUSH_PIN,
  issuer: ORIGIN,
  jwks_uri: `${ORIGIN}/jwks`,
  endpoints: { status: `${ORIGIN}/status` },
};

async function pinned(w: World): Promise<IssuerRegistry> {
  const registry = new IssuerRegistry(w.store.engine);
  const reg = readIssuerRegistration({ pin: PIN, pushBearer: 'stream-bearer-0123456789abcdef-0123456789' });
  assert.equal((await registry.register(reg, 'admin:test', T0)).action, 'created');
  return registry;
}

async function dispatched(w: World, key: string) {
  const { g, input } = await dispatchedItem(w, key);
  const created = await w.occurrences.create(input);
  return { g, occurrence: created.occurrence };
}

for (const e of engines) {
  test(`[${e.name}] A3.6 an entry allowed under an active Mission is refused once its issuer is unpinned; nothing sent, still reserved`, async (t) => {
    const w = await world(t, e);
    const registry = await pinned(w);
    await w.harness.applyVerifiedStatus(verifiedStatus('active', T0));
    const provider = new SimulatedProvider();

    const before = await dispatched(w, 'pay-1');
    const ticket = await w.occurrences.enter({
      credential: before.g.credential,
      occurrenceId: before.occurrence.id,
    });
    assert.equal(ticket.occurrence.phase, 'entered', 'entry proceeds while the issuer is pinned');

    const after = await dispatched(w, 'pay-2');
    // The same instant: the view is stale from the unpin on, not only from a later tick.
    assert.equal(await registry.unpin(ORIGIN, 'admin:test', w.clock.wallMs()), 'removed');
    assert.equal(
      await code(
        w.occurrences
          .enter({ credential: after.g.credential, occurrenceId: after.occurrence.id })
          .then((tk) => provider.send(tk)),
      ),
      'mission_status_unavailable',
    );
    assert.equal(provider.totalCalls, 0, 'nothing sent');
    const o = await w.occurrences.getOccurrence(after.occurrence.id);
    assert.equal(o.occurrence.phase, 'reserved');
    const checked = o.evidence.filter((x) => x.type === 'mission_checked').at(-1)?.body as
      Record<string, unknown> | undefined;
    assert.deepEqual([checked?.['state'], checked?.['reason']], ['active', 'mission_state_stale']);
  });
}
