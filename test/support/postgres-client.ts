/**
 * PostgreSQL connection helpers shared by the tests (test/support/postgres.ts) and the benchmarks
 * (bench/support.ts). No node:test import here, so a benchmark can use it without registering tests.
 */
import pg from 'pg';

export const POSTGRES_URL_ENV = 'BATON_TEST_POSTGRES_URL';
export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const PROBE_TIMEOUT_MS = 2000;

export function postgresTestUrl(): string {
  const url = process.env[POSTGRES_URL_ENV];
  return url === undefined || url === '' ? DEFAULT_POSTGRES_URL : url;
}

/** The URL without its password, for messages: the server's own redaction. */
export { redactUrl } from '../../src/server/open.js';

/** Run statements on a short-lived connection (the admin side of the tests, never the engine). */
export async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
  client.on('error', () => undefined); // a dropped connection shows as the query's rejection
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Why PostgreSQL is not usable at `url`, or undefined when it is. */
export async function probePostgres(url: string): Promise<string | undefined> {
  try {
    await withClient(url, (c) => c.query('SELECT 1'));
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : 'unknown error';
  }
}

/** The same server and credentials, another database; `search_path` set when a schema is given. */
export function databaseUrl(base: string, database: string, schema?: string): string {
  const u = new URL(base);
  u.pathname = `/${database}`;
  if (schema !== undefined) {
    const options = [u.searchParams.get('options'), `-c search_path=${schema}`].filter((o) => o !== null);
    u.searchParams.set('options', options.join(' '));
  }
  return u.toString();
}
