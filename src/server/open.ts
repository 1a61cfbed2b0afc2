/**
 * Open the store and the occurrences service for `baton serve` (DESIGN.md §2, §10): a SQLite file
 * (the domain key beside it, as src/store/occurrences.ts keeps it), or a PostgreSQL database that
 * several servers share — each then needs the SAME domain key file. Migrations run at open.
 */
import type { Clock } from '../core/clock.js';
import { BatonError, isBatonError } from '../core/errors.js';
import { OccurrencesService } from '../occurrences/index.js';
import type { StoreEngine } from '../store/engine.js';
import { migrate } from '../store/migrations.js';
import {
  loadOrCreateDomainKey,
  occurrencesUnitOfWork,
  openOccurrencesOnSqlite,
} from '../store/occurrences.js';
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
  clock: Clock | undefined,
): Promise<OpenedBaton> {
  const { url, domainKeyFile: keyFile } = choice;
  if (!keyFile.endsWith(KEY_SUFFIX)) {
    throw new BatonError('usage', `the domain key file name must end with ${KEY_SUFFIX}`);
  }
  const engine = openPostgresEngine(url, { maxConnections: choice.maxConnections });
  try {
    await migrate(engine);
    const key = loadOrCreateDomainKey(keyFile.slice(0, -KEY_SUFFIX.length));
    const service = new OccurrencesService({
      uow: occurrencesUnitOfWork(engine),
      domainKey: { kid: key.kid, publicKey: key.publicKeyB64 },
      clock,
    });
    const domain = await service.getDomain().catch((e: unknown) => {
      if (isBatonError(e, 'domain_not_found')) return undefined;
      throw e;
    });
    if (domain !== undefined && domain.kid !== key.kid) {
      throw new BatonError('domain_conflict', 'the domain key file is not this database’s domain key');
    }
    return { engine, service, description: `postgres ${redactUrl(url)}`, close: () => engine.close() };
  } catch (error) {
    await engine.close();
    throw error;
  }
}

export async function openBaton(choice: StoreChoice, options: { clock?: Clock } = {}): Promise<OpenedBaton> {
  if (choice.kind === 'postgres') return openPostgres(choice, options.clock);
  const opened = await openOccurrencesOnSqlite(choice.path, { clock: options.clock });
  return {
    engine: opened.engine,
    service: opened.service,
    description: `sqlite ${choice.path}`,
    close: opened.close,
  };
}
