/**
 * Migration 33 (the unpin history of Mission issuers) over a store written before it, on both
 * engines: a pin registered before the migration is kept as it was, and after it can be unpinned
 * — its row moves to `msn_issuer_unpins` with its digest and who registered it, and the issuer
 * can be pinned again (docs/missions.md "Unpinning an issuer").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readIssuerRegistration } from '../../src/missions/index.js';
import { migrate } from '../../src/store/migrations.js';
import { migrations } from '../../src/store/migrations/index.js';
import { IssuerRegistry } from '../../src/store/missions-issuers.js';
import { LOOPBACK_PUSH_PIN } from '../missions/fixtures.js';
import { enginesUnderTest } from './engines.js';

const engines = await enginesUnderTest();
const BEFORE_33 = migrations.filter((m) => m.id < 33);
const THROUGH_33 = migrations.filter((m) => m.id <= 33);

const reg = readIssuerRegistration({
  pin: LOOPBACK_PUSH_PIN,
  pushBearer: 'stream-bearer-0123456789abcdef-0123456789',
});

for (const e of engines) {
  test(`[${e.name}] migration 33 keeps the pins registered before it, which can then be unpinned and pinned again`, async (t) => {
    const store = await e.open(t);
    await migrate(store.engine, { list: BEFORE_33 });
    const registry = new IssuerRegistry(store.engine);
    assert.equal((await registry.register(reg, 'admin:before', 1_000)).action, 'created');
    const result = await migrate(store.engine, { list: THROUGH_33 });
    assert.deepEqual(
      result.applied.map((m) => m.id),
      [33],
    );
    assert.equal((await registry.get(reg.pin.issuer))?.pinDigest, reg.pinDigest, 'the pin is kept');
    assert.equal(await registry.unpin(reg.pin.issuer, 'admin:after', 2_000), 'removed');
    assert.equal(await registry.get(reg.pin.issuer), undefined);
    assert.deepEqual(await registry.unpinned(reg.pin.issuer), [
      {
        issuer: reg.pin.issuer,
        pinDigest: reg.pinDigest,
        registeredAt: 1_000,
        registeredBy: 'admin:before',
        unpinnedAt: 2_000,
        unpinnedBy: 'admin:after',
      },
    ]);
    assert.equal(await registry.unpin(reg.pin.issuer, 'admin:after', 3_000), 'absent');
    assert.equal((await registry.register(reg, 'admin:again', 4_000)).action, 'created');
  });
}
