/**
 * The agent's arguments are checked before anything is created, entered or sent (docs/mcp.md "A
 * consequential call", step 1; src/mcp/arguments.ts): against the upstream tool's own input schema
 * (less the native key Baton fills), and with a policy `request` map, for members outside the map —
 * which would reach the provider without being part of the request Baton binds (AOC-REQ-002).
 * A refused call creates nothing, enters nothing, sends nothing and consumes no authority; the
 * corrected call for the same invoice then succeeds (its creation key was not burnt). A schema the
 * gateway cannot compile is refused at start. Real world: SDK client, the test upstream over
 * Streamable HTTP, Baton's HTTP server on SQLite, the sandbox provider (the effect oracle).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { isBatonError } from '../../src/core/errors.js';
import type { JsonObject } from '../../src/core/json.js';
import { compileArguments } from '../../src/mcp/arguments.js';
import { parsePolicy } from '../../src/mcp/index.js';
import { AUTHORITY } from '../client/support.js';
import { PAY_TOOL } from './upstream-payments.js';
import { childGateway, inProcessGateway, makeWorld, payArgs, policyFor, type World } from './world.js';
import { writeFileSync } from 'node:fs';

type ErrorMeta = { code: string; message: string };
const error = (r: CallToolResult): ErrorMeta => {
  assert.equal(r.isError, true, `a tool error: ${JSON.stringify(r.content)}`);
  return r._meta?.['baton/error'] as ErrorMeta;
};

const MAP = { amount: '/amount', currency: '/currency', payee: '/payee', invoice: '/invoice' };

/** Nothing created, entered or sent, and no authority consumed or reserved. */
async function nothingHappened(w: World, why: string): Promise<void> {
  assert.equal((await w.store.service.counts()).total, 0, `${why}: no occurrence`);
  const authority = await w.store.service.getAuthority(AUTHORITY);
  assert.equal(authority.consumed, 0, `${why}: no authority consumed`);
  assert.equal(authority.reserved, 0, `${why}: no authority reserved`);
  assert.equal(w.control.calls['pay'] ?? 0, 0, `${why}: nothing sent upstream`);
  assert.equal(w.provider.sandbox.effects().length, 0, `${why}: no effect at the provider`);
}

async function succeeds(w: World, r: CallToolResult, amount: number): Promise<void> {
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  const o = r._meta?.['baton/occurrence'] as { id: string; effect: string; unresolved: boolean };
  assert.equal(o.effect, 'occurred', 'settled by the pinned status source');
  assert.equal(o.unresolved, false);
  assert.equal((await w.store.service.getAuthority(AUTHORITY)).consumed, amount);
  assert.equal(w.control.calls['pay'], 1);
  assert.equal(w.provider.sandbox.effects().length, 1, 'one effect');
}

test("arguments that break the upstream tool's input schema are refused input_invalid naming the path; nothing is created, entered or sent; the corrected call succeeds", async (t) => {
  const w = await makeWorld(t);
  const { client } = await inProcessGateway(t, w);
  const call = async (args: JsonObject): Promise<CallToolResult> =>
    (await client.callTool({ name: 'pay', arguments: args })) as CallToolResult;

  const wrongType = error(await call({ ...payArgs('inv-schema'), payee: 42 }));
  assert.equal(wrongType.code, 'input_invalid');
  assert.match(wrongType.message, /^\$\.arguments\/payee: must be string/);
  await nothingHappened(w, 'payee: 42');

  const { currency: _c, ...noCurrency } = payArgs('inv-schema');
  const missing = error(await call(noCurrency));
  assert.equal(missing.code, 'input_invalid');
  assert.match(missing.message, /^\$\.arguments\/currency: must have required property 'currency'/);
  await nothingHappened(w, 'no currency');

  const fractional = error(await call({ ...payArgs('inv-schema'), amount: 12.5 }));
  assert.equal(fractional.code, 'input_invalid');
  assert.match(fractional.message, /^\$\.arguments\/amount: must be integer/);
  await nothingHappened(w, 'amount: 12.5');

  // The native key stays Baton's (AOC-CASE-006), checked before the schema (which allows a string).
  const chosen = error(await call({ ...payArgs('inv-schema'), idempotency_key: 'mine' }));
  assert.match(chosen.message, /^\$\.arguments\/idempotency_key: is the native idempotency key/);
  await nothingHappened(w, 'idempotency_key supplied');

  // The same invoice, corrected: its creation key was never bound, so it is not a conflict.
  await succeeds(w, await call(payArgs('inv-schema')), 1_250);
});

test('with a request map, an argument the map does not cover is refused input_invalid before anything is created; the covered call succeeds and settles', async (t) => {
  const w = await makeWorld(t);
  const mapped = { ...w, policy: policyFor(w.provider.profile, { request: MAP }) };
  const { client } = await inProcessGateway(t, mapped);
  const call = async (args: JsonObject): Promise<CallToolResult> =>
    (await client.callTool({ name: 'pay', arguments: args })) as CallToolResult;

  for (const iban of ['ATTACKER-IBAN', 'SOMETHING-ELSE']) {
    const r = error(await call({ ...payArgs('inv-map'), payee_iban: iban }));
    assert.equal(r.code, 'input_invalid');
    assert.match(r.message, /^\$\.arguments\/payee_iban: is not covered by the policy's request map/);
    assert.doesNotMatch(r.message, new RegExp(iban), 'the value is never echoed');
    await nothingHappened(w, `payee_iban ${iban}`);
  }
  const r = await call(payArgs('inv-map'));
  await succeeds(w, r, 1_250);
  const o = r._meta?.['baton/occurrence'] as { id: string };
  const { occurrence } = await w.store.service.getOccurrence(o.id);
  assert.equal(occurrence.conflict, false, 'the provider’s request digest matches Baton’s');
});

test('baton mcp (stdio, --baton) refuses a schema-breaking argument and an unmapped one the same way', async (t) => {
  const w = await makeWorld(t);
  writeFileSync(w.policyFile, JSON.stringify(policyFor(w.provider.profile, { request: MAP })));
  const { client } = await childGateway(t, w);
  const call = async (args: JsonObject): Promise<CallToolResult> =>
    (await client.callTool({ name: 'pay', arguments: args })) as CallToolResult;
  assert.match(error(await call({ ...payArgs('inv-child'), payee: 42 })).message, /^\$\.arguments\/payee:/);
  assert.match(error(await call({ ...payArgs('inv-child'), memo: 'x' })).message, /^\$\.arguments\/memo:/);
  await nothingHappened(w, 'baton mcp');
  await succeeds(w, await call(payArgs('inv-child')), 1_250);
});

test('a policy tool whose upstream input schema cannot be compiled is refused at start (fail closed), never checked as "anything goes"', async (t) => {
  const schemas: [string, Tool['inputSchema']][] = [
    ['an unknown keyword', { ...PAY_TOOL.inputSchema, 'x-payee-check': true }],
    ['an unknown format', { type: 'object', properties: { payee: { type: 'string', format: 'iban' } } }],
    ['an unresolvable $ref', { type: 'object', properties: { payee: { $ref: 'https://example.com/p' } } }],
    [
      'an unsupported dialect',
      { ...PAY_TOOL.inputSchema, $schema: 'http://json-schema.org/draft-04/schema#' },
    ],
    ['an invalid schema', { type: 'object', properties: { payee: { type: 'text' } } }],
  ];
  for (const [what, inputSchema] of schemas) {
    const w = await makeWorld(t);
    w.control.payTool = { ...PAY_TOOL, inputSchema };
    await assert.rejects(
      inProcessGateway(t, w),
      (e: unknown) =>
        isBatonError(e) &&
        e.code === 'mcp_upstream_invalid' &&
        /input schema of tool pay cannot be checked/.test(e.message),
      what,
    );
    assert.equal((await w.store.service.counts()).total, 0);
  }
});

function checkOf(inputSchema: Tool['inputSchema'], extra: JsonObject = {}) {
  const p = parsePolicy(
    JSON.stringify(policyFor({ id: 'sandbox-payments', version: '2026-01-01' }, extra)),
  ).tools.get('pay');
  assert.ok(p !== undefined);
  const check = compileArguments({ ...PAY_TOOL, inputSchema }, p);
  return (args: JsonObject): string | null => {
    try {
      check.check(args);
      return null;
    } catch (e) {
      assert.ok(isBatonError(e) && e.code === 'input_invalid', String(e));
      return e.message;
    }
  };
}

test('the schema check: dialects, formats, closed objects, nested members; the absent native key is not an error', () => {
  const draft7 = checkOf({ ...PAY_TOOL.inputSchema, $schema: 'http://json-schema.org/draft-07/schema#' });
  assert.equal(draft7(payArgs('i')), null, 'idempotency_key is required upstream, but Baton fills it');
  assert.match(draft7({ ...payArgs('i'), payee: 1 }) ?? '', /^\$\.arguments\/payee: must be string/);

  const strict = checkOf({
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    additionalProperties: false,
    properties: {
      ...PAY_TOOL.inputSchema.properties,
      payer: {
        type: 'object',
        properties: { email: { type: 'string', format: 'email' } },
        required: ['email'],
      },
      lines: { type: 'array', prefixItems: [{ type: 'string' }], items: false },
    },
    required: ['amount', 'currency', 'payee', 'invoice', 'idempotency_key'],
  });
  assert.equal(strict(payArgs('i')), null);
  assert.match(
    strict({ ...payArgs('i'), memo: 'x' }) ?? '',
    /^\$\.arguments\/memo: must NOT have additional/,
  );
  assert.match(
    strict({ ...payArgs('i'), payer: { email: 'not an address' } }) ?? '',
    /^\$\.arguments\/payer\/email: must match format "email"/,
  );
  assert.match(
    strict({ ...payArgs('i'), payer: {} }) ?? '',
    /^\$\.arguments\/payer\/email: must have required/,
  );
  assert.match(
    strict({ ...payArgs('i'), lines: ['a', 'b'] }) ?? '',
    /^\$\.arguments\/lines: must NOT have more than 1 items/,
    '2020-12 keywords are enforced, not ignored',
  );
  assert.equal(strict({ ...payArgs('i'), lines: ['a'] }), null);
});

test('the request map check: members under a mapped pointer are covered; anything else, even an empty object, is refused; the native key’s parent may exist', () => {
  const schema: Tool['inputSchema'] = { type: 'object' };
  const nested = checkOf(schema, {
    request: {
      amount: '/payment/amount',
      currency: '/payment/currency',
      payee: '/payee',
      invoice: '/invoice',
    },
    nativeKey: { to: 'argument', pointer: '/headers/idempotency_key' },
  });
  const ok = {
    payment: { amount: 5, currency: 'eur' },
    payee: { name: 'acme', iban: 'X' },
    invoice: 'i',
    headers: {},
  };
  assert.equal(
    nested(ok),
    null,
    'a mapped member’s whole value is covered; the native key’s parent may exist',
  );
  assert.match(
    nested({ ...ok, payment: { ...ok.payment, iban: 'X' } }) ?? '',
    /^\$\.arguments\/payment\/iban: is not covered/,
  );
  assert.match(
    nested({ ...ok, headers: { trace: 'x' } }) ?? '',
    /^\$\.arguments\/headers\/trace: is not covered/,
  );
  assert.match(nested({ ...ok, payment: 5 }) ?? '', /^\$\.arguments\/payment: is not covered/);
  assert.match(nested({ ...ok, extra: {} }) ?? '', /^\$\.arguments\/extra: is not covered/);
  assert.match(
    nested({ invoice: 'i', payee: 'p', payment: {}, headers: {} }) ?? '',
    /^\$\.arguments\/payment: is not covered/,
    'an empty object the request cannot tell from its absence',
  );
  assert.match(nested({ ...ok, 'a/b': 1 }) ?? '', /^\$\.arguments\/a~1b: is not covered/);
  const items = checkOf(schema, { request: { amount: '/items/0/amount', invoice: '/invoice' } });
  assert.equal(items({ items: [{ amount: 1 }], invoice: 'i' }), null);
  assert.match(
    items({ items: [{ amount: 1 }, { amount: 2 }], invoice: 'i' }) ?? '',
    /^\$\.arguments\/items\/1: is not covered/,
  );
});

/** `{"a": {"a": … }}` nested `levels` deep, built without recursion. */
function nested(levels: number): JsonObject {
  let v: JsonObject = {};
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}

test('arguments or _meta nested past the JSON depth bound (128) are refused input_invalid before anything is derived; nothing is created or sent', async (t) => {
  const w = await makeWorld(t);
  const { client } = await inProcessGateway(t, w);
  const deep = (await client.callTool({
    name: 'pay',
    arguments: { ...payArgs('inv-deep'), extra: nested(20_000) },
  })) as CallToolResult;
  const e = error(deep);
  assert.equal(e.code, 'input_invalid');
  assert.match(e.message, /^\$\.arguments: nests deeper than 128 levels/);
  const deepMeta = error(
    (await client.callTool({
      name: 'pay',
      arguments: payArgs('inv-deep'),
      _meta: { trace: nested(20_000) },
    })) as CallToolResult,
  );
  assert.equal(deepMeta.code, 'input_invalid');
  assert.match(deepMeta.message, /^\$\._meta: nests deeper than 128 levels/);
  // One level past the bound is refused too: the arguments object is level 1.
  const justOver = error(
    (await client.callTool({
      name: 'pay',
      arguments: { ...payArgs('inv-deep'), extra: nested(127) },
    })) as CallToolResult,
  );
  assert.equal(justOver.code, 'input_invalid');
  await nothingHappened(w, 'deeply nested arguments');
});

test('AOC-CASE-006: a nested native key argument is taken out of the advertised schema (member and required entry); the schema-following call is not refused for it', async (t) => {
  const w = await makeWorld(t);
  w.control.payTool = {
    ...PAY_TOOL,
    inputSchema: {
      type: 'object',
      properties: {
        ...PAY_TOOL.inputSchema.properties,
        options: {
          type: 'object',
          properties: { idempotency_key: { type: 'string' }, priority: { type: 'string' } },
          required: ['idempotency_key', 'priority'],
        },
      },
      required: ['amount', 'currency', 'payee', 'invoice', 'options'],
    },
  };
  const policy = policyFor(w.provider.profile, {
    nativeKey: { to: 'argument', pointer: '/options/idempotency_key' },
  });
  const { client } = await inProcessGateway(t, { ...w, policy });
  const pay = (await client.listTools()).tools.find((tool) => tool.name === 'pay');
  const options = pay?.inputSchema.properties?.['options'] as {
    properties: Record<string, unknown>;
    required: string[];
  };
  assert.deepEqual(Object.keys(options.properties), ['priority'], 'the nested key is not advertised');
  assert.deepEqual(options.required, ['priority'], 'nor required');
  assert.ok(pay?.inputSchema.properties?.['idempotency_key'] !== undefined, 'other members untouched');
  assert.deepEqual(pay?.inputSchema.required, ['amount', 'currency', 'payee', 'invoice', 'options']);
  // The agent that follows the advertised schema passes the arguments check.
  const p = parsePolicy(JSON.stringify(policy)).tools.get('pay');
  assert.ok(p !== undefined);
  const check = compileArguments(w.control.payTool, p);
  assert.doesNotThrow(() => check.check({ ...payArgs('i'), options: { priority: 'high' } }));
});

test('AOC-CASE-006: with the native key in _meta, an agent that supplies that _meta member is refused input_invalid; nothing is created or sent', async (t) => {
  const w = await makeWorld(t);
  w.control.payTool = {
    ...PAY_TOOL,
    inputSchema: { ...PAY_TOOL.inputSchema, required: ['amount', 'currency', 'payee', 'invoice'] },
  };
  const policy = policyFor(w.provider.profile, { nativeKey: { to: 'meta', member: 'idempotency-key' } });
  const { client } = await inProcessGateway(t, { ...w, policy });
  const r = error(
    (await client.callTool({
      name: 'pay',
      arguments: payArgs('inv-meta-key'),
      _meta: { 'idempotency-key': 'mine' },
    })) as CallToolResult,
  );
  assert.equal(r.code, 'input_invalid');
  assert.match(r.message, /^\$\._meta\.idempotency-key: is the native idempotency key/);
  await nothingHappened(w, '_meta native key supplied');
});

test('a policy _meta member named like an Object.prototype member (toString, constructor): a call without it is not refused as if it carried it', async (t) => {
  const w = await makeWorld(t);
  w.control.payTool = {
    ...PAY_TOOL,
    inputSchema: { ...PAY_TOOL.inputSchema, required: ['amount', 'currency', 'payee', 'invoice'] },
  };
  const policy = policyFor(w.provider.profile, { nativeKey: { to: 'meta', member: 'toString' } });
  const { client } = await inProcessGateway(t, { ...w, policy });
  const r = (await client.callTool({
    name: 'pay',
    arguments: payArgs('inv-proto'),
    _meta: { trace: 'x' },
  })) as CallToolResult;
  // The test upstream wants its key in the arguments, so its answer is its own error: what counts
  // is that the gateway sent the call, with Baton's key in _meta.toString.
  const baton = r._meta?.['baton/error'] as ErrorMeta | undefined;
  assert.notEqual(baton?.code, 'input_invalid', JSON.stringify(r.content));
  assert.equal(w.control.calls['pay'], 1, 'sent once');
  assert.equal(
    typeof w.control.lastMeta?.['toString'],
    'string',
    "with Baton's native key in _meta.toString",
  );
  // The agent that does supply it is still refused (AOC-CASE-006).
  const own = error(
    (await client.callTool({
      name: 'pay',
      arguments: payArgs('inv-proto-2'),
      _meta: { toString: 'mine' },
    })) as CallToolResult,
  );
  assert.equal(own.code, 'input_invalid');
  assert.match(own.message, /^\$\._meta\.toString: is the native idempotency key/);
  assert.equal(w.control.calls['pay'], 1, 'nothing more sent');
});
