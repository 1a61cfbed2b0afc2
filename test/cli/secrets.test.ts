/**
 * No secret a user typed comes back in an error line: a URL's password or a Baton token's secret
 * that lands where no argument is taken is echoed masked (parseArgs quotes the argument it
 * refuses), and an unreachable PostgreSQL is named by host and port only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../src/cli/baton.js';
import { redactSecrets } from '../../src/cli/command.js';
import { captureIo } from '../store/support.js';

async function run(argv: string[]) {
  const io = captureIo();
  const code = await main(argv, io);
  return { code, out: io.out.join(''), err: io.err.join('') };
}

const URL_WITH_PASSWORD = 'postgres://bob:hunter2@127.0.0.1:1/baton';
const TOKEN = 'btk.tok_0123456789abcdef0123456789abcdef.S3cr3t-Part_of-the-token';

test('an argument carrying a password or a token is echoed masked in the usage error', async () => {
  for (const [argv, shown] of [
    [['migrate', URL_WITH_PASSWORD], "'postgres://bob:***@127.0.0.1:1/baton'"],
    [['report', URL_WITH_PASSWORD], 'postgres://bob:***@127.0.0.1:1/baton'],
    [['reconcile', TOKEN], "'btk.tok_0123456789abcdef0123456789abcdef.***'"],
    [['serve', '--port', '0', `--bogus=${URL_WITH_PASSWORD}`], 'unknown flag --bogus'],
  ] as const) {
    const r = await run([...argv]);
    assert.equal(r.code, 2, `${argv.join(' ')}: ${r.err}`);
    assert.ok(r.err.includes(shown), `${argv[0]}: ${r.err}`);
    assert.doesNotMatch(r.err, /hunter2|S3cr3t/, argv[0]);
  }
});

test('an unreachable PostgreSQL is named by host and port, never its password', async () => {
  const r = await run(['reconcile', '--postgres', URL_WITH_PASSWORD]);
  assert.equal(r.code, 1);
  assert.match(r.err, /cannot connect to PostgreSQL at 127\.0\.0\.1:1/);
  assert.doesNotMatch(r.err, /hunter2|bob/);
});

test('redactSecrets masks URL passwords (even with an unencoded @) and token secrets, nothing else', () => {
  assert.equal(redactSecrets('at postgres://u:p@ss@db:5432/x now'), 'at postgres://u:***@db:5432/x now');
  assert.equal(redactSecrets('https://user:pw@host/a'), 'https://user:***@host/a');
  assert.equal(redactSecrets(`token ${TOKEN}.`), 'token btk.tok_0123456789abcdef0123456789abcdef.***.');
  for (const plain of [
    'http://host:8080/path@x',
    'postgres://postgres@127.0.0.1:5432/postgres',
    'no database at ./baton.db',
    'tok_0123 is revoked',
  ])
    assert.equal(redactSecrets(plain), plain, plain);
});
