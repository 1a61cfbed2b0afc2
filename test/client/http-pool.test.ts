/**
 * The SDK's default wire (issue 16 §5): calls to one origin reuse a keep-alive connection from the
 * pool, still cut off at their deadline with `client_timeout`, and a connection the server drops
 * mid-answer is a lost answer (`unavailable`), never retried.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { test } from 'node:test';
import { HttpBatonClient } from '../../src/client/index.js';
import { isBatonError } from '../../src/core/errors.js';
import { listenLoopback } from '../support/loopback.js';

const listen = listenLoopback;

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

/**
 * A server that answers the first request on each connection and drops the connection on the next
 * one without a byte of answer: what a pooled socket looks like after the server behind it
 * restarted (the "stale keep-alive socket"). `partial`: it sends the status line first.
 */
function restartedServer(partial = false) {
  const seen: string[] = [];
  const perSocket = new Map<Socket, number>();
  const server = createServer((req, res) => {
    const n = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, n);
    seen.push(`${req.method ?? ''} ${req.url ?? ''} #${n}`);
    if (n === 1) return void res.writeHead(200, { 'content-type': 'application/json' }).end(counts);
    if (partial) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      return void setTimeout(() => req.socket.destroy(), 20);
    }
    req.socket.destroy();
  });
  return { server, seen };
}

test('a stale pooled socket: a call safe to retry is re-sent once on a fresh connection', async (t) => {
  const { server, seen } = restartedServer();
  const client = new HttpBatonClient({ baseUrl: await listen(t, server), token: 'btk.test' });
  assert.equal((await client.counts()).total, 0);
  assert.equal((await client.counts()).total, 0, 'the second call succeeds after the re-send');
  assert.deepEqual(seen, ['GET /v1/counts #1', 'GET /v1/counts #2', 'GET /v1/counts #1']);
});

test('a stale pooled socket under a call NOT safe to retry (takeover) is a lost answer, sent once', async (t) => {
  const { server, seen } = restartedServer();
  const client = new HttpBatonClient({ baseUrl: await listen(t, server), token: 'btk.test' });
  await client.counts();
  await assert.rejects(
    client.takeover('l'),
    (e: unknown) => isBatonError(e, 'unavailable') && e.details['safeToRetry'] === false,
  );
  assert.deepEqual(seen, ['GET /v1/counts #1', 'POST /v1/lineages/l/takeover #2']);
});

test('a pooled socket that dies after the answer began is never re-sent, even for a safe call', async (t) => {
  const { server, seen } = restartedServer(true);
  const client = new HttpBatonClient({ baseUrl: await listen(t, server), token: 'btk.test' });
  await client.counts();
  await assert.rejects(client.counts(), (e: unknown) => isBatonError(e, 'unavailable'));
  assert.deepEqual(seen, ['GET /v1/counts #1', 'GET /v1/counts #2']);
});
