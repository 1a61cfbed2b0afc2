/**
 * An upstream that stops, restarts or crashes after the gateway started (review item 1): the
 * gateway finds out BEFORE create-and-enter — a ping, reconnecting when the connection is gone —
 * so a call it cannot deliver is refused `upstream_unavailable` with nothing created, entered or
 * sent, and no authority consumed; once the upstream is back, the next call reconnects and is sent
 * once. Without the check, each call was entered and then recorded as a lost answer
 * (`upstream_answer_lost`, left for an operator) though nothing ever reached the upstream
 * (AOC-REQ-010 forbids sending an entered call later). Real upstreams (Streamable HTTP on a fixed
 * loopback port, and a stdio child SIGKILLed), real Baton HTTP, SQLite, the sandbox as the oracle.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { parsePolicy, startGateway } from '../../src/mcp/index.js';
import { newControl, serveUpstreamHttp } from './upstream-payments.js';
import { connectSession, inProcessGateway, makeWorld, payArgs, UPSTREAM_SCRIPT } from './world.js';

const code = (r: CallToolResult): unknown =>
  (r._meta?.['baton/error'] as { code?: string } | undefined)?.code;
const effect = (r: CallToolResult): unknown =>
  (r._meta?.['baton/occurrence'] as { effect?: string } | undefined)?.effect;

/** A world, an HTTP upstream on its own port, and a gateway (its upstream timeout) with a session. */
async function behindHttpUpstream(t: TestContext, upstreamTimeoutMs = 3_000) {
  const w = await makeWorld(t);
  const control = newControl();
  const upstream = await serveUpstreamHttp(w.provider.sandbox.url, control);
  const port = Number(new URL(upstream.url).port);
  const { client } = await inProcessGateway(t, w, {
    upstreams: [{ name: 'payments', url: upstream.url }],
    upstreamTimeoutMs,
  });
  return { w, control, upstream, port, client };
}

test('an HTTP upstream that stopped: refused upstream_unavailable, nothing created; restarted (new session): reconnected, sent once', async (t) => {
  const h = await behindHttpUpstream(t);
  const { w, control, port, client } = h;
  let up = h.upstream;
  const first = (await client.callTool({ name: 'pay', arguments: payArgs('inv-1') })) as CallToolResult;
  assert.equal(first.isError, false);
  assert.equal((await w.store.service.counts()).total, 1);

  await up.close();
  const down = (await client.callTool({ name: 'pay', arguments: payArgs('inv-2') })) as CallToolResult;
  assert.equal(code(down), 'upstream_unavailable', JSON.stringify(down._meta));
  assert.equal((await w.store.service.counts()).total, 1, 'nothing created for the refused call');
  assert.equal(control.calls['pay'], 1);

  // The same port, a new process: the gateway's old session id is answered 404 (Session not found).
  up = await serveUpstreamHttp(w.provider.sandbox.url, control, port);
  t.after(() => up.close());
  const back = (await client.callTool({ name: 'pay', arguments: payArgs('inv-2') })) as CallToolResult;
  assert.equal(back.isError, false, JSON.stringify(back._meta));
  assert.equal(effect(back), 'occurred');
  assert.equal(control.calls['pay'], 2);
  assert.equal(w.provider.sandbox.effects().length, 2, 'one effect per invoice');
  const echo = (await client.callTool({ name: 'echo', arguments: { text: 'x' } })) as CallToolResult;
  assert.deepEqual(echo.content, [{ type: 'text', text: 'x' }]);
});

test('an HTTP upstream restarted between calls: the stale session is re-initialized before entry, never an entered call left in doubt', async (t) => {
  const { w, control, upstream: a, port, client } = await behindHttpUpstream(t);
  assert.equal(
    ((await client.callTool({ name: 'pay', arguments: payArgs('r-1') })) as CallToolResult).isError,
    false,
  );
  await a.close();
  const b = await serveUpstreamHttp(w.provider.sandbox.url, control, port);
  t.after(() => b.close());
  for (const invoice of ['r-2', 'r-3']) {
    const r = (await client.callTool({ name: 'pay', arguments: payArgs(invoice) })) as CallToolResult;
    assert.equal(r.isError, false, `${invoice}: ${JSON.stringify(r._meta)}`);
    assert.equal(effect(r), 'occurred');
  }
  assert.equal(control.calls['pay'], 3);
  assert.equal(w.provider.sandbox.effects().length, 3);
});

test('a stdio upstream that crashed: the next call starts it again before entry and is sent once', async (t) => {
  const w = await makeWorld(t);
  const gateway = await startGateway({
    baton: w.baton(),
    policy: parsePolicy(JSON.stringify(w.policy)),
    upstreams: [
      {
        name: 'payments',
        command: process.execPath,
        args: [UPSTREAM_SCRIPT, w.provider.sandbox.url],
        env: { PATH: process.env['PATH'] ?? '' },
      },
    ],
    upstreamTimeoutMs: 3_000,
  });
  t.after(() => gateway.close());
  const client = await connectSession(t, gateway);
  const before = gateway.upstreams[0]?.client.transport as StdioClientTransport;
  const pid = before.pid ?? 0;
  assert.ok(pid > 0);
  const exited = new Promise<void>((resolve) => {
    const c = gateway.upstreams[0]?.client;
    const prior = c?.onclose;
    if (c !== undefined)
      c.onclose = () => {
        prior?.();
        resolve();
      };
  });
  process.kill(pid, 'SIGKILL');
  await exited;
  const r = (await client.callTool({ name: 'pay', arguments: payArgs('inv-dead') })) as CallToolResult;
  assert.equal(r.isError, false, JSON.stringify(r._meta));
  assert.equal(effect(r), 'occurred');
  assert.equal(w.provider.sandbox.effects().length, 1);
  const after = gateway.upstreams[0]?.client.transport as StdioClientTransport;
  assert.notEqual(after.pid, pid, 'a new upstream process');
});

test('pass-through after an HTTP upstream restarted: its 404 for the stale session (nothing processed) re-initializes the session and the request goes through', async (t) => {
  const { w, control, upstream: a, port, client } = await behindHttpUpstream(t, 5_000);
  const echo = { name: 'echo', arguments: { text: 'x' } };
  assert.deepEqual(((await client.callTool(echo)) as CallToolResult).content, [{ type: 'text', text: 'x' }]);
  await a.close();
  // A restart takes a moment: the gateway's HTTP client has seen the old sockets close.
  await new Promise((r) => setTimeout(r, 200));
  const b = await serveUpstreamHttp(w.provider.sandbox.url, control, port);
  t.after(() => b.close());
  assert.deepEqual(((await client.callTool(echo)) as CallToolResult).content, [{ type: 'text', text: 'x' }]);
  const read = await client.readResource({ uri: 'docs://terms' });
  assert.deepEqual(read.contents, [
    { uri: 'docs://terms', mimeType: 'text/plain', text: 'terms of docs://terms' },
  ]);
  assert.equal(control.calls['echo'], 2);
});
