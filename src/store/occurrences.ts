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
import { BatonError } from '../core/errors.js';
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

/** The key pair, kid and stored public key of an Ed25519 private key. */
function domainKeyPair(privateKey: KeyObject): DomainKeyPair {
  const publicKey = createPublicKey(privateKey);
  return {
    kid: ed25519Kid(publicKey),
    privateKey,
    publicKey,
    publicKeyB64: publicKeyRaw(publicKey).toString('base64url'),
  };
}

/** The key file at `path`, refused when other users may read it (it is the domain's signing key). */
function loadDomainKeyFile(path: string): DomainKeyPair {
  if (process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0) {
    throw new BatonError('key_invalid', 'the domain key file is readable by other users (chmod 600 it)', {
      path,
    });
  }
  return domainKeyPair(importEd25519PrivateKey({ pem: readFileSync(path, 'utf8') }));
}

/** A new key at `path`: exclusive create, mode 0600; one created meanwhile by another process wins. */
function createDomainKeyFile(path: string): DomainKeyPair {
  try {
    writeFileSync(path, exportPrivatePem(generateEd25519KeyPair().privateKey), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return loadDomainKeyFile(path);
}

/**
 * Load the domain key beside the database, or create it (exclusive create, mode 0600). With
 * `create: false` a missing key is `key_invalid` and nothing is written (commands that only use a
 * store, never set one up). It knows nothing of the store: openOccurrencesOn checks the domain
 * the database records before it lets a key be created (domainKeyFor).
 */
export function loadOrCreateDomainKey(dbPath: string, create = true): DomainKeyPair {
  if (isEphemeral(dbPath)) return domainKeyPair(generateEd25519KeyPair().privateKey);
  const path = domainKeyPath(dbPath);
  if (existsSync(path)) return loadDomainKeyFile(path);
  if (!create) {
    throw new BatonError('key_invalid', `no domain key at ${path} (this command never creates one)`, {
      path,
    });
  }
  return createDomainKeyFile(path);
}

/** An in-memory database: its key lives only as long as the process, in no file. */
function isEphemeral(keyBase: string): boolean {
  return keyBase === ':memory:' || keyBase === '';
}

/** The domain key the database records (kid and public key), once its domain is configured. */
async function storedDomainKey(engine: StoreEngine): Promise<{ kid: string; publicKey: string } | undefined> {
  const domain = await occurrencesUnitOfWork(engine).read((r) => r.getDomain());
  return domain === undefined ? undefined : { kid: domain.kid, publicKey: domain.publicKey };
}

/** How to give the right file: the caller's flag (PostgreSQL), or the path itself (SQLite). */
function giveIt(path: string, hint: string | undefined): string {
  return hint === undefined ? `put that key's file at ${path}` : `give that key's file with ${hint}`;
}

/**
 * The domain key of a migrated store. A store whose domain records a key needs that key's file: a
 * missing file is refused (`key_invalid`) and another key's file too (`domain_conflict`), both
 * naming the path and the kid expected, and neither writes anything (a new key there would be an
 * orphan to delete before the real one works). Only a store with no domain key yet may get a new
 * key file (`create`). The kid is public; the private key never enters the database (DESIGN.md §3).
 */
async function domainKeyFor(
  engine: StoreEngine,
  keyBase: string,
  create: boolean,
  hint: string | undefined,
): Promise<DomainKeyPair> {
  const stored = await storedDomainKey(engine);
  if (stored === undefined) return loadOrCreateDomainKey(keyBase, create);
  const path = domainKeyPath(keyBase);
  if (!isEphemeral(keyBase) && !existsSync(path)) {
    throw new BatonError(
      'key_invalid',
      `no domain key file at ${path}, and this database's domain key is ${stored.kid}: ${giveIt(path, hint)}`,
      { path, kid: stored.kid },
    );
  }
  const key = loadOrCreateDomainKey(keyBase, false);
  refuseOtherKey(stored, key, path, hint);
  return key;
}

/** `domain_conflict` unless `key` (read from `path`) is the domain key the database records. */
function refuseOtherKey(
  stored: { kid: string; publicKey: string },
  key: Pick<DomainKeyPair, 'kid' | 'publicKeyB64'>,
  path: string,
  hint: string | undefined,
): void {
  if (key.kid !== stored.kid || key.publicKeyB64 !== stored.publicKey) {
    throw new BatonError(
      'domain_conflict',
      `the domain key file ${path} holds key ${key.kid}, but this database's domain key is ${stored.kid}: ${giveIt(path, hint)}`,
      { path, kid: stored.kid, foundKid: key.kid },
    );
  }
}

/**
 * The check `openOccurrencesOn` makes (domainKeyFor), for a key a command read itself (`baton log
 * export --key`): a key other than the domain key the store records is `domain_conflict`. A store
 * with no domain key yet records none to compare with, and takes any key, as a server's open does.
 */
export async function requireStoreDomainKey(
  engine: StoreEngine,
  privateKey: KeyObject,
  path: string,
  hint?: string,
): Promise<DomainKeyPair> {
  const key = domainKeyPair(privateKey);
  const stored = await storedDomainKey(engine);
  if (stored !== undefined) refuseOtherKey(stored, key, path, hint);
  return key;
}

export interface OccurrencesOptions {
  readonly clock?: Clock;
  readonly ids?: IdSource;
  readonly sqlite?: SqliteEngineOptions;
  /**
   * Create the domain key when it is missing and the store has no domain key yet (default true);
   * false: refuse (`key_invalid`).
   */
  readonly createDomainKey?: boolean;
  /** How the user names the key file, for a refusal (`--domain-key FILE (BATON_DOMAIN_KEY)`). */
  readonly domainKeyHint?: string;
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
 * The occurrences service over an open engine (either kind), in docs/operations.md "Startup"
 * order: migrations applied first (a newer schema refused before any file is written), then the
 * domain key `<keyBase>.domain-key.pem` loaded, or created for a store with no domain key yet
 * (domainKeyFor). The caller keeps the engine (and closes it, also when this throws).
 */
export async function openOccurrencesOn(
  engine: StoreEngine,
  keyBase: string,
  options: OccurrencesOptions = {},
): Promise<{ service: OccurrencesService; domainKey: DomainKeyPair; harness: MissionsService }> {
  await migrate(engine);
  const domainKey = await domainKeyFor(
    engine,
    keyBase,
    options.createDomainKey ?? true,
    options.domainKeyHint,
  );
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
