/**
 * Loose operator inputs of the reference system of record (docs/leases.md §7, §8, docs/cli.md):
 * `--public-url` must be an origin (it is written into every signed target URI), the audit log's
 * `after`/`limit` must be decimal integers, and the operator's `Bearer` scheme is case-insensitive
 * (RFC 9110 §11.1).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSor } from '../../src/cli/commands/sor.js';
import type { CliIo } from '../../src/cli/io.js';
import { isBatonError } from '../../src/core/errors.js';
import { generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { publicOriginDefect, startSor } from '../../src/sor/server.js';
import { OPERATOR, harness } from './helpers.js';

function sink(): CliIo & { out: string; err: string } {
  const s = {
    out: '',
    err: '',
    stdout: (t: string) => void (s.out += t),
    stderr: (t: string) => void (s.err += t),
    readStdin: () => Promise.resolve(Buffer.alloc(0)),
  };
  return s;
}

const NOT_ORIGINS = [
  'https://erp.example.com/base/?tenant=1#frag',
  'https://erp.example.com/base',
  'https://erp.example.com?x=1',
  'https://erp.example.com#f',
  'https://user:pw@erp.example.com',
  'https://erp.example.com//',
  'erp.example.com',
  'mailto:a@b.example',
];

test('--public-url other than an origin is a usage error naming the flag; nothing starts', async () => {
  for (const url of NOT_ORIGINS) {
    const io = sink();
    const code = await runSor(
      ['--port', '0', '--db', ':memory:', '--public-url', url],
      io,
      Promise.resolve(),
    );
    assert.equal(code, 2, url);
    assert.match(io.err, /^error: usage: --public-url must be an origin/, url);
    assert.equal(io.out, '', url);
  }
  for (const url of [
    'https://erp.example.com',
    'https://erp.example.com/',
    'http://127.0.0.1:8443',
    'http://[::1]:9',
  ]) {
    assert.equal(publicOriginDefect(url), undefined, url);
  }
});

test('startSor refuses a publicOrigin that is not an origin, typed', async () => {
  const k = generateEd25519KeyPair();
  await assert.rejects(
    startSor({
      dbPath: ':memory:',
      signer: { privateKey: k.privateKey, kid: k.kid },
      trusted: [],
      operatorToken: OPERATOR,
      publicOrigin: 'https://erp.example.com/base/?tenant=1#frag',
      sweepIntervalMs: 0,
    }),
    (e: unknown) => isBatonError(e, 'input_invalid') && e.details['member'] === 'publicOrigin',
  );
});

test('GET /ptcl/audit refuses after/limit that are not decimal integers; Bearer is case-insensitive', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const audit = (query: string, scheme = 'Bearer') =>
    fetch(`${h.sor.url}/ptcl/audit${query}`, { headers: { authorization: `${scheme} ${OPERATOR}` } });
  for (const query of [
    '?limit=1e400',
    '?after=0x10',
    '?limit=1.0',
    '?after=-1',
    '?limit=0',
    '?limit=',
    '?after=%205',
    '?limit=1&limit=2',
  ]) {
    const r = await audit(query);
    assert.equal(r.status, 400, query);
    assert.equal(((await r.json()) as { code: string }).code, 'input_invalid', query);
  }
  for (const query of ['', '?after=0&limit=5', '?limit=5000'])
    assert.equal((await audit(query)).status, 200, query);
  for (const scheme of ['bearer', 'BEARER', 'bEaReR'])
    assert.equal((await audit('', scheme)).status, 200, scheme);
  assert.equal((await audit('', 'Basic')).status, 401);
  assert.equal(
    (await fetch(`${h.sor.url}/ptcl/audit`, { headers: { authorization: `Bearer wrong-token-0123456789` } }))
      .status,
    401,
  );
});
