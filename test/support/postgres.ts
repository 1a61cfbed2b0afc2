/**
 * Whether the PostgreSQL tests run (docs/store.md, "Testing against PostgreSQL"):
 * - the server is `BATON_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/postgres`,
 *   which `.ci/services.sh` provides), tried with a short timeout;
 * - reachable: each test file gets its own fresh database `baton_test_<random>` (C collation, so
 *   text orders as on SQLite), dropped when the file's tests end; each test gets its own schema;
 * - unreachable and `CI` set: a failing test (CI must run them);
 * - unreachable otherwise: one skipped test whose name says so, once per `node --test` run.
 * Call `postgresForTests()` at the top level of a test file (it registers tests and hooks there).
 */
import { randomBytes } from 'node:crypto';
import { createScratchDatabase } from '../../src/store/postgres-scratch.js';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import {
  DEFAULT_POSTGRES_URL,
  POSTGRES_URL_ENV,
  databaseUrl,
  postgresTestUrl,
  probePostgres,
  redactUrl,
  withClient,
} from './postgres-client.js';

export {
  DEFAULT_POSTGRES_URL,
  POSTGRES_URL_ENV,
  databaseUrl,
  postgresTestUrl,
  probePostgres,
  redactUrl,
  withClient,
};

export interface PostgresTestDatabase {
  /** The URL of this file's database. */
  readonly url: string;
  /** A fresh schema for one test, and the URL whose connections use it. */
  schema(): Promise<string>;
}

/**
 * The one-line notice, once per `node --test` run: test files run as children of one runner
 * (NODE_TEST_CONTEXT is set), which a marker file named after the runner's pid and start time
 * lets them agree on. Run alone, a file always shows it.
 */
function firstToSkip(): boolean {
  if (process.env['NODE_TEST_CONTEXT'] === undefined) return true;
  let started = '';
  try {
    started = readFileSync(`/proc/${process.ppid}/stat`, 'utf8').split(') ')[1]?.split(' ')[19] ?? '';
  } catch {
    // Not Linux: the pid alone names the run.
  }
  try {
    closeSync(openSync(join(tmpdir(), `baton-pg-skip-${process.ppid}-${started}`), 'wx'));
    return true;
  } catch {
    return false;
  }
}

async function createDatabase(url: string): Promise<string> {
  const scratch = await createScratchDatabase(url, 'test');
  after(() => scratch.drop());
  return scratch.name;
}

let schemas = 0;

/** This file's PostgreSQL database, or undefined when the PostgreSQL tests do not run. */
export async function postgresForTests(): Promise<PostgresTestDatabase | undefined> {
  const url = postgresTestUrl();
  const why = await probePostgres(url);
  if (why !== undefined) {
    const line = `PostgreSQL not reachable at ${redactUrl(url)}: skipping PostgreSQL tests (set ${POSTGRES_URL_ENV})`;
    if (!['', '0', 'false'].includes(process.env['CI'] ?? '')) {
      test(`PostgreSQL is reachable at ${redactUrl(url)} (required when CI is set)`, () => {
        throw new Error(`${line.replace(': skipping PostgreSQL tests', '')}: ${why}`);
      });
    } else if (firstToSkip()) {
      test(line, { skip: true }, () => undefined);
    }
    return undefined;
  }
  const database = await createDatabase(url);
  return {
    url: databaseUrl(url, database),
    async schema() {
      schemas += 1;
      const name = `t${schemas}_${randomBytes(3).toString('hex')}`;
      // Dropped with the database when the file ends.
      await withClient(databaseUrl(url, database), (c) => c.query(`CREATE SCHEMA ${name}`));
      return databaseUrl(url, database, name);
    },
  };
}
