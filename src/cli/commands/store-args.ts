/** Shared plumbing of the store commands (`migrate`, `log`): parsing, opening, error exits. */
import { existsSync } from 'node:fs';
import type { parseArgs, ParseArgsConfig } from 'node:util';
import { BatonError, isBatonError } from '../../core/errors.js';
import { openSqliteEngine } from '../../store/sqlite.js';
import type { StoreEngine } from '../../store/engine.js';
import { parseOptions } from '../command.js';
import { EXIT, isBadInput, type CliIo } from '../io.js';

export const DEFAULT_DB = './baton.db';

/**
 * `parseArgs` with positionals and environment fallbacks (options declaring `env`; see
 * parseOptions in ../command.ts), turning its TypeError into a `usage` error (exit 2).
 */
export function parse<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  return parseOptions(config);
}

/** Open an existing database (inspection commands never create one). */
export function openExisting(db: string): StoreEngine {
  if (!existsSync(db)) throw new BatonError('usage', `no database at ${db}`, { db });
  return openSqliteEngine(db, { fileMustExist: true });
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

/**
 * Besides `isBadInput`'s codes, the files these commands read that can be wrong (a key, a stop
 * matrix): exit 2, as docs/cli.md says. A refusal that depends on what the store holds (a
 * conflict, a state, not found) is never bad input.
 */
const READ_HERE = ['key_invalid', 'key_unsupported', 'stop_matrix_invalid'];

/**
 * Bad arguments, input values or files (keys, config, matrix, JSON) exit 2; any other typed
 * failure (newer schema, corrupt store, busy, a conflict) exits 1.
 */
export function reportStoreError(error: unknown, io: CliIo): number {
  if (!isBatonError(error)) throw error;
  io.stderr(`error: ${error.code}: ${error.message}\n`);
  return isBadInput(error.code, READ_HERE) ? EXIT.usage : EXIT.negative;
}
