/**
 * `baton sor`: a reference system of record (inventory allocations) built on the leases plugin, with
 * its own SQLite file. It is a development and test fixture for PTCL, not a production inventory.
 */
import { createHash, timingSafeEqual, type KeyObject } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { systemClock, type Clock } from '../core/clock.js';
import { BatonError } from '../core/errors.js';
import { exportEd25519PublicJwk } from '../core/ed25519.js';
import type { JsonObject } from '../core/json.js';
import { LEASE_ID_MAX_LENGTH, LeaseService, keyRing, leasePlugin, type SigningKey } from '../leases/index.js';
import { ALLOCATIONS_PATH, SEED, inventoryModel } from './inventory.js';
import { SqliteLeaseLedger } from './sqlite-ledger.js';

export interface SorOptions {
  dbPath: string;
  /** Signs every receipt. */
  signer: SigningKey;
  /** Gateways whose leases are honoured. */
  trusted: readonly KeyObject[];
  /** Bearer token for operator routes (escrow approval, audit). */
  operatorToken: string;
  port?: number;
  host?: string;
  /** Canonical origin of target URIs; default `http://HOST:PORT` once listening. */
  publicOrigin?: string;
  clock?: Clock;
  /** How long a transaction waits for another connection's write lock before `store_busy` (default 10 s). */
  busyTimeoutMs?: number;
  /** How often overdue escrows are let lapse; 0 disables the timer (tests sweep explicitly). */
  sweepIntervalMs?: number;
}

export interface RunningSor {
  url: string;
  origin: string;
  app: FastifyInstance;
  service: LeaseService;
  ledger: SqliteLeaseLedger;
  targetUri(id: string): string;
  close(): Promise<void>;
}

/**
 * Why `text` is not an origin — `scheme://host[:port]`, optionally one trailing slash, nothing else
 * (no user info, path, query or fragment) — or undefined when it is one. Receipts name
 * `<origin><path>`: a path, query or fragment here would end up inside every signed target URI.
 */
export function publicOriginDefect(text: string): string | undefined {
  const bare = text.endsWith('/') ? text.slice(0, -1) : text;
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#@\s]+$/.test(bare) || !URL.canParse(bare))
    return 'must be an origin, scheme://host[:port], with no path, query, fragment or user info';
  if (new URL(bare).origin === 'null') return 'must be an origin with a host (http or https)';
  return undefined;
}

function bearerCheck(token: string): (request: FastifyRequest) => boolean {
  const want = createHash('sha256').update(token).digest();
  return (request) => {
    const header = request.headers.authorization;
    // RFC 9110 §11.1 (was RFC 7235 §2.1): the auth-scheme is case-insensitive.
    if (typeof header !== 'string' || !/^bearer /i.test(header)) return false;
    return timingSafeEqual(createHash('sha256').update(header.slice(7)).digest(), want);
  };
}

export async function startSor(o: SorOptions): Promise<RunningSor> {
  const originDefect = o.publicOrigin === undefined ? undefined : publicOriginDefect(o.publicOrigin);
  if (originDefect !== undefined) {
    throw new BatonError('input_invalid', `publicOrigin ${originDefect}`, { member: 'publicOrigin' });
  }
  const clock = o.clock ?? systemClock;
  const ledger = new SqliteLeaseLedger(
    o.dbPath,
    o.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: o.busyTimeoutMs },
  );
  const service = new LeaseService({
    ledger,
    model: inventoryModel,
    clock,
    signer: o.signer,
    trusted: keyRing(o.trusted),
  });
  let origin = o.publicOrigin ?? '';
  const targetUri = (id: string): string => `${origin}${ALLOCATIONS_PATH}/${encodeURIComponent(id)}`;
  // Every lease_id must route (docs/leases.md §8): leasePlugin refuses a smaller maxParamLength.
  const app = Fastify({ logger: false, routerOptions: { maxParamLength: LEASE_ID_MAX_LENGTH } });
  await app.register(leasePlugin, {
    service,
    collectionPath: ALLOCATIONS_PATH,
    targetUri,
    origin: () => origin,
    isOperator: bearerCheck(o.operatorToken),
    receiptJwk: exportEd25519PublicJwk(o.signer.privateKey) as unknown as JsonObject,
  });
  const host = o.host ?? '127.0.0.1';
  try {
    await app.listen({ port: o.port ?? 0, host });
  } catch (error) {
    ledger.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : (o.port ?? 0);
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  origin = (o.publicOrigin ?? url).replace(/\/+$/, '');
  // Origin pin: every resources row, lease and receipt names `<origin><path>`; state kept under one
  // origin must never be seeded afresh under another (epochs would move backwards, draft §4 rule 2;
  // consumed lease_ids and receipts would stop applying). A lease signed for the old URI names a
  // different target, so it could never reach the old row either. So: refuse, typed, and say how.
  try {
    const pinned = ledger.pinOrigin(origin, (target) => {
      const at = target.indexOf(`${ALLOCATIONS_PATH}/`);
      return at > 0 ? target.slice(0, at) : undefined;
    });
    if (pinned !== origin) {
      throw new BatonError(
        'conflict',
        `this system of record database belongs to origin ${pinned}, not ${origin}: start it with --public-url ${pinned} (publicOrigin), or use another --db`,
        { member: 'publicOrigin', pinned, origin },
      );
    }
  } catch (error) {
    await app.close();
    ledger.close();
    throw error;
  }
  for (const { allocation, epoch } of SEED)
    ledger.seed(targetUri(allocation.allocation_id), allocation, epoch, clock.wallMs());
  // A failed sweep (say, the database busy beyond its timeout) is reported and retried next tick;
  // overdue escrows are also lapsed on every approval and queue read, so nothing depends on one tick.
  const sweep = (): void => {
    try {
      service.sweep();
    } catch (error) {
      process.emitWarning(`escrow sweep failed: ${error instanceof Error ? error.message : 'unknown error'}`);
    }
  };
  const every = o.sweepIntervalMs ?? 1000;
  const timer = every > 0 ? setInterval(sweep, every) : undefined;
  timer?.unref();
  return {
    url,
    origin,
    app,
    service,
    ledger,
    targetUri,
    async close() {
      if (timer !== undefined) clearInterval(timer);
      await app.close();
      ledger.close();
    },
  };
}
