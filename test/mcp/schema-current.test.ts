/**
 * A consequential call's arguments are checked against the input schema of the LATEST `tools/list`
 * the gateway saw from the upstream (docs/mcp.md "A consequential call", step 1) — the schema the
 * agent is shown — never one compiled at start and kept: an upstream that tightened `pay` after
 * start would otherwise refuse a call Baton already created, entered (authority consumed) and sent.
 * An upstream's `notifications/tools/list_changed` makes the gateway list again before the next
 * consequential call. A changed schema the gateway cannot compile, or a policy tool the upstream no
 * longer offers, refuses the call with a typed error; nothing is created, entered or sent.
 * Real world: the test upstream over Streamable HTTP, Baton's HTTP server on SQLite, the sandbox.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../../src/core/json.js';
import { AUTHORITY } from '../client/support.js';
import { newControl, PAY_TOOL, serveUpstreamHttp, toolsChanged } from './upstream-payments.js';
import { inProcessGateway, makeWorld, payArgs, type World } from './world.js';

type ErrorMeta = { code: string; message: string };
const error = (r: CallToolResult): ErrorMeta => {
  assert.equal(r.isError, true, `a tool error: ${JSON.stringify(r.content)}`);
  return r._meta?.['baton/error'] as ErrorMeta;
};

/** `pay` as a stricter upstream offers it after the gateway started: amount ≤ 1000, nothing extra. */
const STRICT_PAY: Tool = {
  ...PAY_TOOL,
  inputSchema: {
    ...PAY_TOOL.inputSchema,
    properties: { ...PAY_TOOL.inputSchema.properties, amount: { type: 'integer', maximum: 1000 } },
    additionalProperties: false,
  },
};

async function nothingHappened(w: World, why: string): Promise<void> {
  assert.equal((await w.store.service.counts()).total, 0, `${why}: no occurrence`);
  const authority = await w.store.service.getAuthority(AUTHORITY);
  assert.equal(authority.consumed, 0, `${why}: no authority consumed`);
  assert.equal(authority.reserved, 0, `${why}: no authority reserved`);
  assert.equal(w.control.calls['pay'] ?? 0, 0, `${why}: nothing sent upstream`);
  assert.equal(w.provider.sandbox.effects().length, 0, `${why}: no effect at the provider`);
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(ok(), what);
}

test('the upstream tightened pay after start and the agent listed it: a call breaking the new schema is input_invalid, nothing created, entered or sent; a call fitting it goes through', async (t) => {
  const w = await makeWorld(t);
  const { client } = await inProcessGateway(t, w);
  w.control.payTool = STRICT_PAY;
  const listed = await client.listTools();
  const pay = listed.tools.find((tool) => tool.name === 'pay');
  assert.equal(pay?.inputSchema.additionalProperties, false, 'the agent is shown the current schema');
  const call = async (args: JsonObject): Promise<CallToolResult> =>
    (await client.callTool({ name: 'pay', arguments: args })) as CallToolResult;

  const tooMuch = error(await call(payArgs('inv-strict', 5_000)));
  assert.equal(tooMuch.code, 'input_invalid');
  assert.match(tooMuch.message, /^\$\.arguments\/amount: must be <= 1000/);
  await nothingHappened(w, 'amount over the new maximum');
  const extra = error(await call({ ...payArgs('inv-strict', 500), memo: 'x' }));
  assert.equal(extra.code, 'input_invalid');
  assert.match(extra.message, /^\$\.arguments\/memo: must NOT have additional properties/);
  await nothingHappened(w, 'a member the new schema forbids');

  const ok = await call(payArgs('inv-strict', 500));
  assert.notEqual(ok.isError, true, JSON.stringify(ok.content));
  assert.equal(w.control.calls['pay'], 1);
  assert.equal((await w.store.service.getAuthority(AUTHORITY)).consumed, 500);
});

test('notifications/tools/list_changed: the gateway lists the upstream again before the next consequential call and checks it against the new schema', async (t) => {
  const w = await makeWorld(t);
  const { client } = await inProcessGateway(t, w);
  const before = w.control.lists;
  w.control.payTool = STRICT_PAY;
  await toolsChanged(w.control);
  await until('the gateway lists the upstream again', () => w.control.lists > before);
  const r = error(
    (await client.callTool({ name: 'pay', arguments: payArgs('inv-notified', 5_000) })) as CallToolResult,
  );
  assert.equal(r.code, 'input_invalid');
  assert.match(r.message, /^\$\.arguments\/amount: must be <= 1000/);
  await nothingHappened(w, 'refused by the re-listed schema');
});

test('a changed schema the gateway cannot compile, or pay no longer offered, refuses the call with a typed error; nothing created or sent', async (t) => {
  const w = await makeWorld(t);
  const { client } = await inProcessGateway(t, w);
  w.control.payTool = { ...PAY_TOOL, inputSchema: { ...PAY_TOOL.inputSchema, 'x-payee-check': true } };
  await client.listTools();
  const broken = error(
    (await client.callTool({ name: 'pay', arguments: payArgs('inv-broken') })) as CallToolResult,
  );
  assert.equal(broken.code, 'mcp_upstream_invalid');
  assert.match(broken.message, /input schema of tool pay cannot be checked/);
  await nothingHappened(w, 'uncompilable schema');

  w.control.payTool = { ...PAY_TOOL, name: 'pay_v2' };
  await client.listTools();
  const gone = error(
    (await client.callTool({ name: 'pay', arguments: payArgs('inv-gone') })) as CallToolResult,
  );
  assert.equal(gone.code, 'mcp_upstream_invalid');
  assert.match(gone.message, /no longer offers tool pay/);
  await nothingHappened(w, 'tool gone');

  // Back to a schema it can check: the same tool works again.
  delete w.control.payTool;
  await client.listTools();
  const ok = (await client.callTool({ name: 'pay', arguments: payArgs('inv-broken') })) as CallToolResult;
  assert.notEqual(ok.isError, true, JSON.stringify(ok.content));
  assert.equal(w.control.calls['pay'], 1);
});

test('an HTTP upstream restarted with a stricter pay: the first call after the restart is checked against the NEW schema (input_invalid), nothing created, entered or sent', async (t) => {
  const w = await makeWorld(t);
  const control = newControl();
  const a = await serveUpstreamHttp(w.provider.sandbox.url, control);
  const port = Number(new URL(a.url).port);
  const { client } = await inProcessGateway(t, w, { upstreams: [{ name: 'payments', url: a.url }] });
  // The same port, a new process offering the stricter pay; the gateway has not listed it since.
  await a.close();
  control.payTool = STRICT_PAY;
  const lists = control.lists;
  const b = await serveUpstreamHttp(w.provider.sandbox.url, control, port);
  t.after(() => b.close());
  const call = async (args: JsonObject): Promise<CallToolResult> =>
    (await client.callTool({ name: 'pay', arguments: args })) as CallToolResult;

  const first = error(await call(payArgs('inv-restarted', 5_000)));
  assert.equal(first.code, 'input_invalid', "the restarted upstream's schema, not the old one");
  assert.match(first.message, /^\$\.arguments\/amount: must be <= 1000/);
  assert.ok(control.lists > lists, 'the new connection was listed before the call was checked');
  assert.equal((await w.store.service.counts()).total, 0, 'no occurrence');
  const authority = await w.store.service.getAuthority(AUTHORITY);
  assert.equal(authority.consumed, 0, 'no authority consumed');
  assert.equal(authority.reserved, 0, 'no authority reserved');
  assert.equal(control.calls['pay'] ?? 0, 0, 'nothing sent upstream');
  assert.equal(w.provider.sandbox.effects().length, 0, 'no effect at the provider');

  // A call that fits the new schema goes through once on the new connection.
  const ok = await call(payArgs('inv-restarted', 500));
  assert.notEqual(ok.isError, true, JSON.stringify(ok.content));
  assert.equal(control.calls['pay'], 1);
  assert.equal((await w.store.service.getAuthority(AUTHORITY)).consumed, 500);
});
