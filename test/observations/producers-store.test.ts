/**
 * Pinned producer keys in the store (migration 029; OBS-12 ¶25), on both engines: a pin made after
 * the ContinuityStore exists applies to its next submission (the pins are read when a record is
 * verified, never cached), a key set verifies by the envelope's kid so a producer rotates without
 * a gap, a replaced or removed key verifies nothing more, and every change is on the evidence
 * chain `producer:<producer>` with its actor. A second engine on the same store (another server)
 * sees the pin at once.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import {
  exportEd25519PublicJwk,
  generateEd25519KeyPair,
  type Ed25519KeyPair,
} from '../../src/core/ed25519.js';
import { isBatonError } from '../../src/core/errors.js';
import {
  MAX_PRODUCER_ID,
  MAX_RECORD_ID,
  OBSERVATION_PROFILE,
  signRecord,
  type ObservationRecord,
} from '../../src/observations/index.js';
import { listEvidence } from '../../src/store/evidence-log.js';
import { ContinuityStore, ProducerKeys, type StoreEngine } from '../../src/store/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { decidedRecord, prepare, type Prepared } from './support.js';

const engines = await enginesUnderTest();
const ACME = 'urn:example:acme';

function signedBy(p: Prepared, key: Ed25519KeyPair, id: string, producer = ACME): Promise<ObservationRecord> {
  return signRecord(
    decidedRecord({
      producer,
      record_id: id,
      profile: OBSERVATION_PROFILE,
      audience: 'urn:baton:test-domain',
      issued_at: new Date(p.clock.wallMs()).toISOString(),
      expires_at: new Date(p.clock.wallMs() + 3_600_000).toISOString(),
    }),
    key.privateKey,
  );
}

const notPinned = (e: unknown) =>
  isBatonError(e, 'observation_record_invalid') &&
  e.details['rule'] === 'envelope' &&
  e.details['path'] === '$.producer';
const otherKey = (e: unknown) => isBatonError(e, 'kid_mismatch') && e.status === 401;

/**
 * The store's own engine, with `change` run just before each of its next `times` write
 * transactions: after `submit` verified a record, before it stores it (a concurrent admin).
 */
function changingBeforeStore(engine: StoreEngine, change: () => Promise<unknown>, times = 1): StoreEngine {
  let left = times;
  return {
    kind: engine.kind,
    read: (fn) => engine.read(fn),
    transaction: async (fn) => {
      if (left-- > 0) await change();
      return engine.transaction(fn);
    },
    close: () => engine.close(),
  };
}

for (const e of engines) {
  test(`[${e.name}] the longest ids are kept: a ${MAX_PRODUCER_ID}-character producer is pinned and its record with a ${MAX_RECORD_ID}-character record_id stored, evidence chains included; so is a local record with that record_id`, async (t) => {
    const p = await prepare(t, e);
    const key = generateEd25519KeyPair();
    const producer = `urn:example:${'p'.repeat(MAX_PRODUCER_ID - 'urn:example:'.length)}`;
    const id = 'r'.repeat(MAX_RECORD_ID);
    const pinned = await new ProducerKeys(p.store.engine).pin(
      { producer, keys: [exportEd25519PublicJwk(key.publicKey)] },
      'admin:a',
      1_000,
    );
    assert.equal(pinned.status, 'created');
    assert.equal((await p.continuity.submit(await signedBy(p, key, id, producer), 'acme')).status, 'created');
    assert.equal((await p.continuity.submit(decidedRecord({ record_id: id }), 'acme')).status, 'created');
    const chains = await p.store.engine.read((ex) =>
      ex.all<{ subject: string }>('SELECT DISTINCT subject FROM evidence_events WHERE length(subject) > 512'),
    );
    assert.deepEqual(
      chains.map((c) => c.subject.length).sort(),
      [12 + 15 + 1 + MAX_RECORD_ID, 12 + MAX_PRODUCER_ID + 1 + MAX_RECORD_ID, 9 + MAX_PRODUCER_ID].sort(),
    );
  });

  test(`[${e.name}] OBS-12: a pin made while the store runs applies to the next submission; rotation by kid; a removed key verifies nothing`, async (t) => {
    const p = await prepare(t, e);
    const pins = new ProducerKeys(p.store.engine);
    const [oldKey, newKey] = [generateEd25519KeyPair(), generateEd25519KeyPair()];
    const jwk = (k: Ed25519KeyPair) => exportEd25519PublicJwk(k.publicKey);

    await assert.rejects(p.continuity.submit(await signedBy(p, oldKey, 'r-0'), 'acme'), notPinned);
    const first = await pins.pin({ producer: ACME, keys: [jwk(oldKey)] }, 'admin:a', 1_000);
    assert.equal(first.status, 'created');
    assert.equal((await p.continuity.submit(await signedBy(p, oldKey, 'r-1'), 'acme')).status, 'created');
    await assert.rejects(p.continuity.submit(await signedBy(p, newKey, 'r-2'), 'acme'), otherKey);

    // Rotation: both keys for a while, each record verifies under the key its kid names.
    const both = [jwk(oldKey), jwk(newKey)].sort((a, b) => (a.kid < b.kid ? -1 : 1));
    assert.equal((await pins.pin({ producer: ACME, keys: both }, 'admin:a', 2_000)).status, 'updated');
    assert.equal((await pins.pin({ producer: ACME, keys: both }, 'admin:a', 2_500)).status, 'unchanged');
    assert.equal((await p.continuity.submit(await signedBy(p, newKey, 'r-2'), 'acme')).status, 'created');
    assert.equal((await p.continuity.submit(await signedBy(p, oldKey, 'r-3'), 'acme')).status, 'created');

    // The new key alone: the old one verifies nothing from now on.
    assert.equal(
      (await pins.pin({ producer: ACME, keys: [jwk(newKey)] }, 'admin:b', 3_000)).status,
      'updated',
    );
    await assert.rejects(p.continuity.submit(await signedBy(p, oldKey, 'r-4'), 'acme'), otherKey);
    assert.equal((await p.continuity.submit(await signedBy(p, newKey, 'r-4'), 'acme')).status, 'created');

    // Unpinned: refused as if never pinned; records already stored stay.
    assert.equal(await pins.unpin(ACME, 'admin:b', 4_000), 'removed');
    assert.equal(await pins.unpin(ACME, 'admin:b', 4_500), 'absent');
    await assert.rejects(p.continuity.submit(await signedBy(p, newKey, 'r-5'), 'acme'), notPinned);
    assert.deepEqual((await p.continuity.list()).map((r) => r.record_id).sort(), [
      'r-1',
      'r-2',
      'r-3',
      'r-4',
    ]);

    // The audit trail: every change (never the unchanged re-pin or the absent unpin), in order.
    const chain = await p.store.engine.read((ex) => listEvidence(ex, `producer:${ACME}`));
    assert.deepEqual(
      chain.map((ev) => [ev.type, ev.actor, ev.at]),
      [
        ['observation_producer_pinned', 'admin:a', 1_000],
        ['observation_producer_pinned', 'admin:a', 2_000],
        ['observation_producer_pinned', 'admin:b', 3_000],
        ['observation_producer_unpinned', 'admin:b', 4_000],
      ],
    );
    const bodies = chain.map((ev) => ev.body as { keys?: { kid: string }[]; previous_kids: string[] | null });
    assert.deepEqual(bodies[0]?.previous_kids, null);
    assert.deepEqual(
      bodies[2]?.previous_kids,
      both.map((k) => k.kid),
    );
    assert.deepEqual(
      bodies[2]?.keys?.map((k) => k.kid),
      [jwk(newKey).kid],
    );
    assert.deepEqual(bodies[3]?.previous_kids, [jwk(newKey).kid]);
  });

  test(`[${e.name}] a pin made through one engine is read by a ContinuityStore on another (two servers, one store)`, async (t) => {
    const p = await prepare(t, e);
    const other = new ContinuityStore({
      engine: p.store.another(),
      signingKey: p.key.privateKey,
      clock: p.clock,
    });
    const acme = generateEd25519KeyPair();
    await assert.rejects(other.submit(await signedBy(p, acme, 'x-1'), 'acme'), notPinned);
    const keys = [exportEd25519PublicJwk(acme.publicKey)];
    await new ProducerKeys(p.store.engine).pin({ producer: ACME, keys }, 'admin:a', 1_000);
    assert.equal((await other.submit(await signedBy(p, acme, 'x-1'), 'acme')).status, 'created');
    await new ProducerKeys(p.store.engine).unpin(ACME, 'admin:a', 2_000);
    await assert.rejects(other.submit(await signedBy(p, acme, 'x-2'), 'acme'), notPinned);
  });

  test(`[${e.name}] OBS-12: a pin changed between a record's verification and its storing transaction is seen there — unpinned: refused; rotated: verified again; never settling: store_busy`, async (t) => {
    const p = await prepare(t, e);
    const pins = new ProducerKeys(p.store.engine);
    const [oldKey, newKey] = [generateEd25519KeyPair(), generateEd25519KeyPair()];
    const jwk = (k: Ed25519KeyPair) => exportEd25519PublicJwk(k.publicKey);
    const racing = (change: () => Promise<unknown>, times?: number) =>
      new ContinuityStore({
        engine: changingBeforeStore(p.store.engine, change, times),
        signingKey: p.key.privateKey,
        clock: p.clock,
      });
    await pins.pin({ producer: ACME, keys: [jwk(oldKey)] }, 'admin:a', 1_000);

    // Unpinned after verification: refused as if never pinned, nothing stored.
    const unpinning = racing(() => pins.unpin(ACME, 'admin:a', 2_000));
    await assert.rejects(unpinning.submit(await signedBy(p, oldKey, 'u-1'), 'acme'), notPinned);
    assert.equal(await p.continuity.get(ACME, 'u-1'), undefined);

    // Rotated to old+new: verified again under the new set, and stored.
    await pins.pin({ producer: ACME, keys: [jwk(oldKey)] }, 'admin:a', 3_000);
    const both = [jwk(oldKey), jwk(newKey)].sort((a, b) => (a.kid < b.kid ? -1 : 1));
    const widening = racing(() => pins.pin({ producer: ACME, keys: both }, 'admin:a', 4_000));
    assert.equal((await widening.submit(await signedBy(p, oldKey, 'u-2'), 'acme')).status, 'created');

    // Rotated to the new key alone: the old key's record verifies no more.
    const narrowing = racing(() => pins.pin({ producer: ACME, keys: [jwk(newKey)] }, 'admin:a', 5_000));
    await assert.rejects(narrowing.submit(await signedBy(p, oldKey, 'u-3'), 'acme'), otherKey);
    assert.equal(await p.continuity.get(ACME, 'u-3'), undefined);

    // A pin that changes before every storing transaction: three rounds, then store_busy (503,
    // retryable), nothing stored; the next quiet submission is stored.
    let flip = 0;
    const flapping = racing(
      () => pins.pin({ producer: ACME, keys: flip++ % 2 === 0 ? both : [jwk(newKey)] }, 'admin:a', 6_000),
      3,
    );
    await assert.rejects(
      flapping.submit(await signedBy(p, newKey, 'u-4'), 'acme'),
      (err: unknown) => isBatonError(err, 'store_busy') && err.status === 503 && err.retryable,
    );
    assert.equal(flip, 3);
    assert.equal(await p.continuity.get(ACME, 'u-4'), undefined);
    assert.equal((await flapping.submit(await signedBy(p, newKey, 'u-4'), 'acme')).status, 'created');
    assert.deepEqual((await p.continuity.list()).map((r) => r.record_id).sort(), ['u-2', 'u-4']);
  });
}
