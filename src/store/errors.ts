/**
 * Driver errors, mapped once at the engine boundary (DESIGN.md §2). Callers see BatonError codes,
 * never SQLite or PostgreSQL codes:
 * - lock contention (SQLITE_BUSY / SQLITE_LOCKED, PostgreSQL 40001 / 40P01 / 55P03) → `store_busy`
 *   (retryable);
 * - a constraint violation → `conflict` with `details.constraint` naming its kind, so a service can
 *   tell "the unique index said no" (DESIGN.md §2: uniqueness is enforced by the database) from
 *   any other failure with `isUniqueViolation`;
 * - a file that is not a SQLite database (SQLITE_NOTADB) or a damaged one (SQLITE_CORRUPT…) →
 *   `store_corrupt`, naming the file when the caller knows it (a `--db` given a JSON file).
 * - the store cannot take writes or reach its disk (SQLITE_FULL, SQLITE_READONLY…, SQLITE_IOERR…;
 *   PostgreSQL 53100 disk full, 25006 a read-only transaction — a standby after a failover —, 57014
 *   a statement cancelled by statement_timeout) → `unavailable` (retryable: an operator can fix it),
 *   in words that say what to look at, never a bare `internal` with a stack.
 * Anything else is a bug and is rethrown unchanged.
 */
import { BatonError, isBatonError } from '../core/errors.js';
import type { SqlValue } from './engine.js';

export type ConstraintKind = 'unique' | 'foreign_key' | 'not_null' | 'check' | 'other';

interface DriverError {
  code: string;
}

function driverCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  const { code } = error as DriverError;
  return typeof code === 'string' ? code : undefined;
}

const SQLITE_CONSTRAINTS: Readonly<Record<string, ConstraintKind>> = {
  SQLITE_CONSTRAINT_UNIQUE: 'unique',
  SQLITE_CONSTRAINT_PRIMARYKEY: 'unique',
  SQLITE_CONSTRAINT_FOREIGNKEY: 'foreign_key',
  SQLITE_CONSTRAINT_NOTNULL: 'not_null',
  SQLITE_CONSTRAINT_CHECK: 'check',
};

// PostgreSQL SQLSTATEs (Appendix A): class 23 is integrity constraint violation.
const PG_CONSTRAINTS: Readonly<Record<string, ConstraintKind>> = {
  '23505': 'unique',
  '23503': 'foreign_key',
  '23502': 'not_null',
  '23514': 'check',
};

const PG_BUSY = new Set(['40001', '40P01', '55P03']);

/** The kind of constraint a raw driver error reports, if it is a constraint violation. */
export function constraintKind(error: unknown): ConstraintKind | undefined {
  const code = driverCode(error);
  if (code === undefined) return undefined;
  if (code.startsWith('SQLITE_CONSTRAINT')) return SQLITE_CONSTRAINTS[code] ?? 'other';
  if (code.startsWith('23')) return PG_CONSTRAINTS[code] ?? 'other';
  return undefined;
}

export function isBusyDriverError(error: unknown): boolean {
  const code = driverCode(error);
  if (code === undefined) return false;
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || PG_BUSY.has(code);
}

/** Why SQLite cannot read the file at all: not a database, or a damaged one; else undefined. */
export function unreadableDatabase(error: unknown): 'not_a_database' | 'damaged' | undefined {
  const code = driverCode(error);
  if (code === undefined) return undefined;
  if (code === 'SQLITE_NOTADB') return 'not_a_database';
  if (code === 'SQLITE_CORRUPT' || code.startsWith('SQLITE_CORRUPT_')) return 'damaged';
  return undefined;
}

/** What an operator can act on, by driver code (exact, then by SQLite's primary-code prefix). */
const OPERATIONAL: Readonly<Record<string, string>> = {
  SQLITE_FULL: 'the disk holding the SQLite database is full: free space on it',
  SQLITE_READONLY_DIRECTORY:
    'SQLite cannot create the -wal or -shm file beside the database: its folder is not writable by this user (copy the file to a writable folder to inspect it)',
  SQLITE_READONLY:
    'the SQLite database cannot be written (a read-only file, folder or file system): check its permissions and mount',
  SQLITE_IOERR:
    'the disk holding the SQLite database failed a read or write: check the disk and its file system',
  '53100': 'the PostgreSQL server’s disk is full: free space on it',
  '25006':
    'the PostgreSQL server accepts no writes (a standby or read-only database, as after a failover): point --postgres at the primary',
  '57014':
    'PostgreSQL cancelled the statement (statement_timeout, or an administrator): retry, or raise the timeout',
};

/** The words for an operational failure, or undefined. */
function operational(code: string): string | undefined {
  const exact = OPERATIONAL[code];
  if (exact !== undefined) return exact;
  const primary = /^SQLITE_[A-Z]+/.exec(code)?.[0];
  return primary === undefined ? undefined : OPERATIONAL[primary];
}

/**
 * The store cannot take the work for a reason an operator can fix (a full disk, a read-only
 * file or standby, a failing disk, a cancelled statement): `unavailable`, naming the code.
 */
export function operationalError(error: unknown): BatonError | undefined {
  const code = driverCode(error);
  const words = code === undefined ? undefined : operational(code);
  if (code === undefined || words === undefined) return undefined;
  return new BatonError('unavailable', `${words} (${code})`, { driverCode: code }, { cause: error });
}

/**
 * Map a raw driver error to a BatonError where Baton has a meaning for it; otherwise return it as
 * is. `path`, where the caller knows it, is the SQLite file, named in the message.
 */
export function mapDriverError(error: unknown, path?: string): unknown {
  const unreadable = unreadableDatabase(error);
  if (unreadable !== undefined) {
    const why = error instanceof Error ? ` (${error.message})` : '';
    const message =
      unreadable === 'not_a_database'
        ? `${path ?? 'the store’s file'} is not a SQLite database${why}`
        : path === undefined
          ? `the store’s SQLite database is damaged${why}`
          : `${path} is a damaged SQLite database${why}`;
    return new BatonError('store_corrupt', message, path === undefined ? {} : { path }, { cause: error });
  }
  const unusable = operationalError(error);
  if (unusable !== undefined) return unusable;
  if (isBusyDriverError(error)) {
    return new BatonError(
      'store_busy',
      'the store is busy (another writer holds the lock)',
      {},
      { cause: error },
    );
  }
  const kind = constraintKind(error);
  if (kind !== undefined) {
    return new BatonError(
      'conflict',
      `a ${kind} constraint of the store refused the write`,
      { constraint: kind },
      {
        cause: error,
      },
    );
  }
  return error;
}

/**
 * True when a write was refused by a unique index or primary key, on either engine, whether the
 * error was already mapped by an engine or is still the raw driver error.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (isBatonError(error, 'conflict')) return error.details['constraint'] === 'unique';
  return constraintKind(error) === 'unique';
}

/**
 * Refuse a text value neither engine can hold the same way: PostgreSQL's TEXT cannot store U+0000
 * (it answers with a raw encoding error) while SQLite would keep it, so a value with one is
 * refused on both, typed and before anything is written (engine.ts: one behaviour on both).
 */
export function unstorableText(params: readonly SqlValue[]): BatonError | undefined {
  for (let i = 0; i < params.length; i++) {
    const value = params[i];
    if (typeof value === 'string' && value.includes('\u0000')) {
      return new BatonError('input_invalid', 'a text value holds U+0000, which the store cannot keep', {
        parameter: i + 1,
      });
    }
  }
  return undefined;
}
