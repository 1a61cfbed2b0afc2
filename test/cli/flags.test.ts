/**
 * Every command parses its flags through parseOptions (src/cli/command.ts), so every command
 * refuses alike, with exit 2 and a `usage` error naming the flag, before anything is opened or
 * started: an unknown flag, a one-value flag given twice (parseArgs alone keeps the last and drops
 * the other silently), and a flag given an empty value. Repeatable flags stay repeatable.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { main } from '../../src/cli/baton.js';
import { commands } from '../../src/cli/commands/index.js';
import { captureIo, tempDir } from '../store/support.js';

async function run(argv: string[], stdin = '{}') {
  const io = { ...captureIo(), readStdin: () => Promise.resolve(Buffer.from(stdin)) };
  const code = await main(argv, io);
  return { code, out: io.out.join(''), err: io.err.join('') };
}

/** For each command, an argv with FLAG (a one-value flag of that command) in place of its flag. */
const WITH_FLAG: Readonly<Record<string, (flag: readonly string[]) => string[]>> = {
  serve: (f) => ['serve', ...f, '--port', '0'],
  tokens: (f) => ['tokens', 'list', ...f],
  apply: (f) => ['apply', 'baton.config.json', ...f],
  domain: (f) => ['domain', 'show', ...f],
  profiles: (f) => ['profiles', 'list', ...f],
  authorities: (f) => ['authorities', 'list', ...f],
  producers: (f) => ['producers', 'list', ...f],
  migrate: (f) => ['migrate', ...f],
  log: (f) => ['log', 'verify', ...f],
  occurrences: (f) => ['occurrences', 'list', ...f],
  reconcile: (f) => ['reconcile', ...f],
  harness: (f) => ['harness', 'list', ...f],
  'stop-matrix': (f) => ['stop-matrix', 'check', '-', ...f],
  sandbox: (f) => ['sandbox', ...f, '--port', '0'],
  sor: (f) => ['sor', ...f, '--port', '0'],
  mcp: (f) => ['mcp', ...f],
  lease: (f) => ['lease', 'keygen', ...f],
  issuer: (f) => ['issuer', ...f, '--port', '0'],
  missions: (f) => ['missions', 'anchor', 'intent', '-', ...f],
  jcs: (f) => ['jcs', ...f, '-'],
  digest: (f) => ['digest', ...f, '-'],
  demo: (f) => ['demo', ...f],
  conformance: (f) => ['conformance', ...f],
  observe: (f) => ['observe', 'metrics', ...f],
  report: (f) => ['report', ...f],
};

/** A one-value flag of each command (jcs and stop-matrix have none: they only see it unknown). */
const ONE_VALUE: Readonly<Record<string, readonly [string, string, string]>> = {
  serve: ['--host', '127.0.0.1', '::1'],
  tokens: ['--db', 'a.db', 'b.db'],
  apply: ['--url', 'http://127.0.0.1:1', 'http://127.0.0.1:2'],
  domain: ['--token', 'btk.a', 'btk.b'],
  profiles: ['--url', 'http://127.0.0.1:1', 'http://127.0.0.1:2'],
  authorities: ['--url', 'http://127.0.0.1:1', 'http://127.0.0.1:2'],
  producers: ['--token', 'btk.a', 'btk.b'],
  migrate: ['--db', 'a.db', 'b.db'],
  log: ['--db', 'a.db', 'b.db'],
  occurrences: ['--limit', '1', '2'],
  reconcile: ['--passes', '1', '2'],
  harness: ['--state', 'queued', 'done'],
  sandbox: ['--host', '127.0.0.1', '::1'],
  sor: ['--db', 'a.db', 'b.db'],
  mcp: ['--policy', 'a.json', 'b.json'],
  lease: ['--out', 'a', 'b'],
  issuer: ['--alg', 'ES256', 'EdDSA'],
  missions: ['--iss', 'https://a.example', 'https://b.example'],
  digest: ['--json', '--json', ''],
  demo: ['--db', 'a.db', 'b.db'],
  conformance: ['--out', 'a', 'b'],
  observe: ['--lineage', 'a', 'b'],
  report: ['--format', 'md', 'html'],
};

/** A fresh folder as the working directory for this test (a default ./baton.db would land there). */
function inTempDir(t: TestContext): string {
  const dir = tempDir(t);
  const before = process.cwd();
  process.chdir(dir);
  t.after(() => process.chdir(before));
  return dir;
}

test('the flag tables cover every command', () => {
  assert.deepEqual(Object.keys(WITH_FLAG).sort(), commands.map((c) => c.name).sort());
});

test('every command refuses an unknown flag by name (exit 2), before anything is made', async (t) => {
  const dir = inTempDir(t);
  for (const [name, argv] of Object.entries(WITH_FLAG)) {
    const r = await run(argv(['--frob']));
    assert.equal(r.code, 2, `${name}: ${r.err}`);
    assert.match(r.err, /^error: usage: unknown flag --frob\b/, name);
    assert.equal(r.out, '', name);
  }
  assert.deepEqual(readdirSync(dir), [], 'nothing created');
});

test('every command refuses a one-value flag given twice (exit 2), keeping neither', async (t) => {
  const dir = inTempDir(t);
  for (const [name, [flag, a, b]] of Object.entries(ONE_VALUE)) {
    const twice = flag === '--json' ? [flag, flag] : [flag, a, flag, b];
    const r = await run((WITH_FLAG[name] ?? (() => []))(twice));
    assert.equal(r.code, 2, `${name} ${flag} twice: ${r.err}`);
    assert.equal(r.err, `error: usage: ${flag} is given more than once: give it once\n`, name);
    assert.equal(r.out, '', name);
  }
  const inline = await run(['migrate', '--db=a.db', '--db', 'b.db']);
  assert.equal(inline.code, 2, 'the --flag=value form counts too');
  assert.deepEqual(readdirSync(dir), [], 'neither database created');
});

test('a flag given an empty value is refused (exit 2) rather than read as a path, URL or name', async (t) => {
  const dir = inTempDir(t);
  for (const argv of [
    ['migrate', '--db', ''],
    ['migrate', '--db='],
    ['migrate', '--postgres', ''],
    ['report', '--out', ''],
    ['tokens', 'create', '--role', 'admin', '--name', ''],
    ['log', 'export', '--key='],
    ['lease', 'keygen', '--out', ''],
    ['occurrences', 'list', '--url', '', '--token', 'btk.x'],
  ]) {
    const r = await run(argv);
    assert.equal(r.code, 2, `${argv.join(' ')}: ${r.err}`);
    assert.match(
      r.err,
      /^error: usage: --[a-z-]+ needs a value: it was given an empty one\n$/,
      argv.join(' '),
    );
  }
  assert.deepEqual(readdirSync(dir), [], 'nothing created');
});

test('repeatable flags stay repeatable', async () => {
  const cases = await run(['conformance', '--case', 'AOC-CASE-001', '--case', 'AOC-CASE-999']);
  assert.equal(cases.code, 2);
  assert.match(cases.err, /usage: unknown case AOC-CASE-999/, 'both --case values were read');
  const mcp = await run(['mcp', '--policy', 'p.json', '--upstream', 'ftp://a', '--upstream', 'ftp://b']);
  assert.match(mcp.err, /--baton URL .* is required/, 'two --upstream flags parse');
});

test('conformance --case of the other suite says which --suite runs it (exit 2, no case run)', async () => {
  for (const [argv, message] of [
    [
      ['conformance', '--case', 'HAR-CASE-001'],
      /^error: usage: case HAR-CASE-001 belongs to --suite harness, not --suite aoc\n$/,
    ],
    [
      ['conformance', '--suite', 'harness', '--case', 'AOC-CASE-001'],
      /^error: usage: case AOC-CASE-001 belongs to --suite aoc, not --suite harness\n$/,
    ],
    [
      ['conformance', '--suite', 'harness', '--case', 'HAR-CASE-999'],
      /^error: usage: unknown case HAR-CASE-999\n$/,
    ],
  ] as const) {
    const r = await run([...argv]);
    assert.equal(r.code, 2, `${argv.join(' ')}: ${r.err}`);
    assert.equal(r.out, '', argv.join(' '));
    assert.match(r.err, message, argv.join(' '));
  }
});

test('stop-matrix check parses its arguments: a flag is not read as FILE, and FILE is required', async () => {
  const flag = await run(['stop-matrix', 'check', '--frob']);
  assert.equal(flag.code, 2);
  assert.match(flag.err, /^error: usage: unknown flag --frob\b/);
  const none = await run(['stop-matrix', 'check']);
  assert.equal(none.code, 2);
  assert.match(none.err, /^error: usage: expected: baton stop-matrix check FILE\|-/);
});

test("parseArgs's refusals are said in Baton's words, naming the flag and the command", async (t) => {
  const dir = inTempDir(t);
  const cases: [string[], string][] = [
    [
      ['authorities', 'create', '--id', 'a', '--unit', 'u', '--total', '-5'],
      '--total needs a value: to give it -5, write --total=-5',
    ],
    [['domain', 'show', '--json'], 'unknown flag --json for domain show (see baton domain show --help)'],
    [['apply', 'c.json', '-x'], 'unknown flag -x for apply (see baton apply --help)'],
    [['authorities', 'create', '--id', 'a', '--total'], '--total needs a value'],
    [['migrate', '--json=yes'], '--json takes no value: give it alone'],
  ];
  for (const [argv, message] of cases) {
    const r = await run(argv);
    assert.deepEqual([r.code, r.out, r.err], [2, '', `error: usage: ${message}\n`], argv.join(' '));
  }
  assert.deepEqual(readdirSync(dir), [], 'nothing created');
});
