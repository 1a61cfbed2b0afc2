/**
 * leasePlugin's required `origin` (docs/leases.md §8): a caller that omits it — JavaScript, or
 * TypeScript through a cast — is refused when the plugin registers, with a typed error naming the
 * member, instead of a TypeError and a receipt-less 500 on each recover or approve refusal.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import Fastify from 'fastify';
import { ManualClock } from '../../src/core/clock.js';
import { exportEd25519PublicJwk, generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { isBatonError } from '../../src/core/errors.js';
import {
  LEASE_ID_MAX_LENGTH,
  keyRing,
  leasePlugin,
  LeaseService,
  type LeasePluginOptions,
} from '../../src/leases/index.js';
import { ALLOCATIONS_PATH, inventoryModel } from '../../src/sor/inventory.js';
import { SqliteLeaseLedger } from '../../src/sor/sqlite-ledger.js';

function options(t: TestContext): LeasePluginOptions {
  const dir = mkdtempSync(join(tmpdir(), 'baton-lease-plugin-'));
  const ledger = new SqliteLeaseLedger(join(dir, 'sor.db'));
  t.after(() => {
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const sor = generateEd25519KeyPair();
  const gateway = generateEd25519KeyPair();
  const service = new LeaseService({
    ledger,
    model: inventoryModel,
    clock: new ManualClock(Date.UTC(2026, 0, 1)),
    signer: { privateKey: sor.privateKey, kid: sor.kid },
    trusted: keyRing([gateway.publicKey]),
  });
  return {
    service,
    collectionPath: ALLOCATIONS_PATH,
    targetUri: (id) => `https://sor.example${ALLOCATIONS_PATH}/${id}`,
    origin: () => 'https://sor.example',
    isOperator: () => false,
    receiptJwk: exportEd25519PublicJwk(sor.privateKey),
  };
}

const refusedOrigin = (e: unknown): boolean =>
  isBatonError(e, 'input_invalid') && e.details['member'] === 'origin';

test('registering leasePlugin without origin fails at registration with input_invalid (member origin)', async (t) => {
  const { origin: _omitted, ...rest } = options(t);
  const app = Fastify({ logger: false, routerOptions: { maxParamLength: LEASE_ID_MAX_LENGTH } });
  t.after(() => app.close());
  await assert.rejects(async () => {
    await app.register(leasePlugin, rest as LeasePluginOptions);
  }, refusedOrigin);
});

test('an origin that is not a function is refused the same way', async (t) => {
  const app = Fastify({ logger: false, routerOptions: { maxParamLength: LEASE_ID_MAX_LENGTH } });
  t.after(() => app.close());
  const bad = { ...options(t), origin: 'https://sor.example' } as unknown as LeasePluginOptions;
  await assert.rejects(async () => {
    await app.register(leasePlugin, bad);
  }, refusedOrigin);
});

test('with origin the plugin registers and serves', async (t) => {
  const app = Fastify({ logger: false, routerOptions: { maxParamLength: LEASE_ID_MAX_LENGTH } });
  t.after(() => app.close());
  await app.register(leasePlugin, options(t));
  const res = await app.inject({ method: 'GET', url: '/ptcl/receipt-key' });
  assert.equal(res.statusCode, 200);
});

const refusedParamLength = (e: unknown): boolean =>
  isBatonError(e, 'input_invalid') &&
  e.details['member'] === 'maxParamLength' &&
  e.details['minimum'] === LEASE_ID_MAX_LENGTH;

// Fastify's default router cuts path parameters at 100 characters: a lease with a longer id (up to
// 256 are accepted) would commit and then never be recoverable or approvable (draft §4 rule 3).
test('a host whose router cuts path parameters below the longest lease_id is refused at registration', async (t) => {
  for (const config of [
    {},
    { routerOptions: { maxParamLength: LEASE_ID_MAX_LENGTH - 1 } },
    // Fastify reports the routerOptions default (100) here, whatever the top-level option: refused.
    { maxParamLength: 1000, routerOptions: { ignoreTrailingSlash: false } },
  ]) {
    const app = Fastify({ logger: false, ...config });
    t.after(() => app.close());
    await assert.rejects(async () => {
      await app.register(leasePlugin, options(t));
    }, refusedParamLength);
  }
});

test('a router with maxParamLength at least the longest lease_id is accepted', async (t) => {
  for (const config of [
    { routerOptions: { maxParamLength: LEASE_ID_MAX_LENGTH } },
    { routerOptions: { maxParamLength: 4096 } },
  ]) {
    const app = Fastify({ logger: false, ...config });
    t.after(() => app.close());
    await app.register(leasePlugin, options(t));
    const res = await app.inject({ method: 'GET', url: `/ptcl/leases/${'a'.repeat(LEASE_ID_MAX_LENGTH)}` });
    assert.equal(res.statusCode, 404);
    assert.equal(res.json<{ code: string }>().code, 'not_found');
  }
});
