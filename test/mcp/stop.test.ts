/**
 * Stopping the gateway while a consequential call is running (review item 4): the stop refuses
 * new consequential calls (`gateway_stopping`, nothing created) and waits for the running one to
 * be answered and recorded before closing the upstreams — it is not cut off after entry and left
 * as a lost answer for an operator (AOC-REQ-005, -010). In-process, and `baton mcp` on stdio whose
 * agent closes stdin mid-call. Real upstream, Baton HTTP, SQLite; the sandbox is the oracle.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { childGateway, inProcessGateway, makeWorld, payArgs } from './world.js';

type Meta = { id: string; effect: string; unresolved: boolean };
const occurrence = (r: CallToolResult): Meta => r._meta?.['baton/occurrence'] as Meta;
const code = (r: CallToolResult): unknown =>
  (r._meta?.['baton/error'] as { code?: string } | undefined)?.code;

test('gateway.close() with a call in flight: the call is answered and recorded, a new one refused gateway_stopping', async (t) => {
  const w = await makeWorld(t);
  const lines: string[] = [];
  const { gateway, client } = await inProcessGateway(t, w, { log: (l) => lines.push(l) });
  w.control.delayMs = 1_000;
  const running = client.callTool({ name: 'pay', arguments: payArgs('inv-stop') }) as Promise<CallToolResult>;
  await new Promise((r) => setTimeout(r, 300));
  const closed = gateway.close();
  const late = (await client.callTool({ name: 'pay', arguments: payArgs('inv-late') })) as CallToolResult;
  assert.equal(code(late), 'gateway_stopping');
  const r = await running;
  assert.notEqual(r.isError, true, JSON.stringify(r._meta));
  assert.equal(occurrence(r).effect, 'occurred');
  await closed;
  assert.equal(w.provider.sandbox.effects().length, 1);
  assert.equal(w.control.calls['pay'], 1, 'the refused call never reached the upstream');
  const counts = await w.store.service.counts();
  assert.equal(counts.total, 1, 'nothing created for the refused call');
  assert.ok(!lines.some((l) => /still running/.test(l)), lines.join('\n'));
});

test('baton mcp on stdio: the agent closes stdin mid-call; the gateway finishes and records the call before exiting', async (t) => {
  const w = await makeWorld(t);
  const { client, transport } = await childGateway(t, w);
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  w.control.delayMs = 1_000;
  const call = client.callTool({ name: 'pay', arguments: payArgs('inv-stdin') }).catch(() => 'cut');
  await new Promise((r) => setTimeout(r, 400));
  const exited = new Promise<void>((resolve) => (transport.onclose = () => resolve()));
  await client.close();
  await call;
  await exited;
  await new Promise((r) => setTimeout(r, 1_500));
  assert.equal(w.provider.sandbox.effects().length, 1);
  const list = await fetch(`${w.batonUrl}/v1/occurrences`, {
    headers: { authorization: `Bearer ${w.token}` },
  });
  const body = (await list.json()) as { occurrences?: { unresolved: boolean; effect: string }[] };
  const items = body.occurrences ?? [];
  assert.equal(items.length, 1, JSON.stringify(body));
  assert.equal(
    items[0]?.unresolved,
    false,
    `recorded and settled before exit: ${JSON.stringify(items[0])}\n${err}`,
  );
  assert.equal(items[0]?.effect, 'occurred');
});
