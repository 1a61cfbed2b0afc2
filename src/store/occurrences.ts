/**
 * Wiring: the occurrences service over a store engine, and over a SQLite file in one call.
 * The domain's Ed25519 private key lives in `<db>.domain-key.pem` beside the database (mode 0600);
 * only its public key and kid enter the database (DESIGN.md §3, "Coordination domain").
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import type { Clock } from '../core/clock.js';
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
import { openSqliteEngine, type SqliteEngineOptions } from './sqlite.js';

export function occurrencesUnitOfWork(engine: StoreEngine): OccurrencesUnitOfWork {
  const profiles: ProfileCache = new Map();
  return {
    run: (fn) => engine.transaction((tx) => fn(new OccurrencesRepositorySql(tx, profiles))),
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

/** Load the domain key beside the database, or create it (exclusive create, mode 0600). */
export function loadOrCreateDomainKey(dbPath: string): DomainKeyPair {
  if (dbPath === ':memory:' || dbPath === '') return fromPrivate(generateEd25519KeyPair().privateKey);
  const path = domainKeyPath(dbPath);
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
    throw new BatonError(
      'domain_conflict',
      'the domain key file beside the database is not the domain’s key',
      {
        kid: domain.kid,
      },
    );
  }
}

export interface OccurrencesOptions {
  readonly clock?: Clock;
  readonly ids?: IdSource;
  readonly sqlite?: SqliteEngineOptions;
}

export interface OccurrencesOnSqlite {
  readonly service: OccurrencesService;
  readonly engine: StoreEngine;
  readonly domainKey: DomainKeyPair;
  readonly close: () => Promise<void>;
}

/** Open (creating and migrating if needed) a SQLite file and return the occurrences service over it. */
export async function openOccurrencesOnSqlite(
  path: string,
  options: OccurrencesOptions = {},
): Promise<OccurrencesOnSqlite> {
  const engine = openSqliteEngine(path, options.sqlite);
  try {
    await migrate(engine);
    const domainKey = loadOrCreateDomainKey(path);
    const service = new OccurrencesService({
      uow: occurrencesUnitOfWork(engine),
      domainKey: { kid: domainKey.kid, publicKey: domainKey.publicKeyB64 },
      clock: options.clock,
      ids: options.ids,
    });
    await checkDomainKey(service, domainKey);
    return { service, engine, domainKey, close: () => engine.close() };
  } catch (error) {
    await engine.close();
    throw error;
  }
}
