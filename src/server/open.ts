/**
 * Open the store and the occurrences service for `baton serve` (DESIGN.md §2, §10): a SQLite file
 * (the domain key beside it, as src/store/occurrences.ts keeps it), or a PostgreSQL database that
 * several servers share — each then needs the SAME domain key file. Migrations run at open.
 */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Clock } from '../core/clock.js';
import { BatonError } from '../core/errors.js';
import type { MissionsService, PinnedMatrix } from '../missions/index.js';
import type { OccurrencesService } from '../occurrences/index.js';
import type { StoreEngine } from '../store/engine.js';
import { openOccurrencesOn, type DomainKeyPair } from '../store/occurrences.js';
import { openPostgresEngine } from '../store/postgres.js';
import { watchSchema } from '../store/schema-watch.js';
import { openSqliteEngine } from '../store/sqlite.js';
import type { SqliteWriterMode } from '../store/sqlite-writer.js';

export const KEY_SUFFIX = '.domain-key.pem';

export type StoreChoice =
  | {
      readonly kind: 'sqlite';
      readonly path: string;
      /** Where the write connection lives (docs/store.md, "The writer thread"; default inline). */
      readonly writer?: SqliteWriterMode;
      /** Inline writer: who runs WAL checkpoints (docs/store.md, "Checkpoints off the request path"; default thread). */
      readonly checkpoints?: 'thread' | 'sqlite';
    }
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
  /** The Mission-aware harness over the same store (docs/harness.md). */
  readonly harness: MissionsService;
  /** The domain's key pair (Baton signs its own continuity records with it). */
  readonly domainKey: DomainKeyPair;
  /** What to print: never a password. */
  readonly description: string;
  /**
   * Settles when the store became unusable under the server (the SQLite writer thread stopped, or
   * the watch found a newer Baton's migration: OpenOptions.watchSchemaEveryMs): every transaction
   * is refused from then on, and `serve` stops with a non-zero exit.
   */
  readonly failed?: Promise<BatonError>;
  close(): Promise<void>;
}

/**
 * What may be printed of a PostgreSQL URL (the listening line, --json `store`, logs): scheme,
 * user, host, port and database only. The password is never shown, whether in `user:pass@` or in
 * the query (`?password=`, `sslpassword=`), and no query parameter at all is, since libpq's
 * (`sslkey`, `options`, …) may name secrets too; `?…` says some were given.
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    const user = u.username === '' ? '' : `${u.username}@`;
    const port = u.port === '' ? '' : `:${u.port}`;
    const query = u.search === '' ? '' : '?…';
    return `${u.protocol}//${user}${u.hostname}${port}${u.pathname}${query}`;
  } catch {
    return 'postgres (unparsable URL)';
  }
}

/** `host:port` of a PostgreSQL URL, for error messages (never the user or password). */
export function postgresAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname === '' ? 'localhost' : u.hostname}:${u.port === '' ? '5432' : u.port}`;
  } catch {
    return '(unparsable URL)';
  }
}

function rootCause(error: unknown): unknown {
  let e = error;
  while (e instanceof Error && e.cause !== undefined) e = e.cause;
  return e;
}

/**
 * Why a connection failed, in words, for the codes a user meets first (the server's own message
 * may name the user or the database, so it is not shown; the code alone said nothing to a reader).
 */
const CONNECT_FAILURES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'nothing accepts connections there',
  ENOTFOUND: 'the host name does not resolve',
  ETIMEDOUT: 'no answer in time',
  '28P01': 'password authentication failed',
  '28000': 'the server refused this user or client (pg_hba.conf)',
  '3D000': 'the database does not exist',
  '53300': 'the server has too many connections',
  '57P03': 'the server is starting up or shutting down',
};

/** `CODE (words)`, `CODE`, or the message of an error without a code. */
function connectFailure(cause: unknown): string {
  const code = (cause as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string') return cause instanceof Error ? cause.message : 'unknown failure';
  const words = CONNECT_FAILURES[code];
  return words === undefined ? code : `${code} (${words})`;
}

/**
 * A PostgreSQL engine whose server answered: before anything is written (a domain key file, a
 * migration), so an unreachable server creates no files. The failure names the address and why:
 * the error code, and what it means when it is one of CONNECT_FAILURES.
 */
export async function openReachablePostgres(
  url: string,
  options: {
    readonly maxConnections?: number | undefined;
    readonly onIdleError?: ((error: Error) => void) | undefined;
  } = {},
): Promise<StoreEngine> {
  const engine = openPostgresEngine(url, {
    maxConnections: options.maxConnections,
    ...(options.onIdleError !== undefined && { onIdleError: perBurst(options.onIdleError) }),
  });
  try {
    await engine.read((ex) => ex.get('SELECT 1 AS one'));
    return engine;
  } catch (error) {
    await engine.close();
    const why = connectFailure(rootCause(error));
    throw new BatonError(
      'unavailable',
      `cannot connect to PostgreSQL at ${postgresAddress(url)}: ${why}`,
      {},
      { cause: error },
    );
  }
}

/** How long without a dropped idle connection ends a burst (the next one is told again). */
const IDLE_BURST_QUIET_MS = 10_000;

/**
 * `tell` the first error of each burst only: a server restart or a network cut drops every idle
 * pooled connection at once, which is one event for an operator, not one log line per connection.
 */
export function perBurst(
  tell: (error: Error) => void,
  quietMs = IDLE_BURST_QUIET_MS,
): (error: Error) => void {
  let last = -Infinity;
  return (error) => {
    const now = performance.now();
    if (now - last >= quietMs) tell(error);
    last = now;
  };
}

async function openPostgres(
  choice: Extract<StoreChoice, { kind: 'postgres' }>,
  options: OpenOptions,
): Promise<OpenedBaton> {
  const { url, domainKeyFile: keyFile } = choice;
  if (!keyFile.endsWith(KEY_SUFFIX)) {
    throw new BatonError('usage', `the domain key file name must end with ${KEY_SUFFIX}`);
  }
  const { onIdleError, watchSchemaEveryMs, ...rest } = options;
  const reachable = await openReachablePostgres(url, { maxConnections: choice.maxConnections, onIdleError });
  return servicesOn(
    reachable,
    watchSchemaEveryMs,
    { description: `postgres ${redactUrl(url)}` },
    (engine) => {
      const folder = dirname(keyFile);
      if (!existsSync(folder)) {
        throw new BatonError('usage', `no folder ${folder} for the domain key file ${keyFile}`, {
          path: keyFile,
        });
      }
      return openOccurrencesOn(engine, keyFile.slice(0, -KEY_SUFFIX.length), {
        ...rest,
        domainKeyHint: options.domainKeyHint ?? '--domain-key FILE (BATON_DOMAIN_KEY)',
      });
    },
  );
}

/**
 * `createDomainKey: false` for commands that use a store but never set one up (`reconcile`,
 * `harness`, `observe`, `report`): a missing domain key is then refused instead of created, and so
 * is a missing SQLite file (`usage: no database at PATH`) — before anything is opened, so a
 * mistyped `--db` leaves no file behind.
 */
export interface OpenOptions {
  readonly clock?: Clock;
  readonly createDomainKey?: boolean;
  /** The SQLite file must exist already (default: true exactly when `createDomainKey` is false). */
  readonly mustExist?: boolean;
  /** The validated stop matrix for the harness (`baton serve --stop-matrix`). */
  readonly stopMatrix?: PinnedMatrix;
  /**
   * PostgreSQL: how this command takes the domain key file, named when the file is missing or
   * holds another key (default `--domain-key FILE (BATON_DOMAIN_KEY)`; a SQLite key is named by
   * its path beside the database).
   */
  readonly domainKeyHint?: string;
  /**
   * PostgreSQL: told when the server or network dropped idle pooled connections, once per burst
   * (`serve` logs it; the pool has already discarded them).
   */
  readonly onIdleError?: (error: Error) => void;
  /**
   * A long-running command's store is re-read this often for a migration a newer Baton applied
   * (schema-watch.ts): from then on the engine refuses every call and `failed` settles. Default:
   * no watch (a short command meets a newer schema at its next open).
   */
  readonly watchSchemaEveryMs?: number;
}

/**
 * The services over `raw`, which is watched for a newer schema where asked (`failed` then settles
 * with the refusal, as with `base.failed`); `raw` is closed again when they cannot open.
 */
async function servicesOn(
  raw: StoreEngine,
  watchEveryMs: number | undefined,
  base: { readonly description: string; readonly failed?: Promise<BatonError> },
  open: (engine: StoreEngine) => ReturnType<typeof openOccurrencesOn>,
): Promise<OpenedBaton> {
  const { engine, superseded } =
    watchEveryMs === undefined ? { engine: raw } : watchSchema(raw, watchEveryMs);
  const failures = [base.failed, superseded].filter((p): p is Promise<BatonError> => p !== undefined);
  try {
    const { service, harness, domainKey } = await open(engine);
    return {
      ...(failures.length > 0 && { failed: Promise.race(failures) }),
      engine,
      service,
      harness,
      domainKey,
      description: base.description,
      close: () => engine.close(),
    };
  } catch (error) {
    await engine.close();
    throw error;
  }
}

export async function openBaton(choice: StoreChoice, options: OpenOptions = {}): Promise<OpenedBaton> {
  if (choice.kind === 'postgres') return openPostgres(choice, options);
  const folder = dirname(choice.path);
  if (choice.path !== ':memory:' && !existsSync(folder)) {
    throw new BatonError('usage', `no folder ${folder} for the SQLite database ${choice.path}`, {
      path: choice.path,
    });
  }
  const mustExist = (options.mustExist ?? options.createDomainKey === false) && choice.path !== ':memory:';
  if (mustExist && !existsSync(choice.path)) {
    throw new BatonError('usage', `no database at ${choice.path}`, { path: choice.path });
  }
  let fail: (error: BatonError) => void = () => undefined;
  const writerStopped = new Promise<BatonError>((resolve) => (fail = resolve));
  const { domainKeyHint: _hint, onIdleError: _idle, watchSchemaEveryMs, ...rest } = options;
  const raw = openSqliteEngine(choice.path, {
    writer: choice.writer ?? 'inline',
    // Also refused by SQLite itself, should the file vanish between the check and the open.
    ...(mustExist && { fileMustExist: true }),
    onWriterStop: (error) => fail(error),
    ...(choice.checkpoints !== undefined && { checkpoints: choice.checkpoints }),
  });
  return servicesOn(
    raw,
    watchSchemaEveryMs,
    { description: `sqlite ${choice.path}`, failed: writerStopped },
    (engine) => openOccurrencesOn(engine, choice.path, rest),
  );
}
