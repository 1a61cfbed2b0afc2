/**
 * The MCP gateway (issue 15) with the SDK's client, the real test upstream over Streamable HTTP,
 * Baton's real HTTP server on SQLite and the sandbox provider, whose per-key effect count is the
 * oracle. Requirement ids: AOC-REQ-002 (creation binding), AOC-REQ-009 (only pinned sources
 * settle), AOC-REQ-010 (entered at most once), AOC-CASE-006 (native key derived, not chosen).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isBatonError } from '../../src/core/errors.js';
import { generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { sha256HexTag } from '../../src/core/digest.js';
import { buildLease, keyRing, signLease } from '../../src/leases/index.js';
import { parsePolicy, serveHttp, startGateway } from '../../src/mcp/index.js';
import { inProcessGateway, makeWorld, payArgs, policyFor, connectSession, type World } from './world.js';
import { TOOLS } from './upstream-payments.js';

type Meta = {
  id: string;
  phase: string;
  effect: string;
  repeat: boolean;
  upstreamAnswer: boolean;
  unresolved: boolean;
};

function occurrenceOf(r: CallToolResult): Meta {
  const m = r._meta?.['baton/occurrence'] as Meta | undefined;
  assert.ok(m !== undefined, 'the result carries baton/occurrence in _meta');
  return m;
}

function errorCode(r: CallToolResult): string {
  assert.equal(r.isError, true, 'a tool error');
  return (r._meta?.['baton/error'] as { code: string }).code;
}

async function nativeKey(w: World, occurrenceId: string): Promise<string> {
  const { occurrence } = await w.store.service.getOccurrence(occurrenceId);
  return occurrence.provider.nativeKey ?? '';
}

async function direct(t: { after(fn: () => Promise<void>): void }, w: World): Promise<Client> {
  const c = new Client({ name: 'direct', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(w.upstreamUrl)));
  t.after(() => c.close());
  return c;
}

test('non-consequential tools, resources and prompts pass through unchanged; tools/list is annotated', async (t) => {
  const w = await makeWorld(t);
  const { client } = await inProcessGateway(t, w);
  const up = await direct(t, w);
  const [via, straight] = [await client.listTools(), await up.listTools()];
  const byName = (l: typeof via, n: string) => l.tools.find((x) => x.name === n);
  assert.deepEqual(byName(via, 'echo'), byName(straight, 'echo'));
  assert.deepEqual(byName(via, 'payment_status'), byName(straight, 'payment_status'));
  const pay = byName(via, 'pay');
  assert.ok(pay?._meta?.['baton/consequential'] !== undefined, 'pay is annotated as consequential');
  assert.equal(pay.annotations?.idempotentHint, true);
  assert.ok(
    !('idempotency_key' in (pay.inputSchema.properties ?? {})),
    'Baton supplies the native key (AOC-CASE-006)',
  );
  assert.deepEqual(
    await client.callTool({ name: 'echo', arguments: { text: 'hi' } }),
    await up.callTool({ name: 'echo', arguments: { text: 'hi' } }),
  );
  assert.deepEqual(await client.listResources(), await up.listResources());
  assert.deepEqual(
    await client.readResource({ uri: 'docs://terms' }),
    await up.readResource({ uri: 'docs://terms' }),
  );
  assert.deepEqual(await client.listPrompts(), await up.listPrompts());
  assert.deepEqual(await client.getPrompt({ name: 'greeting' }), await up.getPrompt({ name: 'greeting' }));
  assert.equal((await w.store.service.counts()).total, 0, 'nothing consequential happened');
});

test('AOC-REQ-002/-010: a consequential call succeeds once; its repeat returns the original without calling upstream', async (t) => {
  const w = await makeWorld(t);
  const { client } = await inProcessGateway(t, w);
  const first = (await client.callTool({ name: 'pay', arguments: payArgs('inv-1') })) as CallToolResult;
  assert.notEqual(first.isError, true, JSON.stringify(first.content));
  const o = occurrenceOf(first);
  assert.equal(o.phase, 'resolved');
  assert.equal(o.effect, 'occurred', 'settled by the pinned status source (AOC-REQ-009)');
  assert.equal((first.structuredContent as { status: string }).status, 'succeeded');
  const key = await nativeKey(w, o.id);
  const evidence = (await w.store.service.getOccurrence(o.id)).evidence.filter(
    (e) => e.type === 'observation_recorded',
  );
  assert.equal(evidence.length, 2, 'the upstream’s answer (unauthenticated) and the pinned status source’s');
  assert.equal(
    (first.structuredContent as { idempotency_key: string }).idempotency_key,
    key,
    'the native key went upstream',
  );
  const again = (await client.callTool({ name: 'pay', arguments: payArgs('inv-1') })) as CallToolResult;
  assert.deepEqual(again.structuredContent, first.structuredContent);
  assert.equal(occurrenceOf(again).id, o.id);
  assert.equal(occurrenceOf(again).repeat, true);
  assert.equal(w.control.calls['pay'], 1, 'the repeat never reached the upstream');
  assert.equal(w.provider.sandbox.effectCount(key), 1, 'one effect');
  assert.equal(w.provider.sandbox.effects().length, 1);
});

test('the agent retries a call after its client timed out: one effect, one upstream call', async (t) => {
  const w = await makeWorld(t);
  const { client } = await inProcessGateway(t, w);
  w.control.delayMs = 800;
  await assert.rejects(
    client.callTool({ name: 'pay', arguments: payArgs('inv-retry') }, undefined, { timeout: 100 }),
    /timed out/i,
  );
  const retry = (await client.callTool({ name: 'pay', arguments: payArgs('inv-retry') }, undefined, {
    timeout: 20_000,
  })) as CallToolResult;
  assert.notEqual(retry.isError, true, JSON.stringify(retry.content));
  const o = occurrenceOf(retry);
  assert.equal(o.effect, 'occurred');
  assert.equal(w.control.calls['pay'], 1);
  assert.equal(w.provider.sandbox.effectCount(await nativeKey(w, o.id)), 1);
});

test('a retry whose arguments come in another member order while the first is in flight waits for it (the same call, AOC-REQ-002): one upstream call, one effect', async (t) => {
  const w = await makeWorld(t);
  const { client } = await inProcessGateway(t, w);
  w.control.delayMs = 800;
  const first = { amount: 1250, currency: 'eur', payee: 'acme-supplies', invoice: 'inv-order' };
  const reordered = { invoice: 'inv-order', payee: 'acme-supplies', currency: 'eur', amount: 1250 };
  const [a, b] = await Promise.all([
    client.callTool({ name: 'pay', arguments: first }) as Promise<CallToolResult>,
    new Promise((r) => setTimeout(r, 150)).then(
      () => client.callTool({ name: 'pay', arguments: reordered }) as Promise<CallToolResult>,
    ),
  ]);
  assert.notEqual(a.isError, true, JSON.stringify(a._meta));
  assert.notEqual(b.isError, true, JSON.stringify(b._meta));
  assert.equal(occurrenceOf(a).repeat, false);
  assert.equal(occurrenceOf(b).repeat, true);
  assert.equal(occurrenceOf(b).id, occurrenceOf(a).id);
  assert.equal(w.control.calls['pay'], 1);
  assert.equal(w.provider.sandbox.effects().length, 1);
});

test('malformed _meta and arguments that do not fit the policy: a tool error, no upstream call, nothing created', async (t) => {
  const w = await makeWorld(t);
  const { client } = await inProcessGateway(t, w);
  const call = async (args: Record<string, unknown>, meta?: Record<string, unknown>): Promise<string> =>
    errorCode(
      (await client.callTool({
        name: 'pay',
        arguments: args,
        ...(meta === undefined ? {} : { _meta: meta }),
      })) as CallToolResult,
    );
  const { invoice: _i, ...noInvoice } = payArgs('x');
  assert.equal(await call(noInvoice), 'input_invalid', 'the creation key pointer is missing');
  assert.equal(
    await call({ ...payArgs('inv-a'), amount: 'lots' }),
    'input_invalid',
    'the amount is not an integer',
  );
  assert.equal(
    await call({ ...payArgs('inv-b'), idempotency_key: 'mine' }),
    'input_invalid',
    'AOC-CASE-006: the agent may not choose the native key',
  );
  assert.equal(await call(payArgs('inv-c'), { compensationLease: 'not a lease' }), 'ERR_LEASE_MALFORMED');
  assert.equal(await call(payArgs('inv-d'), { compensationInversePayload: { x: 1 } }), 'ERR_LEASE_MALFORMED');
  assert.equal(w.control.calls['pay'] ?? 0, 0, 'no upstream call');
  assert.equal((await w.store.service.counts()).total, 0, 'no occurrence');
});

// Draft §4 rule 3 (docs/leases.md §4, docs/mcp.md): the inverse payload is pre-staged before the
// forward call; a verified lease with none staged beside it is refused as the system of record would.
test('a signed lease with no staged inverse payload is refused ERR_INVERSE_PAYLOAD_MISMATCH; no upstream call', async (t) => {
  const w = await makeWorld(t);
  const signer = generateEd25519KeyPair();
  const { client } = await inProcessGateway(t, w, { leaseKeys: keyRing([signer.publicKey]) });
  const lease = signLease(
    buildLease({
      target: 'sor://payments/inv-noinverse',
      mode: 'COMPENSATING_ACTION',
      tReqMs: 1_000,
      tGrantedMs: 2_000,
      currentEpoch: 3,
      preImage: { paid: false },
      inversePayload: { refund: 'inv-noinverse' },
      traceAnchorRef: sha256HexTag('trace'),
      issuedAtMs: Date.now(),
      ttlMs: 60_000,
    }),
    { privateKey: signer.privateKey, kid: signer.kid },
  );
  const r = (await client.callTool({
    name: 'pay',
    arguments: payArgs('inv-noinverse'),
    _meta: { compensationLease: lease },
  })) as CallToolResult;
  assert.equal(errorCode(r), 'ERR_INVERSE_PAYLOAD_MISMATCH');
  assert.equal(w.control.calls['pay'] ?? 0, 0, 'no upstream call');
  assert.equal((await w.store.service.counts()).total, 0, 'no occurrence');
});

test('a refusal (authority) is a tool error naming its code, before anything is sent', async (t) => {
  const w = await makeWorld(t, { total: 1_000 });
  const { client } = await inProcessGateway(t, w);
  const r = (await client.callTool({ name: 'pay', arguments: payArgs('inv-big', 5_000) })) as CallToolResult;
  assert.equal(errorCode(r), 'authority_insufficient');
  assert.equal(w.control.calls['pay'] ?? 0, 0);
  assert.equal(w.provider.sandbox.effects().length, 0);
});

test('AOC-REQ-006: a stale session after a takeover is refused generation_retired; nothing is sent', async (t) => {
  const w = await makeWorld(t);
  const { gateway, client: stale } = await inProcessGateway(t, w);
  const successor = await connectSession(t, gateway);
  const r = (await stale.callTool({ name: 'pay', arguments: payArgs('inv-stale') })) as CallToolResult;
  assert.equal(errorCode(r), 'generation_retired');
  assert.equal(w.control.calls['pay'] ?? 0, 0);
  const ok = (await successor.callTool({ name: 'pay', arguments: payArgs('inv-stale') })) as CallToolResult;
  assert.equal(occurrenceOf(ok).effect, 'occurred', 'the current generation proceeds');
  assert.equal(w.provider.sandbox.effects().length, 1);
});

test('a policy tool missing upstream is an error at start', async (t) => {
  const w = await makeWorld(t);
  const policy = policyFor(w.provider.profile);
  const tools = policy['tools'] as Record<string, unknown>;
  tools['refund'] = tools['pay'];
  await assert.rejects(
    startGateway({
      baton: w.baton(),
      policy: parsePolicy(JSON.stringify(policy)),
      upstreams: [{ name: 'p', url: w.upstreamUrl }],
    }),
    (e: unknown) => isBatonError(e, 'mcp_upstream_invalid'),
  );
});

test('a read tool its upstream does not declare read-only (annotations.readOnlyHint) is an error at start: it is called after a lost answer', async (t) => {
  const w = await makeWorld(t);
  const status = TOOLS.find((tool) => tool.name === 'payment_status');
  assert.ok(status !== undefined);
  for (const annotations of [undefined, { readOnlyHint: false }, { destructiveHint: false }]) {
    w.control.statusTool = {
      ...status,
      ...(annotations === undefined ? { annotations: undefined } : { annotations }),
    };
    await assert.rejects(
      startGateway({
        baton: w.baton(),
        policy: parsePolicy(JSON.stringify(w.policy)),
        upstreams: [{ name: 'p', url: w.upstreamUrl }],
      }),
      (e: unknown) =>
        isBatonError(e, 'mcp_upstream_invalid') &&
        /read tool payment_status is not declared read-only/.test(e.message),
      JSON.stringify(annotations),
    );
  }
  assert.equal((await w.store.service.counts()).total, 0);
});

test('Streamable HTTP downstream: a consequential call and a pass-through call', async (t) => {
  const w = await makeWorld(t);
  const { gateway } = await inProcessGateway(t, w);
  const http = await serveHttp(gateway, 0, '127.0.0.1');
  t.after(() => http.close());
  const client = new Client({ name: 'http-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
  t.after(() => client.close());
  const r = (await client.callTool({ name: 'pay', arguments: payArgs('inv-http') })) as CallToolResult;
  assert.equal(occurrenceOf(r).effect, 'occurred');
  assert.equal(
    ((await client.callTool({ name: 'echo', arguments: { text: 'x' } })).content as { text: string }[])[0]
      ?.text,
    'x',
  );
  assert.equal(w.provider.sandbox.effects().length, 1);
});
