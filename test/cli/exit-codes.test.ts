/**
 * One exit code per condition, whichever command meets it (docs/cli.md "Exit codes"): 2 only for
 * the caller's input (every error code whose HTTP status is 400 or 413), 1 for anything else. A
 * PostgreSQL or a Baton server that does not answer, or a port already taken, exits 1 from every
 * command that meets it, as a corrupt store does (test/cli/not-a-database.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { main } from '../../src/cli/baton.js';
import { EXIT, exitFor, isBadInput } from '../../src/cli/io.js';
import { ERROR_CODES } from '../../src/core/errors.js';
import { captureIo, tempDir } from '../store/support.js';

async function run(argv: string[]) {
  const io = captureIo();
  const code = await main(argv, io);
  return { code, out: io.out.join(''), err: io.err.join('') };
}

test('bad input is exactly the codes whose HTTP status is 400 or 413; every other code exits 1', () => {
  for (const [code, spec] of Object.entries(ERROR_CODES)) {
    const bad = spec.status === 400 || spec.status === 413;
    assert.equal(isBadInput(code), bad, code);
    assert.equal(exitFor(code), bad ? EXIT.usage : EXIT.negative, code);
  }
  for (const code of ['usage', 'input_invalid', 'config_invalid', 'key_invalid', 'json_too_large'])
    assert.equal(exitFor(code), 2, code);
  for (const code of ['store_corrupt', 'store_schema_newer', 'unavailable', 'not_found', 'internal'])
    assert.equal(exitFor(code), 1, code);
  assert.equal(isBadInput('no_such_code'), false, 'an unknown code is never taken for bad input');
});

/** Nothing listens on port 1 of the loopback: connections are refused at once. */
const DEAD_PG = 'postgres://baton:hunter2@127.0.0.1:1/none';
const DEAD_URL = 'http://127.0.0.1:1';

test('an unreachable PostgreSQL exits 1 from every command that opens a store', async (t) => {
  const dir = tempDir(t);
  const key = join(dir, 'x.domain-key.pem');
  for (const argv of [
    ['migrate'],
    ['tokens', 'list'],
    ['log', 'verify'],
    ['reconcile', '--domain-key', key],
    ['harness', 'list', '--domain-key', key],
    ['report', '--domain-key', key],
    ['observe', 'export', '--domain-key', key],
    ['observe', 'metrics', '--domain-key', key],
    ['serve', '--port', '0', '--domain-key', key],
  ]) {
    const r = await run([...argv, '--postgres', DEAD_PG]);
    const what = argv.slice(0, 2).join(' ');
    assert.equal(r.code, 1, `${what}: ${r.err}`);
    assert.match(r.err, /^error: unavailable: cannot connect to PostgreSQL at 127\.0\.0\.1:1/, what);
    assert.equal(r.out, '', what);
  }
});

test('an unreachable Baton server exits 1 from every command that calls one', async () => {
  for (const argv of [
    ['occurrences', 'list'],
    ['occurrences', 'show', 'occ-1'],
    ['domain', 'show'],
    ['profiles', 'list'],
    ['authorities', 'show', 'a'],
    ['missions', 'check', 'https://issuer.example', 'm-1'],
  ]) {
    const r = await run([...argv, '--url', DEAD_URL, '--token', 'btk.x']);
    const what = argv.slice(0, 2).join(' ');
    assert.equal(r.code, 1, `${what}: ${r.err}`);
    assert.match(r.err, /^error: unavailable: /, what);
  }
});

test('a port already taken exits 1 from every server command, naming the address and why', async (t) => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.after(() => taken.close());
  const port = String((taken.address() as AddressInfo).port);
  const dir = tempDir(t);
  for (const argv of [
    ['sandbox', '--port', port],
    ['sor', '--port', port, '--db', join(dir, 'sor.db')],
    ['issuer', '--port', port],
    ['serve', '--port', port, '--db', join(dir, 'baton.db'), '--log-level', 'silent'],
  ]) {
    const r = await run(argv);
    assert.equal(r.code, 1, `${argv[0]}: ${r.err}`);
    assert.match(
      r.err,
      new RegExp(
        `^error: unavailable: cannot listen on 127\\.0\\.0\\.1:${port}: the address is in use \\(EADDRINUSE\\)$`,
        'm',
      ),
      argv[0],
    );
  }
});
