/**
 * A system of record assembled the way docs/leases.md §8 tells an integrator to: a real SQLite
 * ledger, a LeaseService with a chosen ResourceModel, leasePlugin registered on a Fastify app —
 * optionally under a `prefix` — listening on loopback. For tests of the plugin as others mount it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { ManualClock } from '../../src/core/clock.js';
import { exportEd25519PublicJwk, generateEd25519KeyPair } from '../../src/core/ed25519.js';
import type { JsonObject } from '../../src/core/json.js';
import {
  keyRing,
  LEASE_ID_MAX_LENGTH,
  leasePlugin,
  LeaseService,
  type KeyResolver,
  type ResourceModel,
  type SigningKey,
} from '../../src/leases/index.js';
import { SEED } from '../../src/sor/inventory.js';
import { SqliteLeaseLedger } from '../../src/sor/sqlite-ledger.js';
import { OPERATOR, T0 } from './helpers.js';

export const COLLECTION = '/api/items';

export interface MountedSor {
  /** `http://127.0.0.1:PORT`: the system of record's origin (no prefix). */
  origin: string;
  /** origin + prefix: where the plugin's routes live. */
  base: string;
  clock: ManualClock;
  gateway: SigningKey;
  receiptKeys: KeyResolver;
  ledger: SqliteLeaseLedger;
  /** The canonical URI of item `id` (seeded: item 1, the reference seed 99281's state). */
  targetUri(id: string): string;
  close(): Promise<void>;
}

/** `log`, when given, receives the server's error-level log lines (JSON, one per line). */
export async function mountSor(model: ResourceModel, prefix = '', log?: string[]): Promise<MountedSor> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-mounted-sor-'));
  const ledger = new SqliteLeaseLedger(join(dir, 'sor.db'));
  const clock = new ManualClock(T0);
  const gw = generateEd25519KeyPair();
  const sor = generateEd25519KeyPair();
  const service = new LeaseService({
    ledger,
    model,
    clock,
    signer: { privateKey: sor.privateKey, kid: sor.kid },
    trusted: keyRing([gw.publicKey]),
  });
  let origin = '';
  const base = (): string => `${origin}${prefix.replace(/\/+$/, '')}`;
  const targetUri = (id: string): string => `${base()}${COLLECTION}/${encodeURIComponent(id)}`;
  const stream = { write: (line: string): void => void log?.push(line) };
  const app = Fastify({
    logger: log === undefined ? false : { level: 'error', stream },
    routerOptions: { maxParamLength: LEASE_ID_MAX_LENGTH },
  });
  await app.register(leasePlugin, {
    prefix,
    service,
    collectionPath: COLLECTION,
    targetUri,
    origin: () => origin,
    isOperator: (r) => r.headers.authorization === `Bearer ${OPERATOR}`,
    receiptJwk: exportEd25519PublicJwk(sor.privateKey) as unknown as JsonObject,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  origin = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  ledger.seed(targetUri('1'), SEED[0]!.allocation, SEED[0]!.epoch, T0);
  return {
    origin,
    base: base(),
    clock,
    gateway: { privateKey: gw.privateKey, kid: gw.kid },
    receiptKeys: keyRing([sor.publicKey]),
    ledger,
    targetUri,
    async close() {
      await app.close();
      ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
