/**
 * `--db FILE | --postgres URL [--domain-key FILE]`: which store `serve` and `tokens` use. SQLite is
 * the default (./baton.db, the domain key beside it); PostgreSQL is for several servers sharing one
 * database (DESIGN.md §10), which must then share one domain key file too. The password can stay
 * out of argv: `pg` reads PGPASSWORD.
 */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { BatonError } from '../../core/errors.js';
import type { StoreEngine } from '../../store/engine.js';
import { migrate } from '../../store/migrations.js';
import { openSqliteEngine } from '../../store/sqlite.js';
import { openReachablePostgres, redactUrl, type StoreChoice } from '../../server/open.js';
import { DEFAULT_DB, openExisting } from './store-args.js';

/** Said after `no database at PATH` by the commands that never create a store (tokens, mcp). */
export const NEW_STORE =
  ' (baton migrate or baton serve creates one; serve’s first start also prints an admin token)';

/** Each also read from the environment (a flag wins); --postgres on the command line hides BATON_DB. */
export const STORE_OPTIONS = {
  db: { type: 'string', env: 'BATON_DB', unlessGiven: ['postgres'] },
  postgres: { type: 'string', env: 'BATON_POSTGRES_URL', unlessGiven: ['db'] },
  'domain-key': { type: 'string', env: 'BATON_DOMAIN_KEY', unlessGiven: ['db'] },
  pool: { type: 'string', env: 'BATON_POOL', unlessGiven: ['db'] },
} as const;

export const STORE_USAGE = `store: --db FILE (SQLite, default ${DEFAULT_DB}) or --postgres URL with
       --domain-key FILE (default ./baton.domain-key.pem; every server sharing the database needs it)
       and --pool N (PostgreSQL connections this process holds at most, 1..1000, default 10: give
       about one per concurrent request it should serve at once); each also read from BATON_DB,
       BATON_POSTGRES_URL, BATON_DOMAIN_KEY, BATON_POOL when its flag is absent (docs/operations.md)`;

/** `--pool (BATON_POOL)`: a refused value may come from the flag or its variable, so name both. */
type Named = (flag: keyof typeof STORE_OPTIONS) => string;

function pool(text: string | undefined, named: Named): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[0-9]{1,4}$/.test(text) || Number(text) < 1 || Number(text) > 1000) {
    throw new BatonError('usage', `${named('pool')} must be a whole number from 1 to 1000`);
  }
  return Number(text);
}

/**
 * The store the values choose. Refusals name each flag with its variable (docs/operations.md,
 * "Environment"), unless `fromEnvironment: false` (`baton mcp`, whose store flags read none).
 */
export function storeChoice(
  values: { db?: string; postgres?: string; 'domain-key'?: string; pool?: string },
  options: { readonly fromEnvironment?: boolean } = {},
): StoreChoice {
  const named: Named = (flag) =>
    options.fromEnvironment === false ? `--${flag}` : `--${flag} (${STORE_OPTIONS[flag].env})`;
  if (values.postgres !== undefined) {
    if (values.db !== undefined) {
      throw new BatonError('usage', `give ${named('db')} or ${named('postgres')}, not both`);
    }
    if (!/^postgres(ql)?:\/\//.test(values.postgres)) {
      throw new BatonError('usage', `${named('postgres')} must be a postgres:// URL`);
    }
    const maxConnections = pool(values.pool, named);
    return {
      kind: 'postgres',
      url: values.postgres,
      domainKeyFile: values['domain-key'] ?? './baton.domain-key.pem',
      ...(maxConnections === undefined ? {} : { maxConnections }),
    };
  }
  if (values.pool !== undefined) {
    throw new BatonError('usage', `${named('pool')} is for ${named('postgres')}`);
  }
  if (values['domain-key'] !== undefined) {
    throw new BatonError(
      'usage',
      `${named('domain-key')} is for ${named('postgres')}; a SQLite database keeps its key beside it`,
    );
  }
  return { kind: 'sqlite', path: values.db ?? DEFAULT_DB };
}

/**
 * An engine over the chosen store: SQLite created only with `create` (inspection commands never
 * create one); PostgreSQL only once its server answered (an unreachable one writes nothing).
 */
export async function openStoreEngine(
  choice: StoreChoice,
  options: { readonly create: boolean },
): Promise<StoreEngine> {
  if (choice.kind === 'postgres') {
    return openReachablePostgres(choice.url, { maxConnections: choice.maxConnections });
  }
  if (!options.create) return openExisting(choice.path);
  const folder = dirname(choice.path);
  if (!existsSync(folder)) {
    throw new BatonError('usage', `no folder ${folder} for the SQLite database ${choice.path}`);
  }
  return openSqliteEngine(choice.path);
}

/**
 * An engine over the chosen, existing store with every migration applied: a missing SQLite file
 * is refused (`usage: no database at PATH`), never created (SQLite itself refuses it too, should
 * it vanish after the check); so is a PostgreSQL database (or schema) without Baton's tables — a
 * URL naming the wrong database would otherwise get Baton's schema created there and a token
 * minted into it that no server serves.
 */
export async function openMigratedEngine(choice: StoreChoice): Promise<StoreEngine> {
  const engine = await openStoreEngine(choice, { create: false });
  try {
    if (choice.kind === 'postgres' && !(await holdsBatonStore(engine))) {
      throw new BatonError('usage', `no Baton store in the database at ${redactUrl(choice.url)}${NEW_STORE}`);
    }
    await migrate(engine);
    return engine;
  } catch (error) {
    await engine.close();
    throw error;
  }
}

/** Whether the connection's search path has Baton's migration table (PostgreSQL). */
async function holdsBatonStore(engine: StoreEngine): Promise<boolean> {
  const row = await engine.read((tx) =>
    tx.get<{ present: number }>(
      "SELECT CASE WHEN to_regclass('schema_migrations') IS NULL THEN 0 ELSE 1 END AS present",
    ),
  );
  return row?.present === 1;
}
