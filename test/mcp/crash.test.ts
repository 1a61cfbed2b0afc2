/**
 * `baton mcp` as a real child process on stdio (as an agent's MCP client config starts it), killed
 * with SIGKILL after the upstream applied a payment and before anyone heard the answer. The
 * restarted gateway takes over the lineage (AOC-REQ-006), reports the predecessor's in-doubt call
 * (AOC-REQ-005), and answers the agent's repeat of it from Baton's record settled by the pinned
 * status source (AOC-REQ-009) — never by sending it again (AOC-REQ-010). The sandbox's per-key
 * effect count is the oracle. Both ways a gateway reaches Baton: `baton serve` over HTTP, and
 * Baton's service inside the gateway on the same SQLite file (`--db`).
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { childGateway, makeWorld, payArgs, UPSTREAM_SCRIPT, type BatonAt } from './world.js';

function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`deadline: ${what} within ${ms} ms`)), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

type Meta = { id: string; effect: string; repeat: boolean; upstreamAnswer: boolean; phase: string };
const meta = (r: CallToolResult): Meta => r._meta?.['baton/occurrence'] as Meta;

for (const at of ['http', 'store'] as const satisfies readonly BatonAt[]) {
  test(`AOC-REQ-005/-010 (Baton ${at === 'http' ? 'over HTTP' : 'in the gateway, --db'}): gateway SIGKILLed after the upstream applied the call; the restarted gateway answers the repeat, one effect`, (t) =>
    crashAndRestart(t, at));
}

async function crashAndRestart(t: TestContext, at: BatonAt): Promise<void> {
  const w = await makeWorld(t);
  const upstream = ['--upstream', `payments=${w.upstreamUrl}`];
  const first = await childGateway(t, w, upstream, at);
  w.control.hangAfterApply = 1;
  const applied = new Promise<void>((resolve) => (w.control.onHang = resolve));
  const lost = first.client
    .callTool({ name: 'pay', arguments: payArgs('inv-crash') }, undefined, { timeout: 30_000 })
    .then(
      () => 'answered',
      () => 'lost',
    );
  await withDeadline(applied, 20_000, 'the upstream applied the payment');
  assert.equal(w.provider.sandbox.effects().length, 1, 'the provider applied it');
  const pid = first.transport.pid;
  assert.ok(pid !== null);
  process.kill(pid, 'SIGKILL');
  assert.equal(await withDeadline(lost, 20_000, 'the killed gateway’s call to fail'), 'lost');

  const restarted = await childGateway(t, w, upstream, at);
  const [inDoubt] = (await w.store.service.listOpen('payments-agent')).unresolved;
  assert.ok(inDoubt !== undefined, 'the killed gateway left the call entered and unresolved');
  assert.match(
    restarted.client.getInstructions() ?? '',
    new RegExp(`in doubt \\(not repeated\\): ${inDoubt.id}`),
  );

  const repeat = (await restarted.client.callTool({
    name: 'pay',
    arguments: payArgs('inv-crash'),
  })) as CallToolResult;
  assert.notEqual(repeat.isError, true, JSON.stringify(repeat.content));
  const m = meta(repeat);
  assert.equal(m.id, inDoubt.id, 'the same occurrence (creation binding, AOC-REQ-002)');
  assert.equal(m.effect, 'occurred', 'settled from the pinned status source');
  assert.equal(m.repeat, true);
  assert.equal(m.upstreamAnswer, false, 'honest: the upstream’s own answer was lost');
  assert.equal(w.control.calls['pay'], 1, 'never sent again');
  assert.equal(w.provider.sandbox.effectCount(inDoubt.provider.nativeKey ?? ''), 1, 'one effect');
  assert.equal(w.provider.sandbox.effects().length, 1);
}

test('a stdio upstream started by the gateway: a consequential call and its repeat, one effect', async (t) => {
  const w = await makeWorld(t);
  const g = await childGateway(t, w, [
    '--upstream-stdio',
    `payments=${process.execPath} ${UPSTREAM_SCRIPT} ${w.provider.sandbox.url}`,
  ]);
  const r = (await g.client.callTool({ name: 'pay', arguments: payArgs('inv-stdio') })) as CallToolResult;
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  assert.equal(meta(r).effect, 'occurred');
  const again = (await g.client.callTool({ name: 'pay', arguments: payArgs('inv-stdio') })) as CallToolResult;
  assert.deepEqual(again.structuredContent, r.structuredContent);
  assert.equal(meta(again).repeat, true);
  assert.equal(w.provider.sandbox.effects().length, 1, 'one effect');
});

test('--db: the gateway runs Baton on the store itself; the call is recorded there, settled, one effect', async (t) => {
  const w = await makeWorld(t);
  const g = await childGateway(t, w, ['--upstream', `payments=${w.upstreamUrl}`], 'store');
  const r = (await g.client.callTool({ name: 'pay', arguments: payArgs('inv-db') })) as CallToolResult;
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  assert.equal(meta(r).effect, 'occurred', 'settled by the pinned status source, asked from the gateway');
  // What the gateway recorded is the store's own state: this process reads it from the same file.
  const detail = await w.store.service.getOccurrence(meta(r).id);
  assert.equal(detail.occurrence.effect, 'occurred');
  assert.equal(detail.occurrence.lineage, 'payments-agent');
  assert.equal(w.provider.sandbox.effectCount(detail.occurrence.provider.nativeKey ?? ''), 1, 'one effect');
});
