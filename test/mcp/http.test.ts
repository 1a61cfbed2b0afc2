/**
 * The Streamable HTTP downstream refuses before any takeover (AOC-REQ-006; docs/mcp.md "Sessions and
 * generations"): an `initialize` sent as a CORS simple request (text/plain), without the Accept the
 * transport needs, from a foreign Origin, to a foreign Host (DNS rebinding) or with another method is
 * answered with a JSON error and changes no state — the live agent's generation stays current.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { serveHttp } from '../../src/mcp/index.js';
import { inProcessGateway, LINEAGE, makeWorld, payArgs } from './world.js';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'web', version: '1' } },
});
const BOTH = 'application/json, text/event-stream';

interface Answer {
  readonly status: number;
  readonly type: string | undefined;
  readonly body: { error?: { message?: string } };
}

function post(url: string, method: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => void (text += c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: res.headers['content-type'],
          body: (/json/.test(res.headers['content-type'] ?? '') ? JSON.parse(text) : {}) as Answer['body'],
        }),
      );
    });
    req.on('error', reject);
    req.end(method === 'GET' || method === 'DELETE' ? undefined : INITIALIZE);
  });
}

test('AOC-REQ-006: a refused initialize (media type, Accept, Origin, Host, method) leaves the live generation current', async (t) => {
  const w = await makeWorld(t);
  const { gateway } = await inProcessGateway(t, w);
  const http = await serveHttp(gateway, 0, '127.0.0.1');
  t.after(() => http.close());
  const agent = new Client({ name: 'http-agent', version: '1.0.0' });
  await agent.connect(new StreamableHTTPClientTransport(new URL(http.url)));
  t.after(() => agent.close());
  const live = (await w.store.service.getLineage(LINEAGE)).generation;
  const port = new URL(http.url).port;
  const refusals: [string, string, Record<string, string>, number][] = [
    ['text/plain (a CORS simple request)', 'POST', { 'content-type': 'text/plain', accept: BOTH }, 415],
    ['no Accept', 'POST', { 'content-type': 'application/json' }, 406],
    [
      'a foreign Origin',
      'POST',
      { 'content-type': 'application/json', accept: BOTH, origin: 'https://evil.example' },
      403,
    ],
    [
      'a rebound Host',
      'POST',
      { 'content-type': 'application/json', accept: BOTH, host: `evil.example:${port}` },
      403,
    ],
    [
      'the opaque Origin null',
      'POST',
      { 'content-type': 'application/json', accept: BOTH, origin: 'null' },
      403,
    ],
    ['PUT', 'PUT', { 'content-type': 'application/json', accept: BOTH }, 405],
  ];
  for (const [what, method, headers, status] of refusals) {
    const a = await post(http.url, method, headers);
    assert.equal(a.status, status, what);
    assert.match(a.type ?? '', /^application\/json/, `${what}: a JSON error`);
    assert.equal(typeof a.body.error?.message, 'string', what);
    const now = await w.store.service.getLineage(LINEAGE);
    assert.equal(now.generation, live, `${what}: no takeover`);
  }
  const r = (await agent.callTool({ name: 'pay', arguments: payArgs('inv-http-guard') })) as CallToolResult;
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  assert.equal(w.provider.sandbox.effects().length, 1);
});

test('an initialize from a loopback Origin with the right headers still opens a session', async (t) => {
  const w = await makeWorld(t);
  const { gateway } = await inProcessGateway(t, w);
  const http = await serveHttp(gateway, 0, '127.0.0.1');
  t.after(() => http.close());
  const before = (await w.store.service.getLineage(LINEAGE)).generation;
  const origin = 'http://localhost:6274';
  const a = await post(http.url, 'POST', {
    'content-type': 'application/json; charset=utf-8',
    accept: BOTH,
    origin,
  });
  assert.equal(a.status, 200);
  assert.equal((await w.store.service.getLineage(LINEAGE)).generation, before + 1, 'a takeover');
});

test('allowedHosts and allowedOrigins (baton mcp --allowed-host / --allowed-origin) admit exactly those', async (t) => {
  const w = await makeWorld(t);
  const { gateway } = await inProcessGateway(t, w);
  const http = await serveHttp(gateway, 0, '127.0.0.1', undefined, {
    allowedHosts: ['agent.example'],
    allowedOrigins: ['https://ui.example'],
  });
  t.after(() => http.close());
  const port = new URL(http.url).port;
  const json = { 'content-type': 'application/json', accept: BOTH };
  const generation = async () => (await w.store.service.getLineage(LINEAGE)).generation;
  const start = await generation();
  assert.equal((await post(http.url, 'POST', { ...json, host: `agent.example:${port}` })).status, 200);
  assert.equal((await post(http.url, 'POST', { ...json, origin: 'https://ui.example' })).status, 200);
  assert.equal(await generation(), start + 2, 'two sessions, two takeovers');
  // Not a prefix, not another scheme, not another port's origin on a foreign host.
  assert.equal((await post(http.url, 'POST', { ...json, host: `agent.example.evil:${port}` })).status, 403);
  assert.equal((await post(http.url, 'POST', { ...json, origin: 'http://ui.example' })).status, 403);
  assert.equal(await generation(), start + 2, 'the refusals took nothing over');
});

test('a page on another loopback port cannot reach a session: its CORS preflight gets no allowance, its simple GET takes nothing over', async (t) => {
  const w = await makeWorld(t);
  const { gateway } = await inProcessGateway(t, w);
  const http = await serveHttp(gateway, 0, '127.0.0.1');
  t.after(() => http.close());
  const before = (await w.store.service.getLineage(LINEAGE)).generation;
  const origin = 'http://localhost:3000';
  // A browser sends a JSON POST from another origin only after a preflight the server allows.
  const preflight = await answer(http.url, 'OPTIONS', {
    origin,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'content-type',
  });
  assert.equal(preflight.status, 405);
  const allowance = Object.keys(preflight.headers).filter((h) => h.startsWith('access-control-'));
  assert.deepEqual(allowance, [], 'no CORS header: the browser never sends the POST');
  // What a page can send without a preflight: a GET with no session id.
  const get = await answer(http.url, 'GET', { origin, accept: 'text/event-stream' });
  assert.ok(get.status >= 400 && get.status < 500, `a GET without a session is refused (${get.status})`);
  assert.equal((await w.store.service.getLineage(LINEAGE)).generation, before, 'no takeover');
});

function answer(url: string, method: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}
