/**
 * The `Host` a request names (docs/api.md "Host"; src/core/http-host.ts, the rule the MCP gateway
 * shares): a server on loopback answers the loopback names and what `baton serve --allowed-host`
 * adds, and refuses every other Host — a web page that rebound its own name to 127.0.0.1 (DNS
 * rebinding) — `421 host_not_allowed` on every path, before any authentication or route, changing
 * nothing. Two Host headers are `400 http_malformed` (RFC 9112 §3.2). Raw sockets: fetch sets its
 * own Host and merges repeated headers.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { JsonObject } from '../../src/core/json.js';
import { spawnNode } from '../support/child.js';
import { repoRoot } from '../support/paths.js';
import { startApi, type Api } from './helpers.js';
import { assertRawProblem, raw, type RawAnswer } from './raw-http.js';

const main = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

/** One request with exactly these Host lines (none, one or several). */
function withHosts(
  url: string,
  method: string,
  path: string,
  hosts: readonly string[],
  headers: readonly string[] = [],
  body = '',
  version = '1.1',
): Promise<RawAnswer> {
  const lines = [...hosts.map((h) => `Host: ${h}`), ...headers].map((h) => `${h}\r\n`).join('');
  const length = body === '' ? '' : `Content-Length: ${Buffer.byteLength(body)}\r\n`;
  return raw(url, `${method} ${path} HTTP/${version}\r\n${lines}${length}Connection: close\r\n\r\n${body}`);
}

const portOf = (url: string): string => new URL(url).port;

/** Every kind of path: operational, OpenAPI, console, a /v1 read and a /v1 sign-in. */
function paths(api: Api): { method: string; path: string; headers: string[]; body?: string }[] {
  return [
    { method: 'GET', path: '/metrics', headers: [] },
    { method: 'GET', path: '/healthz', headers: [] },
    { method: 'GET', path: '/readyz', headers: [] },
    { method: 'GET', path: '/openapi.json', headers: [] },
    { method: 'GET', path: '/console/', headers: [] },
    { method: 'GET', path: '/v1/counts', headers: [`Authorization: Bearer ${api.admin}`] },
    {
      method: 'POST',
      path: '/v1/session',
      headers: ['Content-Type: application/json'],
      body: JSON.stringify({ token: api.operator }),
    },
    { method: 'GET', path: '/no-such-path', headers: [] },
  ];
}

test('a loopback server refuses a foreign Host with 421 host_not_allowed on every path, before anything, and changes nothing', async (t) => {
  const api = await startApi(t);
  const port = portOf(api.url);
  const before = await api.snapshot();
  const foreign = [
    `evil.example:${port}`,
    'evil.example',
    `localhost.evil.example:${port}`,
    `127.0.0.1.nip.io:${port}`,
    `127.0.0.1@evil.example:${port}`,
    `127.0.0.1:${port}/x`,
    `[::2]:${port}`,
  ];
  for (const p of paths(api)) {
    for (const host of foreign) {
      const a = await withHosts(api.url, p.method, p.path, [host], p.headers, p.body);
      assertRawProblem(a, 421, 'host_not_allowed');
      assert.ok(!a.text.includes(api.admin) && !a.text.includes(api.operator), 'no credential echoed');
      assert.ok(!/set-cookie/i.test(a.head), `${p.path} with Host ${host}: no session was made`);
    }
  }
  // HTTP/1.0 may omit Host: without one, the request names no allowed name either.
  assertRawProblem(await withHosts(api.url, 'GET', '/metrics', [], [], '', '1.0'), 421, 'host_not_allowed');
  assert.equal(await api.snapshot(), before, 'no refused request changed any row');
});

test('a loopback server answers 127.0.0.1, localhost and [::1], with or without the port, in any case', async (t) => {
  const api = await startApi(t);
  const port = portOf(api.url);
  const own = [`127.0.0.1:${port}`, `localhost:${port}`, `LocalHost:${port}`, `[::1]:${port}`, '127.0.0.1'];
  for (const p of paths(api)) {
    for (const host of own) {
      const a = await withHosts(api.url, p.method, p.path, [host], p.headers, p.body);
      const want = p.path === '/no-such-path' ? 404 : p.path === '/v1/session' ? 201 : 200;
      assert.equal(a.status, want, `${p.method} ${p.path} with Host ${host}: ${a.text.slice(0, 300)}`);
    }
  }
});

test('two Host headers are 400 http_malformed (RFC 9112 §3.2), even the same name twice, before the Host check', async (t) => {
  const api = await startApi(t);
  const port = portOf(api.url);
  const before = await api.snapshot();
  for (const hosts of [
    [`127.0.0.1:${port}`, 'evil.example'],
    ['evil.example', `127.0.0.1:${port}`],
    [`127.0.0.1:${port}`, `127.0.0.1:${port}`],
  ]) {
    for (const path of ['/healthz', '/metrics', '/v1/counts']) {
      const a = await withHosts(api.url, 'GET', path, hosts, [`Authorization: Bearer ${api.admin}`]);
      assertRawProblem(a, 400, 'http_malformed');
      assert.equal((a.body['details'] as JsonObject | undefined)?.['header'], 'host', a.text);
    }
  }
  const signIn = await withHosts(
    api.url,
    'POST',
    '/v1/session',
    [`localhost:${port}`, 'evil.example'],
    ['Content-Type: application/json'],
    JSON.stringify({ token: api.operator }),
  );
  assertRawProblem(signIn, 400, 'http_malformed');
  assert.equal(await api.snapshot(), before);
});

function serve(t: TestContext, args: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'baton-serve-host-'));
  const child = spawnNode('baton serve', [main, 'serve', '--port', '0', '--json', ...args], {
    cwd: repoRoot,
    env: { ...process.env, BATON_LOG_LEVEL: 'silent', BATON_DB: join(dir, 'b.db') },
  });
  t.after(() => {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  return child;
}

test('baton serve --allowed-host adds exactly the names given; a name with a port is a usage error (exit 2)', async (t) => {
  const child = serve(t, ['--allowed-host', 'Baton.Example', '--allowed-host', '192.0.2.10']);
  const line = await child.waitFor('the ready line', (l) => (l.startsWith('{"url"') ? l : undefined));
  const { url } = JSON.parse(line) as { url: string };
  const port = portOf(url);
  for (const host of [`baton.example:${port}`, 'BATON.EXAMPLE', `192.0.2.10:${port}`, `localhost:${port}`])
    assert.equal((await withHosts(url, 'GET', '/metrics', [host])).status, 200, host);
  for (const host of [`evil.example:${port}`, `baton.example.evil:${port}`, `sub.baton.example:${port}`])
    assertRawProblem(await withHosts(url, 'GET', '/metrics', [host]), 421, 'host_not_allowed');
  child.kill('SIGTERM');
  assert.equal((await child.exited).code, 0, child.stderr());

  for (const bad of ['baton.example:443', 'http://baton.example', 'a/b']) {
    const refused = serve(t, ['--allowed-host', bad]);
    const exit = await refused.exited;
    assert.equal(exit.code, 2, `${bad}: ${refused.stderr()}`);
    assert.match(refused.stderr(), /--allowed-host takes a host name/);
  }
});

test('an absolute-form request target names the server by its own authority (RFC 9112 §3.2.2), not by Host', async (t) => {
  const api = await startApi(t);
  const port = portOf(api.url);
  const before = await api.snapshot();
  const auth = [`Authorization: Bearer ${api.admin}`];
  // A foreign authority in the target is refused whatever Host says; nothing is read or changed.
  for (const target of [
    'http://rebind.attacker.example/v1/tokens',
    `http://evil.example:${port}/readyz`,
    'https://evil.example/v1/counts',
  ]) {
    assertRawProblem(await withHosts(api.url, 'GET', target, ['127.0.0.1'], auth), 421, 'host_not_allowed');
  }
  assert.equal(await api.snapshot(), before);
  // This server's own authority in the target is answered, even beside a foreign Host.
  const own = await withHosts(api.url, 'GET', `http://localhost:${port}/v1/counts`, ['evil.example'], auth);
  assert.equal(own.status, 200, own.text);
});
