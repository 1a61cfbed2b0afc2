/**
 * A failed liveness ping for one consequential call never cuts another call already in flight on
 * the same upstream connection (second review, HIGH): call A is entered and sent (the upstream is
 * slow to answer), call B's ping fails once at a loopback proxy in front of a real Streamable HTTP
 * upstream. Before the fix, B's failed ping closed the connection A shared, so A — applied by the
 * provider — came back "connection closed" and was recorded `upstream_answer_lost` for an
 * operator. Now A is answered and resolved, B alone is refused `upstream_unavailable` with nothing
 * created (AOC-REQ-005/010), and the sandbox holds exactly one effect per pay call sent.
 */
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { newControl, serveUpstreamHttp } from './upstream-payments.js';
import { inProcessGateway, makeWorld, payArgs } from './world.js';

const code = (r: CallToolResult): unknown =>
  (r._meta?.['baton/error'] as { code?: string } | undefined)?.code;
const occurrence = (r: CallToolResult): { phase?: string; outcome?: string; effect?: string } =>
  (r._meta?.['baton/occurrence'] as { phase?: string; outcome?: string; effect?: string } | undefined) ?? {};

/** How the proxy fails the next ping: an HTTP 503 answer, or a reset socket (no answer at all). */
type PingFault = 'answer-503' | 'reset';

/** A loopback proxy to `target` that fails the next `ping` request once, as `fault()` says. */
async function pingProxy(t: TestContext, target: URL, fault: () => PingFault | undefined): Promise<string> {
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer): void => {
    const out = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    out.end(body);
  };
  const proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const f = body.includes('"method":"ping"') ? fault() : undefined;
      if (f === 'answer-503') res.writeHead(503, { 'content-type': 'text/plain' }).end('busy');
      else if (f === 'reset') res.destroy();
      else forward(req, res, body);
    });
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  t.after(() => {
    proxy.closeAllConnections();
    proxy.close();
  });
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(ok(), what);
}

async function raceOnce(t: TestContext, fault: PingFault): Promise<void> {
  const w = await makeWorld(t);
  const control = newControl();
  const up = await serveUpstreamHttp(w.provider.sandbox.url, control);
  t.after(() => up.close());
  let failNext = false;
  const url = await pingProxy(t, new URL(up.url), () => {
    if (!failNext) return undefined;
    failNext = false;
    return fault;
  });
  const { client } = await inProcessGateway(t, w, { upstreams: [{ name: 'payments', url }] });

  control.delayMs = 1_500;
  const a = client.callTool({ name: 'pay', arguments: payArgs('inv-A') }) as Promise<CallToolResult>;
  // A is entered and sent: the upstream is working on it.
  await until('call A reached the upstream', () => (control.calls['pay'] ?? 0) === 1);
  failNext = true;
  control.delayMs = 0;
  const b = (await client.callTool({ name: 'pay', arguments: payArgs('inv-B') })) as CallToolResult;
  const ra = await a;

  assert.equal(ra.isError, false, JSON.stringify(ra._meta));
  assert.deepEqual(
    [occurrence(ra).phase, occurrence(ra).outcome, occurrence(ra).effect],
    ['resolved', 'success', 'occurred'],
    'A is answered and resolved, not left as upstream_answer_lost',
  );
  assert.equal(code(b), 'upstream_unavailable', JSON.stringify(b._meta));
  assert.equal((await w.store.service.counts()).total, 1, 'nothing created for the refused call B');
  assert.equal(control.calls['pay'], 1, 'B was never sent');
  assert.equal(w.provider.sandbox.effects().length, control.calls['pay'], 'one effect per pay call sent');

  // The connection was kept and works: B repeated goes through once.
  const again = (await client.callTool({ name: 'pay', arguments: payArgs('inv-B') })) as CallToolResult;
  assert.equal(again.isError, false, JSON.stringify(again._meta));
  assert.equal(occurrence(again).effect, 'occurred');
  assert.equal(control.calls['pay'], 2);
  assert.equal(w.provider.sandbox.effects().length, 2);
}

test("AOC-REQ-005: call B's ping answered 503 once while call A is in flight — A is answered and resolved; B refused upstream_unavailable, nothing created; the connection is kept", async (t) => {
  await raceOnce(t, 'answer-503');
});

test("AOC-REQ-010: call B's ping gets no answer (socket reset) while call A is in flight — the connection A uses is not closed; B alone is refused, nothing created", async (t) => {
  await raceOnce(t, 'reset');
});

test('pass-through: a JSON-RPC error answer from the upstream leaves the connection as it is — no ping, no reconnect before the next request', async (t) => {
  const w = await makeWorld(t);
  const control = newControl();
  const up = await serveUpstreamHttp(w.provider.sandbox.url, control);
  t.after(() => up.close());
  let pings = 0;
  const url = await pingProxy(t, new URL(up.url), () => {
    pings += 1;
    return undefined;
  });
  const { client } = await inProcessGateway(t, w, { upstreams: [{ name: 'payments', url }] });
  control.readError = true;
  await assert.rejects(client.readResource({ uri: 'docs://terms' }), /no such resource/);
  control.readError = false;
  const read = await client.readResource({ uri: 'docs://terms' });
  assert.deepEqual(
    read.contents.map((c) => c.uri),
    ['docs://terms'],
  );
  assert.equal(pings, 0, 'an answer, even an error, says the connection works');
});
