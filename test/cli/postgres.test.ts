/**
 * `baton migrate` and `baton log verify|export` on PostgreSQL (docs/cli.md), in-process against the
 * real local server (a scratch schema per test): --postgres URL and BATON_POSTGRES_URL, migrations
 * idempotent, the log verified and exported with a checkpoint signed by the --domain-key file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createPublicKey } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { main } from '../../src/cli/baton.js';
import type { CliIo } from '../../src/cli/io.js';
import { ed25519Kid, importEd25519PrivateKey } from '../../src/core/ed25519.js';
import type { JsonObject } from '../../src/core/json.js';
import { openBaton } from '../../src/server/open.js';
import { migrations } from '../../src/store/migrations/index.js';
import { postgresForTests, withClient } from '../support/postgres.js';

const db = await postgresForTests();

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: (s) => void (out += s),
    stderr: (s) => void (err += s),
    readStdin: () => Promise.resolve(Buffer.alloc(0)),
  };
  const code = await main(argv, io);
  return { code, out, err };
}

function keyDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-pg-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Run with one variable set for this call only (parseOptions reads process.env). */
async function withEnv<T>(name: string, value: string, body: () => Promise<T>): Promise<T> {
  const before = process.env[name];
  process.env[name] = value;
  try {
    return await body();
  } finally {
    if (before === undefined) delete process.env[name];
    else process.env[name] = before;
  }
}

if (db !== undefined) {
  test('baton migrate --postgres applies every migration once; BATON_POSTGRES_URL works the same', async () => {
    const url = await db.schema();
    const first = await run(['migrate', '--postgres', url, '--json']);
    assert.equal(first.code, 0, first.err);
    assert.deepEqual(
      (JSON.parse(first.out) as JsonObject)['applied'],
      migrations.map((m) => ({ id: m.id, name: m.name })),
    );
    const again = await withEnv('BATON_POSTGRES_URL', url, () => run(['migrate']));
    assert.equal(again.code, 0, again.err);
    assert.match(again.out, /^schema is current \(version \d+\)$/m);
  });

  test('baton log verify and export --postgres: the chains verify, the checkpoint is signed by the domain key', async (t) => {
    const url = await db.schema();
    const keyFile = join(keyDir(t), 'shared.domain-key.pem');
    // A server's first open creates the domain key; tokens append evidence.
    const opened = await openBaton({ kind: 'postgres', url, domainKeyFile: keyFile });
    await opened.close();
    for (const role of ['admin', 'operator']) {
      const made = await run([
        'tokens',
        'create',
        '--role',
        role,
        '--postgres',
        url,
        '--domain-key',
        keyFile,
      ]);
      assert.equal(made.code, 0, made.err);
    }
    const verified = await run(['log', 'verify', '--postgres', url, '--json']);
    assert.equal(verified.code, 0, verified.err);
    const report = JSON.parse(verified.out) as JsonObject;
    assert.deepEqual([report['ok'], report['events'], report['subjects']], [true, 2, 2]);

    const exported = await run(['log', 'export', '--postgres', url, '--domain-key', keyFile]);
    assert.equal(exported.code, 0, exported.err);
    const lines = exported.out
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as JsonObject);
    assert.equal(lines.length, 3, 'two events and the checkpoint');
    const kid = ed25519Kid(createPublicKey(importEd25519PrivateKey({ pem: readFileSync(keyFile, 'utf8') })));
    assert.ok(exported.err.includes(`checkpoint signed by ${kid}`), exported.err);
    assert.ok(JSON.stringify(lines.at(-1)).includes(kid), 'the checkpoint names the domain key');
    const noKey = await run([
      'log',
      'export',
      '--postgres',
      url,
      '--domain-key',
      join(keyDir(t), 'none.domain-key.pem'),
    ]);
    assert.equal(noKey.code, 2, 'a missing key file is never created');
  });

  test("tokens create --postgres on a database without Baton's tables refuses and creates none", async (t) => {
    const url = await db.schema();
    const keyFile = join(keyDir(t), 'shared.domain-key.pem');
    const create = ['tokens', 'create', '--role', 'admin', '--postgres', url, '--domain-key', keyFile];
    const refused = await run(create);
    assert.equal(refused.code, 2, refused.err);
    assert.match(
      refused.err,
      /^error: usage: no Baton store in the database at .*\(baton migrate or baton serve creates one/,
    );
    assert.equal(refused.out, '', 'no token minted');
    const tables = await withClient(url, (c) =>
      c.query<{ n: string }>(
        'SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = current_schema()',
      ),
    );
    assert.equal(tables.rows[0]?.n, '0', 'no table created in the database the URL names');
    // A store brought into being on purpose takes the token.
    assert.equal((await run(['migrate', '--postgres', url])).code, 0);
    const created = await run(create);
    assert.equal(created.code, 0, created.err);
    assert.match(created.out, /^btk\./);
  });

  test('a PostgreSQL that refuses says why in words: a missing database is 3D000 (the database does not exist)', async () => {
    const missing = new URL(db.url);
    missing.pathname = '/baton_no_such_database_x';
    const r = await run(['migrate', '--postgres', missing.toString()]);
    assert.equal(r.code, 1, r.err);
    assert.match(
      r.err,
      /^error: unavailable: cannot connect to PostgreSQL at [^ ]+:\d+: 3D000 \(the database does not exist\)\n$/,
    );
    assert.doesNotMatch(r.err, /baton_no_such_database_x/, 'the address only, not the database');
    const refused = await run(['migrate', '--postgres', 'postgres://baton@127.0.0.1:1/none']);
    assert.match(refused.err, /127\.0\.0\.1:1: ECONNREFUSED \(nothing accepts connections there\)\n$/);
  });
}
