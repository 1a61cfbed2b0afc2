/**
 * src/providers/http-client.ts (issue 16 §5): status queries (`pooled`) reuse a keep-alive socket
 * per provider origin; a provider entry always takes a fresh socket of its own (AOC-REQ-010).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { test } from 'node:test';
import { exchange } from '../../src/providers/http-client.js';
import { listenLoopback } from '../support/loopback.js';

test('status queries share one pooled socket per origin; entries never reuse one', async (t) => {
  const sockets: Socket[] = [];
  const server = createServer((req, res) => {
    if (!sockets.includes(req.socket)) sockets.push(req.socket);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  const url = new URL(`${await listenLoopback(t, server)}/status`);
  for (let i = 0; i < 4; i++) {
    const r = await exchange({ method: 'GET', url, timeoutMs: 2_000, pooled: true });
    assert.ok(r.ok && r.status === 200);
  }
  assert.equal(sockets.length, 1, 'four status queries, one connection');
  for (let i = 0; i < 2; i++) {
    const r = await exchange({ method: 'POST', url, body: '{}', timeoutMs: 2_000 });
    assert.ok(r.ok && r.status === 200);
  }
  assert.equal(sockets.length, 3, 'each entry on a fresh connection');
});

test('a request node:http refuses to build resolves as a transport failure with nothing sent', async (t) => {
  const received: string[] = [];
  const server = createServer((req, res) => {
    received.push(`${req.method ?? ''} ${req.url ?? ''}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/entry`);
  // A credential with a trailing newline in the authorization header: ERR_INVALID_CHAR, thrown by
  // node:http while building the request. exchange must resolve, never reject.
  const headers = { authorization: 'Bearer sk_test_x\n' };
  for (const pooled of [false, true]) {
    const r = await exchange({ method: 'POST', url, headers, body: '{}', timeoutMs: 2_000, pooled });
    assert.deepEqual(r, { ok: false, error: 'transport', name: 'ERR_INVALID_CHAR', sent: false });
  }
  const ok = await exchange({ method: 'POST', url, body: '{}', timeoutMs: 2_000 });
  assert.ok(ok.ok && ok.status === 200);
  assert.deepEqual(received, ['POST /entry'], 'only the well-formed request reached the server');
});
