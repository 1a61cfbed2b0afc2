/**
 * A command whose verbs share one flag parse (harness, domain, profiles, authorities, missions)
 * refuses a flag given to a verb that does not read it — exit 2, naming the flag and the verb,
 * before any store is opened or server called — instead of leaving it silently unused. So do
 * `baton mcp`'s --http-only flags without --http.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { main } from '../../src/cli/baton.js';
import { captureIo, tempDir } from '../store/support.js';

async function run(argv: string[], stdin = '{"a":1}') {
  const io = { ...captureIo(), readStdin: () => Promise.resolve(Buffer.from(stdin)) };
  const code = await main(argv, io);
  return { code, out: io.out.join(''), err: io.err.join('') };
}

/** Nothing answers there: a verb that got as far as calling it would fail otherwise (exit 1). */
const SERVER = ['--url', 'http://127.0.0.1:1', '--token', 'btk.x'];

test('harness verbs refuse the flags of other verbs, before the store is opened', async (t) => {
  const db = ['--db', join(tempDir(t), 'none.db')];
  for (const [argv, flag, verb] of [
    [['harness', 'list', '--decision', 'pause'], 'decision', 'list'],
    [['harness', 'show', 'wi_1', '--state', 'queued'], 'state', 'show'],
    [['harness', 'stop', 'wi_1', '--decision', 'pause', '--binding', '-'], 'binding', 'stop'],
    [['harness', 'requeue', 'wi_1', '--source', 'tool_result'], 'source', 'requeue'],
    [['harness', 'rebind', 'wi_1', '--binding', '-', '--mission', 'o#m'], 'mission', 'rebind'],
    [['harness', 'taint', 's_1', '--source', 'x', '--decision', 'pause'], 'decision', 'taint'],
    [['harness', 'session', 's_1', '--state', 'queued'], 'state', 'session'],
  ] as const) {
    const r = await run([...argv, ...db]);
    assert.equal(r.code, 2, `${argv.join(' ')}: ${r.err}`);
    assert.equal(r.err, `error: usage: --${flag} does not apply to \`baton harness ${verb}\`\n`);
  }
  const own = await run(['harness', 'list', '--state', 'queued', ...db]);
  assert.match(own.err, /no database at/, "a verb's own flag still passes to the store");
});

test('domain, profiles and authorities verbs refuse the flags of other verbs', async () => {
  for (const [argv, flag, verb] of [
    [
      ['profiles', 'list', '--from-sandbox', 'http://127.0.0.1:1', ...SERVER],
      'from-sandbox',
      'profiles list',
    ],
    [['profiles', 'show', 'p', '1', '--wait', '3', ...SERVER], 'wait', 'profiles show'],
    [['profiles', 'pin', '--from-sandbox', 'http://127.0.0.1:1', ...SERVER], 'url', 'profiles pin'],
    [['authorities', 'list', '--id', 'a', ...SERVER], 'id', 'authorities list'],
    [['authorities', 'show', 'a', '--total', '3', ...SERVER], 'total', 'authorities show'],
  ] as const) {
    const r = await run([...argv]);
    assert.equal(r.code, 2, `${argv.join(' ')}: ${r.err}`);
    assert.equal(r.err, `error: usage: --${flag} does not apply to \`baton ${verb}\`\n`);
  }
  const wait = await run(['profiles', 'add', '-', '--wait', '3', ...SERVER]);
  assert.equal(wait.code, 2);
  assert.equal(wait.err, 'error: usage: --wait is for --pin-to-sandbox\n');
});

test('missions verbs refuse the flags of other verbs; anchor --json is what its usage says', async () => {
  for (const [argv, flag, verb] of [
    [
      ['missions', 'anchor', 'intent', '-', '--iss', 'https://i.example', '--jwks', 'k.json'],
      'jwks',
      'anchor',
    ],
    [
      [
        'missions',
        'verify-set',
        '-',
        '--jwks',
        'k.json',
        '--iss',
        'https://i.example',
        '--aud',
        'a',
        '--nonce',
        'n',
      ],
      'nonce',
      'verify-set',
    ],
    [['missions', 'check', 'https://i.example', 'm-1', '--now', '10', ...SERVER], 'now', 'check'],
  ] as const) {
    const r = await run([...argv]);
    assert.equal(r.code, 2, `${argv.join(' ')}: ${r.err}`);
    assert.equal(r.err, `error: usage: --${flag} does not apply to \`baton missions ${verb}\`\n`);
  }
  const anchored = await run(['missions', 'anchor', 'intent', '-', '--iss', 'https://i.example', '--json']);
  assert.equal(anchored.code, 0, anchored.err);
  assert.deepEqual(Object.keys(JSON.parse(anchored.out) as object), ['kind', 'anchor']);
  const help = await run(['missions', '--help']);
  assert.match(help.out, /anchor intent\|authority FILE\|- --iss URL \[--json\]/);
  assert.match(help.out, /--json: \{"kind","anchor"\}/);
});

test('mcp refuses --host, --allowed-host and --allowed-origin without --http', async () => {
  for (const flag of ['--host', '--allowed-host', '--allowed-origin']) {
    const r = await run([
      'mcp',
      '--policy',
      'p.json',
      '--baton',
      'http://127.0.0.1:1',
      '--upstream',
      'http://127.0.0.1:1/mcp',
      flag,
      'x',
    ]);
    assert.equal(r.code, 2, `${flag}: ${r.err}`);
    assert.equal(r.err, `error: usage: ${flag} is for --http (stdio has no address)\n`);
  }
});
