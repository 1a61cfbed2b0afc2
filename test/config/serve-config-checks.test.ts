/**
 * `baton serve --config` checks its file before the store is opened (a bad one exits 2 having
 * created nothing); with --json the tokens it mints without a tokens file are in the one JSON
 * line (configTokens), also when the start then fails; a sandbox still starting is waited for
 * with a line on stderr first (serve --config and apply).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { AdminClient } from '../../src/client/index.js';
import { READY_DEADLINE_MS, spawnNode, type WatchedChild } from '../support/child.js';
import { repoRoot } from '../support/paths.js';
import { baton, PROFILE_FILE, serveInProcess, tempDir, writeConfig } from './support.js';

const mainJs = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const FORMAT = 'baton.config/1';
const MINTS = { format: FORMAT, tokens: { create: [{ name: 'op1', role: 'operator' }] } };

interface Served {
  readonly code: number | undefined;
  readonly out: () => string;
  readonly err: () => string;
  stop(): Promise<number>;
}

/** `serve` in process until `ready(stdout)` (default: the --json line came) or its exit. */
async function serveJson(
  t: TestContext,
  argv: string[],
  ready = (out: string) => out.includes('\n'),
): Promise<Served> {
  const s = await serveInProcess(argv, ready);
  // Stopped whatever the test found (a failed assertion must not leave it serving).
  t.after(() => s.stop());
  return { code: s.exited(), out: s.out, err: s.err, stop: s.stop };
}

async function listening(t: TestContext): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return server;
}

/** A loopback URL where nothing listens (a port just freed). */
async function closedUrl(t: TestContext): Promise<string> {
  const server = await listening(t);
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

interface ConfigToken {
  readonly name: string;
  readonly role: string;
  readonly id: string;
  readonly token: string;
}

test('serve --json --config: stdout is one JSON line, the minted token in configTokens', async (t) => {
  const dir = tempDir(t);
  const file = writeConfig(dir, MINTS);
  const db = join(dir, 'baton.db');
  const s = await serveJson(t, ['--db', db, '--port', '0', '--json', '--config', file]);
  assert.equal(s.code, undefined, `serve exited: ${s.err()}`);
  const lines = s.out().split('\n');
  assert.equal(lines.length, 2, `one line: ${s.out()}`);
  assert.equal(lines[1], '');
  const ready = JSON.parse(lines[0] ?? '') as {
    url: string;
    adminToken: string;
    configTokens: ConfigToken[];
  };
  assert.match(ready.adminToken, /^btk\./);
  assert.equal(ready.configTokens.length, 1);
  const [op] = ready.configTokens;
  assert.deepEqual(Object.keys(op ?? {}).sort(), ['id', 'name', 'role', 'token']);
  assert.deepEqual([op?.name, op?.role], ['op1', 'operator']);
  assert.match(op?.token ?? '', /^btk\./);
  assert.match(s.err(), /^token op1: created$/m);
  // The secret works: it is the operator's one showing.
  const client = new AdminClient({ baseUrl: ready.url, token: op?.token ?? '' });
  assert.deepEqual((await client.listAuthorities()).authorities, []);
  assert.equal(await s.stop(), 0);

  // A restart mints nothing: configTokens is empty, still one line.
  const again = await serveJson(t, ['--db', db, '--port', '0', '--json', '--config', file]);
  assert.equal(again.code, undefined, again.err());
  assert.equal(again.out().split('\n').length, 2);
  const second = JSON.parse(again.out()) as { adminToken: unknown; configTokens: unknown };
  assert.deepEqual([second.adminToken, second.configTokens], [null, []]);
  assert.equal(await again.stop(), 0);
});

test('serve --config without --json still prints the token line once on stdout', async (t) => {
  const dir = tempDir(t);
  const s = await serveJson(
    t,
    ['--db', join(dir, 'baton.db'), '--port', '0', '--config', writeConfig(dir, MINTS), '--no-console'],
    (out) => out.includes('baton listening on'),
  );
  assert.equal(s.code, undefined, s.err());
  assert.match(s.out(), /^token op1 \(operator, shown once\): btk\.\S+$/m);
  assert.equal(await s.stop(), 0);
});

test('serve --config on a port in use exits 1 having applied nothing: no token minted, the tokens file untouched', async (t) => {
  const dir = tempDir(t);
  const taken = await listening(t);
  const { port } = taken.address() as { port: number };
  // The tokens file a running server's operator uses (it listens on the taken port).
  const tokens = join(dir, 'tokens.json');
  const held = `${JSON.stringify({ format: 'baton.tokens/1', tokens: [{ name: 'op1', role: 'operator', id: 'tok_1', token: 'btk.held' }] })}\n`;
  writeFileSync(tokens, held);
  const config = writeConfig(dir, { ...MINTS, tokens: { ...MINTS.tokens, file: 'tokens.json' } });
  const s = await serveJson(t, [
    '--db',
    join(dir, 'baton.db'),
    '--port',
    String(port),
    '--json',
    '--config',
    config,
  ]);
  const code = s.code ?? (await s.stop());
  assert.equal(code, 1);
  assert.match(
    s.err(),
    /error: unavailable: cannot listen on 127\.0\.0\.1:\d+: the address is in use \(EADDRINUSE\)/,
  );
  assert.doesNotMatch(s.err(), /token op1: created/, 'the config is applied only once it listens');
  assert.equal(s.out(), '', 'no token was minted, so none is shown');
  assert.equal(readFileSync(tokens, 'utf8'), held, 'the running server’s token is still in the file');
});

test('serve --config whose tokens file is unusable exits 2 before the store or its key exist', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'baton.db');
  writeFileSync(join(dir, 'garbled.json'), '{"format":');
  writeFileSync(join(dir, 'left.json'), '');
  writeFileSync(join(dir, 'left.json.partial'), '');
  const cases: [string, RegExp][] = [
    ['garbled.json', /^error: usage: .*garbled\.json is not a baton\.tokens\/1 file: line 1, column 11/m],
    ['left.json', /^error: usage: .*left\.json\.partial exists already/m],
    ['no-such-folder/tokens.json', /^error: usage: no folder for the tokens file/m],
  ];
  const before = readdirSync(dir).sort();
  for (const [file, message] of cases) {
    const config = writeConfig(dir, { ...MINTS, tokens: { ...MINTS.tokens, file } }, 'with-file.json');
    const r = await baton(['serve', '--db', db, '--port', '0', '--config', config]);
    assert.equal(r.code, 2, `${file}: ${r.err}`);
    assert.match(r.err, message, file);
    assert.equal(existsSync(db), false, `${file}: no database created`);
    assert.deepEqual(
      readdirSync(dir)
        .filter((f) => f !== 'with-file.json')
        .sort(),
      before,
      `${file}: no file created`,
    );
  }
});

test('serve --config with an empty or invalid file exits 2 before the store or its key exist', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'baton.db');
  const empty = join(dir, 'empty.json');
  writeFileSync(empty, '');
  const cases: [string, RegExp][] = [
    [empty, /^error: json_malformed: /m],
    [writeConfig(dir, {}, 'no-format.json'), /^error: config_invalid: /m],
    [
      writeConfig(dir, { format: FORMAT, tokens: { create: [{ name: '', role: 'operator' }] } }, 'bad.json'),
      /config_invalid/,
    ],
    [
      writeConfig(dir, { format: FORMAT, profiles: [{ file: 'missing.json' }] }, 'missing.json.cfg'),
      /config_invalid/,
    ],
    [join(dir, 'absent.json'), /^error: usage: cannot read the config file/m],
  ];
  const before = readdirSync(dir).sort();
  for (const [file, message] of cases) {
    const r = await baton(['serve', '--db', db, '--port', '0', '--config', file]);
    assert.equal(r.code, 2, `${file}: ${r.err}`);
    assert.match(r.err, message, file);
    assert.equal(r.out, '', file);
    assert.equal(existsSync(db), false, `${file}: no database created`);
    assert.deepEqual(readdirSync(dir).sort(), before, `${file}: no file created (no domain key)`);
  }
  // `apply` refuses the same empty file with the same exit code.
  const applied = await baton(['apply', empty, '--url', 'http://127.0.0.1:9', '--token', 'btk.x']);
  assert.equal(applied.code, 2);
});

/** Wait (at most the ready deadline) until the child's stderr matches, failing if it exits first. */
async function stderrMatch(child: WatchedChild, pattern: RegExp): Promise<string> {
  const deadline = Date.now() + READY_DEADLINE_MS;
  let exited = false;
  void child.exited.then(() => (exited = true));
  for (;;) {
    const m = pattern.exec(child.stderr());
    if (m !== null) return m[0];
    if (exited) throw child.failure(`exited before writing ${String(pattern)}`);
    if (Date.now() > deadline) {
      child.kill();
      throw child.failure(`no ${String(pattern)} on stderr`);
    }
    await sleep(50);
  }
}

function spawnBaton(t: TestContext, args: string[]): WatchedChild {
  const child = spawnNode('baton', [mainJs, ...args], {
    cwd: repoRoot,
    env: { ...process.env, BATON_LOG_LEVEL: 'silent' },
  });
  t.after(() => child.kill());
  return child;
}

test('serve --config and apply say on stderr that they wait for a sandbox still starting', async (t) => {
  const dir = tempDir(t);
  const sandbox = await closedUrl(t);
  const file = writeConfig(dir, {
    format: FORMAT,
    profiles: [{ file: PROFILE_FILE, pinToSandbox: sandbox }],
  });
  const line = `waiting for the sandbox at ${sandbox} (up to 15 s)`;
  const db = join(dir, 'baton.db');

  const served = spawnBaton(t, ['serve', '--db', db, '--port', '0', '--config', file]);
  assert.equal(await stderrMatch(served, /waiting for the sandbox at .*\n/), `${line}\n`);
  assert.equal(existsSync(db), false, 'the config (its sandbox) is settled before the store is opened');
  assert.deepEqual(served.lines, []);
  // Ctrl-C ends the wait: the start stops there (130), not at the wait's end (provider_unreachable, 1).
  served.kill('SIGINT');
  assert.deepEqual(await served.exited, { code: 130, signal: null });
  assert.match(served.stderr(), /^baton: SIGINT while starting: stopped before it was ready$/m);
  assert.doesNotMatch(served.stderr(), /provider_unreachable/);
  assert.equal(existsSync(db), false, 'nothing was opened');

  const applied = spawnBaton(t, ['apply', file, '--url', 'http://127.0.0.1:9', '--token', 'btk.x']);
  assert.equal(await stderrMatch(applied, /waiting for the sandbox at .*\n/), `${line}\n`);
  applied.kill();
});
