/**
 * The policy document `baton.mcp-policy/1`: strict JSON, unknown members and bad pointers refused with
 * `mcp_policy_invalid`; the worked example in docs/mcp.md is a valid policy; the published JSON
 * Schema names exactly the members the reader accepts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isBatonError } from '../../src/core/errors.js';
import { parsePolicy } from '../../src/mcp/index.js';
import { ACTION_CLASSES } from '../../src/missions/index.js';
import { repoRoot } from '../support/paths.js';

const docs = readFileSync(join(repoRoot, 'docs', 'mcp.md'), 'utf8');
const example = /<!-- mcp-policy-example:start -->\n```json\n([\s\S]*?)```/.exec(docs)?.[1] ?? '';

const refused = (text: string): boolean => {
  try {
    parsePolicy(text);
    return false;
  } catch (e) {
    return isBatonError(e, 'mcp_policy_invalid');
  }
};

function variant(edit: (tool: Record<string, unknown>) => void): string {
  const doc = JSON.parse(example) as { tools: { pay: Record<string, unknown> } };
  edit(doc.tools.pay);
  return JSON.stringify(doc);
}

test('the worked example in docs/mcp.md is a valid policy', () => {
  const p = parsePolicy(example);
  const pay = p.tools.get('pay');
  assert.equal(p.lineage, 'payments-agent');
  assert.deepEqual(pay?.nativeKey, { to: 'argument', pointer: '/idempotency_key' });
  assert.equal(pay?.mission?.required, true);
});

test('mcp_policy_invalid: duplicate members, unknown members, bad pointers, ambiguous amounts, wrong format', () => {
  assert.ok(
    refused(example.replace('"lineage": "payments-agent",', '"lineage": "a", "lineage": "b",')),
    'duplicate',
  );
  assert.ok(refused(variant((t) => (t['retries'] = 3))), 'unknown member');
  assert.ok(
    refused(variant((t) => (t['creationKey'] = { from: 'arguments', pointers: ['invoice'] }))),
    'pointer',
  );
  assert.ok(refused(variant((t) => (t['creationKey'] = { from: 'arguments', pointers: [] }))), 'no pointer');
  assert.ok(
    refused(variant((t) => (t['authority'] = { id: 'payouts', amount: { pointer: '/amount', fixed: 1 } }))),
  );
  assert.ok(
    refused(variant((t) => (t['nativeKey'] = { to: 'argument', pointer: '' }))),
    'whole-arguments key',
  );
  assert.ok(refused(variant((t) => (t['settle'] = { statusSources: false }))), 'nothing could settle');
  assert.ok(refused(example.replace('baton.mcp-policy/1', 'baton.mcp-policy/2')), 'format');
  assert.ok(refused('{"format":"baton.mcp-policy/1",'), 'not JSON');
});

test('schemas/mcp-tool-policy.schema.json names exactly the members the reader accepts', () => {
  const schema = JSON.parse(
    readFileSync(join(repoRoot, 'schemas', 'mcp-tool-policy.schema.json'), 'utf8'),
  ) as {
    properties: Record<string, unknown>;
    $defs: { tool: { properties: Record<string, unknown>; required: string[] } };
  };
  assert.deepEqual(Object.keys(schema.properties).sort(), ['format', 'lineage', 'tools']);
  const members = Object.keys(schema.$defs.tool.properties).sort();
  assert.deepEqual(members, [
    'acknowledgement',
    'authority',
    'creationKey',
    'mission',
    'nativeKey',
    'provider',
    'request',
    'settle',
    'upstream',
  ]);
  assert.deepEqual(schema.$defs.tool.required.sort(), ['authority', 'creationKey', 'provider']);
});

test('mission.actionClass: a harness class or the default consequential_write; anything else is refused naming the value', () => {
  const withClass = (actionClass?: string): string =>
    variant(
      (t) => (t['mission'] = { required: true, ...(actionClass === undefined ? {} : { actionClass }) }),
    );
  assert.equal(parsePolicy(withClass('irreversible')).tools.get('pay')?.mission?.actionClass, 'irreversible');
  assert.equal(parsePolicy(withClass()).tools.get('pay')?.mission?.actionClass, 'consequential_write');
  assert.throws(
    () => parsePolicy(withClass('payments.send')),
    (e: unknown) =>
      isBatonError(e, 'mcp_policy_invalid') &&
      e.message.includes('"payments.send" is not an action class') &&
      e.details['value'] === 'payments.send' &&
      e.details['path'] === '$.tools.pay.mission.actionClass',
  );
});

test('the schema lists exactly the harness action classes for mission.actionClass', () => {
  const schema = JSON.parse(
    readFileSync(join(repoRoot, 'schemas', 'mcp-tool-policy.schema.json'), 'utf8'),
  ) as { $defs: { tool: { properties: { mission: { properties: { actionClass: { enum?: string[] } } } } } } };
  const listed = schema.$defs.tool.properties.mission.properties.actionClass.enum;
  assert.deepEqual(listed, [...ACTION_CLASSES]);
});

test('settle.readTool naming a consequential tool of the policy (the tool itself or another) is refused at load: it would send the call again', () => {
  const readTool = (name: string) => ({ name, arguments: { idempotency_key: { from: 'nativeKey' } } });
  const itself = variant((t) => (t['settle'] = { readTool: readTool('pay') }));
  assert.throws(
    () => parsePolicy(itself),
    (e: unknown) =>
      isBatonError(e, 'mcp_policy_invalid') &&
      e.details['path'] === '$.tools.pay.settle.readTool.name' &&
      /pay is a consequential tool of this policy/.test(e.message),
  );
  const doc = JSON.parse(example) as { tools: Record<string, Record<string, unknown>> };
  const pay = doc.tools['pay'] ?? {};
  doc.tools['refund'] = { ...pay };
  pay['settle'] = { readTool: readTool('refund') };
  assert.ok(refused(JSON.stringify(doc)), 'another policy tool');
  pay['settle'] = { readTool: readTool('payment_status') };
  assert.equal(parsePolicy(JSON.stringify(doc)).tools.get('pay')?.settle.readTool?.name, 'payment_status');
});

test('mcp_policy_invalid: a native key argument at, inside or around the creation key or amount pointer (every call would be refused)', () => {
  const clash = (pointer: string, creation = ['/invoice'], amount = '/amount'): string | null => {
    try {
      parsePolicy(
        variant((t) => {
          t['nativeKey'] = { to: 'argument', pointer };
          t['creationKey'] = { from: 'arguments', pointers: creation };
          t['authority'] = { id: 'payouts', amount: { pointer: amount } };
        }),
      );
      return null;
    } catch (e) {
      assert.ok(isBatonError(e, 'mcp_policy_invalid'), String(e));
      return e.message;
    }
  };
  assert.match(clash('/invoice') ?? '', /nativeKey\.pointer: .*creationKey\.pointers\[0\]/, 'equal');
  assert.match(clash('/invoice/key', ['/invoice']) ?? '', /creationKey/, 'inside the creation key');
  assert.match(clash('/ref', ['/ref/invoice']) ?? '', /creationKey/, 'containing the creation key');
  assert.match(clash('/amount') ?? '', /nativeKey\.pointer: .*authority\.amount\.pointer/, 'equal to amount');
  assert.match(clash('/amount/x') ?? '', /authority\.amount/, 'inside the amount');
  assert.match(clash('/p', ['/invoice'], '/p/amount') ?? '', /authority\.amount/, 'containing the amount');
  assert.equal(clash('/idempotency_key'), null, 'apart from both: accepted');
  assert.equal(clash('/invoicex'), null, 'a sibling whose name starts alike is not inside');
});

test("mcp_policy_invalid: two of the policy's _meta members (creation key, native key, mission, lease) the same member (every call would be refused)", () => {
  const clash = (edit: (t: Record<string, unknown>) => void): string | null => {
    try {
      parsePolicy(variant(edit));
      return null;
    } catch (e) {
      assert.ok(isBatonError(e, 'mcp_policy_invalid'), String(e));
      return e.message;
    }
  };
  const meta = (member: string) => ({ from: 'meta', member });
  const native = (member: string) => ({ to: 'meta', member });
  assert.match(
    clash((t) => {
      t['creationKey'] = meta('idempotency_key');
      t['nativeKey'] = native('idempotency_key');
    }) ?? '',
    /nativeKey\.member: "idempotency_key" is also creationKey\.member/,
    'native key = creation key',
  );
  assert.match(
    clash((t) => {
      t['nativeKey'] = native('baton/mission');
      t['mission'] = { required: true };
    }) ?? '',
    /nativeKey\.member: "baton\/mission" is also mission\.meta/,
    'native key = the (default) mission member',
  );
  assert.match(
    clash((t) => {
      t['creationKey'] = meta('ref');
      t['mission'] = { required: true, meta: 'ref' };
    }) ?? '',
    /mission\.meta: "ref" is also creationKey\.member/,
    'creation key = mission member',
  );
  assert.match(
    clash((t) => (t['nativeKey'] = native('compensationLease'))) ?? '',
    /nativeKey\.member: "compensationLease" is also the compensation lease/,
    'native key = the lease member',
  );
  assert.match(
    clash((t) => (t['creationKey'] = meta('compensationInversePayload'))) ?? '',
    /creationKey\.member: "compensationInversePayload" is also the compensation lease's inverse payload/,
    'creation key = the inverse payload member',
  );
  assert.equal(
    clash((t) => {
      t['creationKey'] = meta('request_id');
      t['nativeKey'] = native('idempotency_key');
      t['mission'] = { required: true };
    }),
    null,
    'all apart: accepted',
  );
});
