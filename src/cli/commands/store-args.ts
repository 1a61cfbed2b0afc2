/** Shared plumbing of the store commands (`migrate`, `log`): parsing and opening. */
import { existsSync } from 'node:fs';
import type { parseArgs, ParseArgsConfig } from 'node:util';
import { BatonError } from '../../core/errors.js';
import { openSqliteEngine } from '../../store/sqlite.js';
import { openSqliteReader } from '../../store/sqlite-reader.js';
import type { StoreEngine } from '../../store/engine.js';
import { parseOptions } from '../command.js';

export const DEFAULT_DB = './baton.db';

/**
 * `parseArgs` with positionals and environment fallbacks (options declaring `env`; see
 * parseOptions in ../command.ts), turning its TypeError into a `usage` error (exit 2) in Baton's
 * words, naming `command` (`domain show`) when given.
 */
export function parse<T extends ParseArgsConfig>(
  config: T,
  command?: string,
): ReturnType<typeof parseArgs<T>> {
  return parseOptions(config, process.env, command);
}

/** Open an existing database to write to it (never created: `tokens` migrates it first). */
export function openExisting(db: string): StoreEngine {
  if (!existsSync(db)) throw new BatonError('usage', `no database at ${db}`, { db });
  return openSqliteEngine(db, { fileMustExist: true });
}

/**
 * Open an existing database read-only (`baton log`): nothing is created or changed, a read-only
 * file is enough, and a running server's writer is never waited for.
 */
export function openForReading(db: string): StoreEngine {
  if (!existsSync(db)) throw new BatonError('usage', `no database at ${db}`, { db });
  return openSqliteReader(db);
}

/** Run a command body with an engine, closing it whatever happens. */
export async function withEngine(
  open: () => StoreEngine | Promise<StoreEngine>,
  body: (engine: StoreEngine) => Promise<number>,
): Promise<number> {
  const engine = await open();
  try {
    return await body(engine);
  } finally {
    await engine.close();
  }
}
