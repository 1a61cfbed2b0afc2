/**
 * Refusals a first-time user meets, in the words of what they typed: `apply --url` with a scheme
 * Baton does not speak names the flag (not the SDK's `baseUrl`); a URL whose server is not Baton
 * says so (not `not_found: HTTP 404`); `help` with two words says it takes one command name; a
 * stop matrix that is not JSON names the line and column.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../store/support.js';
import { repoRoot } from '../support/paths.js';
import { runBaton } from './run.js';

function config(t: Parameters<typeof tempDir>[0]): string {
  const file = join(tempDir(t), 'cfg.json');
  const example = JSON.parse(readFileSync(join(repoRoot, 'examples', 'baton.config.json'), 'utf8')) as {
    domain: unknown;
  };
  const domain = example.domain;
  writeFileSync(file, JSON.stringify({ format: 'baton.config/1', domain }));
  return file;
}

test('apply --url ftp://x: usage, naming --url, before any request', async (t) => {
  const r = await runBaton(['apply', config(t), '--url', 'ftp://x', '--token', 'x']);
  assert.equal(r.code, 2, r.err);
  assert.equal(r.err, 'error: usage: --url must be an http:// or https:// URL, not ftp:\n');
});

test('apply --url at a server that is not Baton (bare 404s): says it does not look like Baton', async (t) => {
  const server = createServer((_req, res) => {
    res.statusCode = 404;
    res.end('Not Found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const r = await runBaton(['apply', config(t), '--url', url, '--token', 'x']);
  assert.equal(r.code, 1, r.err);
  assert.match(
    r.err,
    /^error: not_found: the server at http:\/\/127\.0\.0\.1:\d+\/ does not look like Baton: its \/v1 route answered 404 without a Baton error \(check --url\)$/m,
  );
});

test('help with two words: usage, saying help takes one command name', async () => {
  const r = await runBaton(['help', 'serve', 'extra']);
  assert.equal(r.code, 2);
  assert.equal(
    r.err,
    'error: usage: help takes one command name: baton help serve (or baton serve --help)\n',
  );
  assert.match((await runBaton(['help', 'nope'])).err, /^error: usage: unknown command 'nope'/);
});

test('a stop matrix that is not JSON: stop_matrix_invalid naming line and column', async (t) => {
  const file = join(tempDir(t), 'bad.json');
  writeFileSync(file, '{\n  "id": "x",\n  oops\n}\n');
  const r = await runBaton(['stop-matrix', 'check', file]);
  assert.equal(r.code, 2, r.err);
  assert.match(
    r.err,
    /^error: stop_matrix_invalid: the stop matrix is not strict JSON at line 3, column 3 \(byte 17\): /m,
  );
});
