/**
 * Migration 35 over a store written before it, on both engines: a pin stored with
 * `bounds.max_stale_seconds` 0 — which then meant "the issuer advertised none" — reads as `null`
 * (not advertised) after it, keeping the meaning it was registered with and its digest; another
 * bound is untouched; a pin registered after it with an explicit 0 keeps 0, the strictest bound
 * (MSG-03, docs/missions.md "The issuer pin").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isBatonError } from '../../src/core/errors.js';
import { readIssuerRegistration } from '../../src/missions/index.js';
import { migrate } from '../../src/store/migrations.js';
import { migrations } from '../../src/store/migrations/index.js';
import { IssuerRegistry } from '../../src/store/missions-issuers.js';
import { LOOPBACK_PUSH_PIN } from '../missions/fixtures.js';
import { enginesUnderTest } from './engines.js';

const engines = await enginesUnderTest();
const BEFORE_35 = migrations.filter((m) => m.id < 35);
const THROUGH_35 = migrations.filter((m) => m.id <= 35);

const pinned = (issuer: string, stale: number | null) =>
  readIssuerRegistration({
    pin: {
      ...LOOPBACK_PUSH_PIN,
      issuer,
      jwks_uri: `${issuer}/jwks`,
      endpoints: { status: `${issuer}/status` },
      bounds: { max_stale_seconds: stale },
    },
    pushBearer: 'stream-bearer-0123456789abcdef-0123456789',
  });

for (const e of engines) {
  test(`[${e.name}] migration 35 reads a stored 0 bound as not advertised (null), other bounds and the digest kept`, async (t) => {
    const store = await e.open(t);
    await migrate(store.engine, { list: BEFORE_35 });
    const registry = new IssuerRegistry(store.engine);
    const zero = pinned('http://127.0.0.1:9', 0);
    const other = pinned('http://127.0.0.1:10', 45);
    await registry.register(zero, 'admin:before', 1_000);
    await registry.register(other, 'admin:before', 1_000);
    const result = await migrate(store.engine, { list: THROUGH_35 });
    assert.deepEqual(
      result.applied.map((m) => m.id),
      [35],
    );
    const read = await registry.get(zero.pin.issuer);
    assert.equal(read?.pin.bounds.max_stale_seconds, null, 'a stored 0 meant "not advertised"');
    assert.equal(read?.pinDigest, zero.pinDigest, 'the digest names the pin as registered');
    assert.equal((await registry.get(other.pin.issuer))?.pin.bounds.max_stale_seconds, 45);
    // Registering again compares the pins, not the digests: the pin a file should now say (null)
    // is the one held; the 0 it said before now means the strictest bound, another pin (immutable).
    const again = await registry.register(pinned(zero.pin.issuer, null), 'admin:after', 2_000);
    assert.equal(again.action, 'unchanged');
    await assert.rejects(
      registry.register(pinned(zero.pin.issuer, 0), 'admin:after', 2_000),
      (err: unknown) => isBatonError(err, 'mission_issuer_conflict'),
    );
    assert.equal((await registry.get(zero.pin.issuer))?.pin.bounds.max_stale_seconds, null);
    const strict = pinned('http://127.0.0.1:11', 0);
    await registry.register(strict, 'admin:after', 2_000);
    assert.equal((await registry.get(strict.pin.issuer))?.pin.bounds.max_stale_seconds, 0);
  });
}
