/**
 * The Streamable HTTP downstream's sessions (review item 5; MCP Streamable HTTP transport): an
 * unknown session id is 404 (the client initializes again), a session a newer session's takeover
 * retired (AOC-REQ-006) is closed and forgotten — its next request is 404, even for a
 * pass-through tool — and a body over the 4 MiB limit is 413 naming the limit, with the gateway
 * serving on. Real gateway, real HTTP on loopback, SDK clients.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { serveHttp, type SessionSource } from '../../src/mcp/index.js';
import { inProcessGateway, makeWorld } from './world.js';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function send(url: string, headers: Record<string, string>, body: string) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => void (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function agent(t: TestContext, url: string): Promise<Client> {
  const client = new Client({ name: 'http-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  t.after(() => client.close());
  return client;
}

async function served(t: TestContext) {
  const w = await makeWorld(t);
  const lines: string[] = [];
  const { gateway } = await inProcessGateway(t, w);
  const http = await serveHttp(gateway, 0, '127.0.0.1', (l) => lines.push(l));
  t.after(() => http.close());
  return { url: http.url, lines };
}

const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const ECHO = { name: 'echo', arguments: { text: 'x' } };
const echoed = async (c: Client): Promise<unknown> => ((await c.callTool(ECHO)) as CallToolResult).content;

test('an unknown session id is 404 (the client initializes again), not 400', async (t) => {
  const { url } = await served(t);
  const unknown = await send(url, { ...HEADERS, 'mcp-session-id': 'no-such-session' }, LIST);
  assert.equal(unknown.status, 404, unknown.text);
});

test("AOC-REQ-006: a session retired by a newer session's takeover is closed and forgotten (404), pass-through tools included; the new one serves", async (t) => {
  const { url, lines } = await served(t);
  const first = await agent(t, url);
  assert.deepEqual(await echoed(first), [{ type: 'text', text: 'x' }]);
  const firstId = (first.transport as StreamableHTTPClientTransport).sessionId ?? '';
  const second = await agent(t, url);
  await assert.rejects(first.callTool(ECHO), /404|session not found/i);
  const stale = await send(url, { ...HEADERS, 'mcp-session-id': firstId }, LIST);
  assert.equal(stale.status, 404, stale.text);
  assert.ok(
    lines.some((l) => l.includes(`session ${firstId} closed`)),
    lines.join('\n'),
  );
  assert.deepEqual(await echoed(second), [{ type: 'text', text: 'x' }]);
});

test('AOC-REQ-006: two initialize requests close together, the older takeover finishing last — it closes itself, never the live (newer) session', async (t) => {
  const w = await makeWorld(t);
  const { gateway } = await inProcessGateway(t, w);
  let firstTaken = (): void => undefined;
  const taken = new Promise<void>((r) => (firstTaken = r));
  let letFirstGo = (): void => undefined;
  const go = new Promise<void>((r) => (letFirstGo = r));
  const generations: number[] = [];
  let calls = 0;
  // The real gateway's takeovers, the first one's session held back until the second is serving.
  const source: SessionSource = {
    session: async () => {
      calls += 1;
      const first = calls === 1;
      const s = await gateway.session();
      generations.push(s.executor.generation);
      if (first) {
        firstTaken();
        await go;
      }
      return s;
    },
  };
  const lines: string[] = [];
  const http = await serveHttp(source, 0, '127.0.0.1', (l) => lines.push(l));
  t.after(() => http.close());
  const older = agent(t, http.url);
  await taken;
  const newer = await agent(t, http.url);
  letFirstGo();
  const olderClient = await older.then(
    (c) => c,
    () => undefined,
  );
  assert.ok((generations[0] ?? 0) < (generations[1] ?? 0), JSON.stringify(generations));
  assert.deepEqual(await echoed(newer), [{ type: 'text', text: 'x' }], lines.join('\n'));
  if (olderClient !== undefined) await assert.rejects(olderClient.callTool(ECHO), /404|session not found/i);
  assert.deepEqual(await echoed(newer), [{ type: 'text', text: 'x' }]);
});

test('a body over 4 MiB is 413 naming the limit (drained, not reset); the gateway serves on', async (t) => {
  const { url } = await served(t);
  const client = await agent(t, url);
  const huge = JSON.stringify({
    jsonrpc: '2.0',
    id: 2,
    method: 'x',
    params: { a: 'x'.repeat(5 * 1024 * 1024) },
  });
  const big = await send(url, HEADERS, huge);
  assert.equal(big.status, 413, big.text);
  assert.match(big.text, /4194304 bytes \(4 MiB\)/);
  assert.deepEqual(await echoed(client), [{ type: 'text', text: 'x' }]);
});
