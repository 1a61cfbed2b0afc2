/**
 * OBS-12 ¶25, fail closed: a signed record is authenticated by a key its producer's pin still
 * holds. Once that key is replaced or unpinned, the record stays stored but its MATCH counts
 * UNKNOWN (`producer_key_unpinned`) in CIF and the series, and the report counts it in
 * `records.producer_unpinned` — on both engines.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { exportEd25519PublicJwk, generateEd25519KeyPair } from '../../src/core/ed25519.js';
import {
  HANDOFF_PROFILE,
  OBSERVATION_PROFILE,
  renderMarkdown,
  signRecord,
} from '../../src/observations/index.js';
import { ProducerKeys } from '../../src/store/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { T0 } from '../occurrences/helpers.js';
import { decidedRecord, prepare } from './support.js';

const ACME = 'urn:example:acme';

const engines = await enginesUnderTest();
for (const e of engines) {
  test(`[${e.name}] OBS-12 ¶25: records signed by a key since replaced or unpinned stay stored and count UNKNOWN producer_key_unpinned`, async (t) => {
    const p = await prepare(t, e);
    await p.continuity.registerProfile({
      ...HANDOFF_PROFILE,
      id: 'urn:example:authority',
      required: ['authority'],
      weights: { authority: '1' },
    });
    const cifOf = async () => {
      const c = await p.continuity.cif({ profile: 'urn:example:authority' });
      const a = c.per_dimension['authority'];
      return [a?.match, a?.unknown, c.producer_key_unpinned];
    };
    const pins = new ProducerKeys(p.store.engine);
    const old = generateEd25519KeyPair();
    await pins.pin({ producer: ACME, keys: [exportEd25519PublicJwk(old.publicKey)] }, 'admin', T0);
    const record = await signRecord(
      {
        ...decidedRecord({ producer: ACME, record_id: 'acme-1' }),
        profile: OBSERVATION_PROFILE,
        audience: 'urn:baton:test-domain',
        issued_at: new Date(p.clock.wallMs()).toISOString(),
        expires_at: new Date(p.clock.wallMs() + 3_600_000).toISOString(),
      },
      old.privateKey,
    );
    assert.equal((await p.continuity.submit(record, 'acme')).status, 'created');
    assert.deepEqual(await cifOf(), [1, 0, []], 'pinned: its MATCH counts');
    assert.equal((await p.continuity.report()).records.producer_unpinned, 0);

    // The key replaced: the record stays, its MATCH no longer counts.
    const next = generateEd25519KeyPair();
    await pins.pin({ producer: ACME, keys: [exportEd25519PublicJwk(next.publicKey)] }, 'admin', T0 + 1);
    assert.deepEqual(await cifOf(), [0, 1, ['acme-1']], 'replaced: UNKNOWN');
    const report = await p.continuity.report();
    assert.equal(report.records.producer_unpinned, 1);
    assert.equal(report.records.total, 1, 'the row stays stored');
    assert.match(renderMarkdown(report), /producer key unpinned \|\n[|-]+\n\| 1 \|.* \| 1 \|/);

    // Unpinned altogether: the same.
    await pins.unpin(ACME, 'admin', T0 + 2);
    assert.deepEqual(await cifOf(), [0, 1, ['acme-1']], 'unpinned: UNKNOWN');
    assert.equal((await p.continuity.list()).length, 1);

    // The old key pinned again (beside the new): the record counts again.
    await pins.pin(
      {
        producer: ACME,
        keys: [exportEd25519PublicJwk(old.publicKey), exportEd25519PublicJwk(next.publicKey)],
      },
      'admin',
      T0 + 3,
    );
    assert.deepEqual(await cifOf(), [1, 0, []], 'its key pinned again');
  });
}
