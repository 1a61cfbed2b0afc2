/**
 * Environment configuration (docs/operations.md, "Environment"): every option declaring `env` reads
 * its variable when the flag is absent; a flag wins over the variable, the variable over the
 * default; an empty variable is unset; a contradicting store variable is ignored when the other
 * store flag is given. And `baton serve` configured only by BATON_* variables, as a child process.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { envUsage, parseOptions } from '../../src/cli/command.js';
import { STORE_OPTIONS, storeChoice } from '../../src/cli/commands/store-choice.js';
import type { JsonObject } from '../../src/core/json.js';
import { openSqliteEngine } from '../../src/store/sqlite.js';
import { repoRoot } from '../support/paths.js';

const OPTIONS = {
  port: { type: 'string', env: 'T_PORT', default: '4000' },
  verbose: { type: 'boolean', env: 'T_VERBOSE' },
  plain: { type: 'string', default: 'p' },
} as const;

const parse = (args: string[], env: Record<string, string>) =>
  parseOptions({ args, strict: true, allowPositionals: false, options: OPTIONS }, env).values;

test('a flag wins over its variable, the variable over the default; empty is unset', () => {
  assert.equal(parse([], {}).port, '4000', 'default');
  assert.equal(parse([], { T_PORT: '5000' }).port, '5000', 'environment over default');
  assert.equal(parse(['--port', '6000'], { T_PORT: '5000' }).port, '6000', 'flag over environment');
  assert.equal(parse([], { T_PORT: '' }).port, '4000', 'an empty variable is unset');
  assert.equal(parse([], { T_VERBOSE: 'true' }).verbose, true);
  assert.equal(parse([], { T_VERBOSE: '0' }).verbose, false);
  assert.equal(parse([], {}).verbose, undefined);
  assert.throws(() => parse([], { T_VERBOSE: 'maybe' }), /T_VERBOSE must be true or false/);
  assert.equal(parse([], {}).plain, 'p', 'an option without env keeps its default');
  assert.throws(
    () => parse(['--nope'], {}),
    (e: Error & { code?: string }) => e.code === 'usage',
  );
  assert.match(envUsage(OPTIONS), /T_PORT +--port/);
  assert.ok(!envUsage(OPTIONS).includes('--plain'));
});

test('BATON_DB and BATON_POSTGRES_URL: the store flag given on the command line hides the other variable', () => {
  const store = (args: string[], env: Record<string, string>) =>
    storeChoice(parseOptions({ args, strict: true, options: STORE_OPTIONS }, env).values);
  assert.deepEqual(store([], { BATON_DB: '/x/a.db' }), { kind: 'sqlite', path: '/x/a.db' });
  assert.deepEqual(
    store(['--db', '/x/b.db'], { BATON_DB: '/x/a.db', BATON_POSTGRES_URL: 'postgres://h/d' }),
    {
      kind: 'sqlite',
      path: '/x/b.db',
    },
  );
  const pg = store([], { BATON_POSTGRES_URL: 'postgres://h/d', BATON_POOL: '3' });
  assert.deepEqual(pg, {
    kind: 'postgres',
    url: 'postgres://h/d',
    domainKeyFile: './baton.domain-key.pem',
    maxConnections: 3,
  });
  assert.equal(
    store(['--postgres', 'postgres://h/e'], { BATON_DB: '/x/a.db' }).kind,
    'postgres',
    '--postgres ignores a BATON_DB left in the environment',
  );
  assert.throws(() => store([], { BATON_DB: '/x/a.db', BATON_POSTGRES_URL: 'postgres://h/d' }), /not both/);
});

test('a store setting refused names its variable with its flag (it may have come from either)', () => {
  const store = (args: string[], env: Record<string, string>) =>
    storeChoice(parseOptions({ args, strict: true, options: STORE_OPTIONS }, env).values);
  const refusal = (env: Record<string, string>, message: string) =>
    assert.throws(
      () => store([], env),
      (e: Error & { code?: string }) => e.code === 'usage' && e.message === message,
      JSON.stringify(env),
    );
  refusal(
    { BATON_DB: 'app.db', BATON_POOL: '5' },
    '--pool (BATON_POOL) is for --postgres (BATON_POSTGRES_URL)',
  );
  refusal(
    { BATON_DB: 'app.db', BATON_DOMAIN_KEY: 'k.domain-key.pem' },
    '--domain-key (BATON_DOMAIN_KEY) is for --postgres (BATON_POSTGRES_URL); a SQLite database keeps its key beside it',
  );
  refusal(
    { BATON_POSTGRES_URL: 'postgres://h/d', BATON_POOL: '0' },
    '--pool (BATON_POOL) must be a whole number from 1 to 1000',
  );
  refusal({ BATON_POSTGRES_URL: 'mysql://h/d' }, '--postgres (BATON_POSTGRES_URL) must be a postgres:// URL');
  refusal(
    { BATON_DB: 'a.db', BATON_POSTGRES_URL: 'postgres://h/d' },
    'give --db (BATON_DB) or --postgres (BATON_POSTGRES_URL), not both',
  );
  // baton mcp reads no variable for its store flags: its refusals name the flag alone.
  assert.throws(
    () => storeChoice({ db: 'a.db', pool: '5' }, { fromEnvironment: false }),
    (e: Error) => e.message === '--pool is for --postgres',
  );
});

const fromTs = import.meta.url.endsWith('.ts');
const mainScript = fileURLToPath(new URL(`../../src/cli/main.${fromTs ? 'ts' : 'js'}`, import.meta.url));

function baton(
  args: string[],
  env: NodeJS.ProcessEnv,
): { lines: AsyncIterable<string>; exited: Promise<number | null>; kill: () => void; err: () => string } {
  const argv = fromTs ? ['--import', 'tsx', mainScript, ...args] : [mainScript, ...args];
  const proc = spawn(process.execPath, argv, {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let err = '';
  proc.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code, sig) => {
      if (sig) err += `signal ${sig}\n`;
      resolve(code);
    }),
  );
  const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
  void exited.then(() => clearTimeout(timer));
  return {
    lines: createInterface({ input: proc.stdout }),
    exited,
    kill: () => proc.kill('SIGTERM'),
    err: () => err,
  };
}

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-env-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('baton serve configured by BATON_* variables alone (--json answer), and a flag still wins', async (t) => {
  const dir = tempDir(t);
  const env = {
    BATON_DB: join(dir, 'env.db'),
    BATON_PORT: '0',
    BATON_HOST: '127.0.0.1',
    BATON_LOG_LEVEL: 'silent',
  };
  const s = baton(['serve', '--json'], env);
  t.after(s.kill);
  let ready: JsonObject | undefined;
  for await (const line of s.lines) {
    ready = JSON.parse(line) as JsonObject;
    break;
  }
  assert.equal(ready?.['store'], `sqlite ${env.BATON_DB}`);
  assert.match(ready?.['url'] as string, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.match(ready?.['adminToken'] as string, /^btk\./, 'the first start mints the admin token');
  const health = await fetch(`${ready?.['url'] as string}/healthz`);
  assert.equal(health.status, 200);
  s.kill();
  assert.equal(await s.exited, 0, s.err());

  const flagged = baton(['serve', '--json', '--db', join(dir, 'flag.db')], env);
  t.after(flagged.kill);
  for await (const line of flagged.lines) {
    assert.equal((JSON.parse(line) as JsonObject)['store'], `sqlite ${join(dir, 'flag.db')}`);
    break;
  }
  flagged.kill();
  assert.equal(await flagged.exited, 0, flagged.err());

  const bad = baton(['serve'], { ...env, BATON_PORT: '99999' });
  assert.equal(await bad.exited, 2);
  assert.match(bad.err(), /BATON_PORT/);
});

test('errors name cause and address; no admin token without a listen; an unreachable PostgreSQL writes no file', async (t) => {
  const dir = tempDir(t);
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  t.after(() => busy.close());
  const port = (busy.address() as { port: number }).port;
  const db = join(dir, 'taken.db');
  const taken = baton(['serve', '--db', db, '--port', String(port), '--log-level', 'silent'], {});
  assert.equal(await taken.exited, 1);
  assert.match(
    taken.err(),
    new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the address is in use \\(EADDRINUSE\\)`),
  );
  const engine = openSqliteEngine(db, { fileMustExist: true });
  const admins = await engine.read((ex) => ex.get<{ n: number }>('SELECT COUNT(*) AS n FROM api_tokens'));
  await engine.close();
  assert.equal(Number(admins?.n), 0, 'no admin token was minted that nobody was shown');

  const missing = join(dir, 'absent', 'baton.db');
  const noFolder = baton(['serve', '--db', missing, '--port', '0'], {});
  assert.equal(await noFolder.exited, 2);
  assert.match(noFolder.err(), new RegExp(`no folder ${join(dir, 'absent')} for the SQLite database`));

  const keys = join(dir, 'keys');
  const pgDir = mkdtempSync(join(dir, 'pg-'));
  const key = join(pgDir, 'x.domain-key.pem');
  const unreachable = baton(
    ['serve', '--postgres', 'postgres://baton@127.0.0.1:1/none', '--domain-key', key, '--port', '0'],
    {},
  );
  assert.equal(await unreachable.exited, 1);
  assert.match(unreachable.err(), /cannot connect to PostgreSQL at 127\.0\.0\.1:1: ECONNREFUSED/);
  assert.deepEqual(readdirSync(pgDir), [], 'no domain key file was created');
  assert.ok(!existsSync(keys));
  const migrateDown = baton(['migrate', '--postgres', 'postgres://baton@127.0.0.1:1/none'], {});
  assert.equal(await migrateDown.exited, 1);
  assert.match(migrateDown.err(), /127\.0\.0\.1:1/);
});

test('every command that opens a store reads BATON_DB, and operations.md lists each of them', async (t) => {
  const db = join(tempDir(t), 'from-env.db');
  const readers = [
    ['tokens', 'list'],
    ['log', 'verify'],
    ['reconcile'],
    ['harness', 'list'],
    ['report'],
    ['observe', 'export'],
    ['observe', 'metrics'],
  ];
  for (const argv of readers) {
    const ran = baton(argv, { BATON_DB: db });
    const code = await ran.exited;
    assert.equal(code, 2, `${argv.join(' ')}: ${ran.err()}`);
    assert.ok(ran.err().includes(db), `${argv.join(' ')} read BATON_DB: ${ran.err()}`);
  }
  const row = readFileSync(join(repoRoot, 'docs', 'operations.md'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith('| `BATON_DB` |'));
  const listed =
    (row ?? '')
      .split('|')[3]
      ?.split(',')
      .map((c) => c.trim()) ?? [];
  for (const name of new Set([...readers.map((a) => a[0] ?? ''), 'serve', 'migrate']))
    assert.ok(listed.includes(name), `operations.md's BATON_DB row names ${name}: ${row}`);
});
