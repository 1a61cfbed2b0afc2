/**
 * Open the store and the occurrences service for `baton serve` (DESIGN.md §2, §10): a SQLite file
 * (the domain key beside it, as src/store/occurrences.ts keeps it), or a PostgreSQL database that
 * several servers share — each then needs the SAME domain key file. Migrations run at open.
 */
import type { Clock } from '../core/clock.js';
import { BatonError } from '../core/errors.js';
import type { OccurrencesService } from '../occurrences/index.js';
import type { StoreEngine } from '../store/engine.js';
import { openOccurrencesOn, openOccurrencesOnSqlite, type DomainKeyPair } from '../store/occurrences.js';
import { openPostgresEngine } from '../store/postgres.js';

export const KEY_SUFFIX = '.domain-key.pem';

export type StoreChoice =
  | { readonly kind: 'sqlite'; readonly path: string }
  | {
      readonly kind: 'postgres';
      readonly url: string;
      readonly domainKeyFile: string;
      /** The pool's size (PostgresEngineOptions.maxConnections; default 10). */
      readonly maxConnections?: number;
    };

export interface OpenedBaton {
  readonly engine: StoreEngine;
  readonly service: OccurrencesService;
  /** The domain's key pair (Baton signs its own continuity records with it). */
  readonly domainKey: DomainKeyPair;
  /** What to print: never a password. */
  readonly description: string;
  close(): Promise<void>;
}

/** The URL without its password (for the listening line and logs). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return 'postgres (unparsable URL)';
  }
}

async function openPostgres(
  choice: Extract<StoreChoice, { kind: 'postgres' }>,
  options: OpenOptions,
): Promise<OpenedBaton> {
  const { url, domainKeyFile: keyFile } = choice;
  if (!keyFile.endsWith(KEY_SUFFIX)) {
    throw new BatonError('usage', `the domain key file name must end with ${KEY_SUFFIX}`);
  }
  const engine = openPostgresEngine(url, { maxConnections: choice.maxConnections });
  try {
    const { service, domainKey } = await openOccurrencesOn(
      engine,
      keyFile.slice(0, -KEY_SUFFIX.length),
      options,
    );
    return {
      engine,
      service,
      domainKey,
      description: `postgres ${redactUrl(url)}`,
      close: () => engine.close(),
    };
  } catch (error) {
    await engine.close();
    throw error;
  }
}

/**
 * `createDomainKey: false` for commands that use a store but never set one up (`reconcile`): a
 * missing domain key is then refused instead of created.
 */
export interface OpenOptions {
  readonly clock?: Clock;
  readonly createDomainKey?: boolean;
}

export async function openBaton(choice: StoreChoice, options: OpenOptions = {}): Promise<OpenedBaton> {
  if (choice.kind === 'postgres') return openPostgres(choice, options);
  const opened = await openOccurrencesOnSqlite(choice.path, options);
  return {
    engine: opened.engine,
    service: opened.service,
    domainKey: opened.domainKey,
    description: `sqlite ${choice.path}`,
    close: opened.close,
  };
}
