/**
 * Wiring: the occurrences service over a store engine, and over a SQLite file in one call.
 * The domain's Ed25519 private key lives in `<db>.domain-key.pem` beside the database (mode 0600);
 * only its public key and kid enter the database (DESIGN.md §3, "Coordination domain").
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import type { Clock } from '../core/clock.js';
import { CursorCodec } from '../core/cursor.js';
import {
  ed25519Kid,
  exportPrivatePem,
  generateEd25519KeyPair,
  importEd25519PrivateKey,
  publicKeyRaw,
} from '../core/ed25519.js';
import { BatonError, isBatonError } from '../core/errors.js';
import type { IdSource } from '../core/ids.js';
import { OccurrencesService, type OccurrencesUnitOfWork } from '../occurrences/index.js';
import type { StoreEngine } from './engine.js';
import { migrate } from './migrations.js';
import { OccurrencesReaderSql, type ProfileCache } from './occurrences-reader.js';
import { OccurrencesRepositorySql } from './occurrences-repository.js';
import type { MissionGate } from './missions-gate.js';
import { harnessGate, openHarnessOn } from './missions.js';
import {
  DEFAULT_MATRIX,
  type MissionsService,
  type PinnedMatrix,
  type StatusFetcher,
} from '../missions/index.js';
import { openSqliteEngine, type SqliteEngineOptions } from './sqlite.js';

/** `gate`: the harness's Mission gate (A3.6); without one, governed occurrences never enter. */
export function occurrencesUnitOfWork(engine: StoreEngine, gate?: MissionGate): OccurrencesUnitOfWork {
  const profiles: ProfileCache = new Map();
  return {
    run: (fn) =>
      engine.transaction(async (tx) => {
        const repo = new OccurrencesRepositorySql(tx, profiles, gate, true);
        const out = await fn(repo);
        await repo.flushEvidence();
        return out;
      }),
    read: (fn) => engine.read((ex) => fn(new OccurrencesReaderSql(ex, '', profiles))),
  };
}

export interface DomainKeyPair {
  readonly kid: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  /** Raw public key, base64url (what the database stores). */
  readonly publicKeyB64: string;
}

export function domainKeyPath(dbPath: string): string {
  return `${dbPath}.domain-key.pem`;
}

function fromPrivate(privateKey: KeyObject): DomainKeyPair {
  const publicKey = createPublicKey(privateKey);
  return {
    kid: ed25519Kid(publicKey),
    privateKey,
    publicKey,
    publicKeyB64: publicKeyRaw(publicKey).toString('base64url'),
  };
}

/**
 * Load the domain key beside the database, or create it (exclusive create, mode 0600). With
 * `create: false` a missing key is `key_invalid` and nothing is written (commands that only use a
 * store, never set one up).
 */
export function loadOrCreateDomainKey(dbPath: string, create = true): DomainKeyPair {
  if (dbPath === ':memory:' || dbPath === '') return fromPrivate(generateEd25519KeyPair().privateKey);
  const path = domainKeyPath(dbPath);
  if (!create && !existsSync(path)) {
    throw new BatonError('key_invalid', `no domain key at ${path} (this command never creates one)`, {
      path,
    });
  }
  try {
    writeFileSync(path, exportPrivatePem(generateEd25519KeyPair().privateKey), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if (process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0) {
    throw new BatonError('key_invalid', 'the domain key file is readable by other users (chmod 600 it)', {
      path,
    });
  }
  return fromPrivate(importEd25519PrivateKey({ pem: readFileSync(path, 'utf8') }));
}

/** A database whose domain was configured with another key is refused at open, not at first use. */
async function checkDomainKey(service: OccurrencesService, key: DomainKeyPair): Promise<void> {
  const domain = await service.getDomain().catch((error: unknown) => {
    if (isBatonError(error, 'domain_not_found')) return undefined;
    throw error;
  });
  if (domain !== undefined && (domain.kid !== key.kid || domain.publicKey !== key.publicKeyB64)) {
    throw new BatonError('domain_conflict', 'the domain key file is not this database’s domain key', {
      kid: domain.kid,
    });
  }
}

export interface OccurrencesOptions {
  readonly clock?: Clock;
  readonly ids?: IdSource;
  readonly sqlite?: SqliteEngineOptions;
  /** Create the domain key when it is missing (default true); false: refuse (`key_invalid`). */
  readonly createDomainKey?: boolean;
  /** The stop matrix the harness enforces (validated, A3.10); default DEFAULT_MATRIX. */
  readonly stopMatrix?: PinnedMatrix;
  /** The harness's Status fetch for stale or unknown views (A3.1 step 3); default none. */
  readonly fetchStatus?: StatusFetcher;
}

export interface OccurrencesOnSqlite {
  readonly service: OccurrencesService;
  readonly harness: MissionsService;
  readonly engine: StoreEngine;
  readonly domainKey: DomainKeyPair;
  readonly close: () => Promise<void>;
}

/**
 * The occurrences service over an open engine (either kind): migrations applied, the domain key
 * `<keyBase>.domain-key.pem` loaded (or created), and a database configured with another key
 * refused. The caller keeps the engine (and closes it, also when this throws).
 */
export async function openOccurrencesOn(
  engine: StoreEngine,
  keyBase: string,
  options: OccurrencesOptions = {},
): Promise<{ service: OccurrencesService; domainKey: DomainKeyPair; harness: MissionsService }> {
  // The key first: a refused open (no key, and none may be created) migrates nothing.
  const domainKey = loadOrCreateDomainKey(keyBase, options.createDomainKey ?? true);
  await migrate(engine);
  // The harness gates governed provider entry (Mission build spec A3.6) with the domain's key.
  const harness = openHarnessOn(engine, {
    domainPrivateKey: domainKey.privateKey,
    ...(options.clock !== undefined && { clock: options.clock }),
    ...(options.ids !== undefined && { ids: options.ids }),
    ...(options.fetchStatus !== undefined && { fetchStatus: options.fetchStatus }),
  });
  await harness.registerMatrix(options.stopMatrix ?? DEFAULT_MATRIX);
  const service = new OccurrencesService({
    uow: occurrencesUnitOfWork(engine, harnessGate(harness)),
    domainKey: { kid: domainKey.kid, publicKey: domainKey.publicKeyB64 },
    // Every server of this store holds the domain key, so each reads the cursors the others issue.
    cursors: CursorCodec.fromDomainKey(domainKey.privateKey),
    clock: options.clock,
    ids: options.ids,
  });
  await checkDomainKey(service, domainKey);
  return { service, domainKey, harness };
}

/** Open (creating and migrating if needed) a SQLite file and return the occurrences service over it. */
export async function openOccurrencesOnSqlite(
  path: string,
  options: OccurrencesOptions = {},
): Promise<OccurrencesOnSqlite> {
  const engine = openSqliteEngine(path, options.sqlite);
  try {
    const { service, domainKey, harness } = await openOccurrencesOn(engine, path, options);
    return { service, harness, engine, domainKey, close: () => engine.close() };
  } catch (error) {
    await engine.close();
    throw error;
  }
}
