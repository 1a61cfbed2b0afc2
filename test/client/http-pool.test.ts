/**
 * The SDK's default wire (issue 16 §5): calls to one origin reuse a keep-alive connection from the
 * pool, still cut off at their deadline with `client_timeout`, and a connection the server drops
 * mid-answer is a lost answer (`unavailable`), never retried.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { test, type TestContext } from 'node:test';
import { HttpBatonClient } from '../../src/client/index.js';
import { isBatonError } from '../../src/core/errors.js';

async function listen(t: TestContext, server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  t.after(() => server.closeAllConnections());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const counts = JSON.stringify({ total: 0, byPhase: {}, byOutcome: {}, unresolved: 0, conflicts: 0 });

test('five calls in a row travel on one pooled keep-alive connection', async (t) => {
  const sockets = new Set<Socket>();
  let requests = 0;
  const server = createServer((req, res) => {
    sockets.add(req.socket);
    requests += 1;
    res.writeHead(200, { 'content-type': 'application/json' }).end(counts);
  });
  const baseUrl = await listen(t, server);
  const client = new HttpBatonClient({ baseUrl, token: 'btk.test' });
  for (let i = 0; i < 5; i++) assert.equal((await client.counts()).total, 0);
  assert.deepEqual([requests, sockets.size], [5, 1]);
});

test('on the pool, a stalled answer is client_timeout and a dropped one unavailable, each sent once', async (t) => {
  let requests = 0;
  const server = createServer((req, res) => {
    requests += 1;
    if (req.url?.endsWith('/drop') === true) return req.socket.destroy();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"total":'); // and never the rest
  });
  const baseUrl = await listen(t, server);
  const client = new HttpBatonClient({ baseUrl, token: 'btk.test', timeoutMs: 200 });
  await assert.rejects(client.counts(), (e: unknown) => isBatonError(e, 'client_timeout'));
  await assert.rejects(client.getOccurrence('drop'), (e: unknown) => isBatonError(e, 'unavailable'));
  assert.equal(requests, 2, 'nothing was retried');
});
