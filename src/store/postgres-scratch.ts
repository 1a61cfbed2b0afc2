/**
 * A throwaway PostgreSQL database on a given server, for runs that must start from nothing and
 * leave nothing behind (`baton conformance --engine postgres`, the benchmarks). Needs the CREATEDB
 * privilege. UTF8 with C collation, as the tests create theirs, so ordering is byte order on every
 * server whatever its locale.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { BatonError } from '../core/errors.js';

export interface ScratchDatabase {
  /** The same server and credentials, the scratch database. */
  readonly url: string;
  readonly name: string;
  /** Drop it, closing whatever still holds a connection to it. */
  drop(): Promise<void>;
}

const LABEL = /^[a-z][a-z0-9_]{0,30}$/;

async function administer(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined); // a dropped connection shows as the query's rejection
  try {
    await client.connect();
    await client.query(sql);
  } catch (cause) {
    // Never the URL in the message: it may hold a password.
    throw new BatonError(
      'unavailable',
      'PostgreSQL refused to create or drop a scratch database',
      {},
      { cause },
    );
  } finally {
    // Closing after a failed connect may fail too; the error above is the one to report.
    await client.end().catch(() => undefined);
  }
}

/** Create `baton_<label>_<random>` on the server at `url` (whose own database is only connected to). */
export async function createScratchDatabase(url: string, label: string): Promise<ScratchDatabase> {
  if (!LABEL.test(label)) throw new BatonError('internal', 'a scratch database label is [a-z][a-z0-9_]*');
  const name = `baton_${label}_${randomBytes(4).toString('hex')}`;
  await administer(
    url,
    `CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`,
  );
  const u = new URL(url);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    name,
    drop: () => administer(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
