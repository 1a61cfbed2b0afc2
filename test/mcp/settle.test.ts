/**
 * Settlement and carriage through the gateway: the upstream read tool's unsigned answer is evidence,
 * never settlement (AOC-REQ-009, docs/mcp.md "Settlement"); a PTCL lease in
 * `_meta.compensationLease` is verified and forwarded; a predecessor's pre-entry reservation is
 * released and reissued by the successor, never entered twice.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { sha256HexTag } from '../../src/core/digest.js';
import { buildLease, keyRing, signLease } from '../../src/leases/index.js';
import { connectSession, inProcessGateway, makeWorld, payArgs, policyFor } from './world.js';

type Meta = {
  id: string;
  effect: string;
  unresolved: boolean;
  missingKnowledge: string | null;
  readTool?: Record<string, unknown>;
};
const meta = (r: CallToolResult): Meta => r._meta?.['baton/occurrence'] as Meta;
const error = (r: CallToolResult): { code: string; occurrenceId?: string; missingKnowledge?: string } =>
  r._meta?.['baton/error'] as { code: string };

test('AOC-REQ-009: a lost answer, status sources off: the read tool answers "succeeded" but that only stays evidence', async (t) => {
  const w = await makeWorld(t);
  const policy = policyFor(w.provider.profile, {
    settle: {
      statusSources: false,
      readTool: { name: 'payment_status', arguments: { idempotency_key: { from: 'nativeKey' } } },
    },
  });
  const { client } = await inProcessGateway(t, { ...w, policy }, { upstreamTimeoutMs: 4_000 });
  w.control.hangAfterApply = 1;
  const r = (await client.callTool({ name: 'pay', arguments: payArgs('inv-lost') })) as CallToolResult;
  assert.equal(r.isError, true);
  const e = error(r);
  assert.equal(e.code, 'upstream_answer_lost');
  assert.equal(e.missingKnowledge, 'unauthenticated', 'the read tool is not an authenticated source');
  const m = meta(r);
  assert.equal(m.unresolved, true, 'not settled');
  assert.equal(
    (m.readTool?.['answer'] as { status?: string }).status,
    'succeeded',
    'the read tool’s word is shown',
  );
  assert.equal(m.readTool?.['authenticated'], false);
  assert.equal(m.readTool?.['recorded'], true, 'and recorded as evidence');
  const detail = await w.store.service.getOccurrence(e.occurrenceId ?? '');
  assert.equal(detail.occurrence.phase, 'entered', 'Baton still holds it unresolved');
  assert.ok(
    detail.evidence.some((ev) => ev.type === 'observation_recorded'),
    'the read tool’s answer is in the evidence',
  );
  const again = (await client.callTool({ name: 'pay', arguments: payArgs('inv-lost') })) as CallToolResult;
  assert.equal(error(again).code, 'outcome_unknown');
  assert.equal(w.control.calls['pay'], 1, 'never re-sent');
  assert.equal(w.provider.sandbox.effects().length, 1);
});

test('a lost answer the status source does not find: missingKnowledge stays the status source’s not_found, the read tool’s answer shown beside it', async (t) => {
  const w = await makeWorld(t);
  const { client } = await inProcessGateway(t, w, { upstreamTimeoutMs: 1_000 });
  w.control.hangBeforeApply = 1;
  const r = (await client.callTool({ name: 'pay', arguments: payArgs('inv-never') })) as CallToolResult;
  const e = error(r);
  assert.equal(e.code, 'upstream_answer_lost');
  assert.equal(meta(r).readTool?.['answered'], true, 'the read tool was consulted');
  assert.equal(meta(r).readTool?.['authenticated'], false);
  assert.equal(e.missingKnowledge, 'not_found', 'the pinned status source looked and found nothing');
  assert.equal(meta(r).missingKnowledge, 'not_found');
  assert.equal(w.provider.sandbox.effects().length, 0);
});

test('the read tool with authenticatedChannel true is refused at policy load (fail closed)', async (t) => {
  const w = await makeWorld(t);
  const policy = policyFor(w.provider.profile, {
    settle: { readTool: { name: 'payment_status', arguments: {}, authenticatedChannel: true } },
  });
  await assert.rejects(inProcessGateway(t, { ...w, policy }), /authenticatedChannel/);
});

test('PTCL: a signed lease in _meta.compensationLease is verified and forwarded; a forged one is refused before upstream', async (t) => {
  const w = await makeWorld(t);
  const signer = generateEd25519KeyPair();
  const { client } = await inProcessGateway(t, w, { leaseKeys: keyRing([signer.publicKey]) });
  const inverse = { refund: 'inv-lease' };
  const lease = signLease(
    buildLease({
      target: 'sor://payments/inv-lease',
      mode: 'COMPENSATING_ACTION',
      tReqMs: 1_000,
      tGrantedMs: 2_000,
      currentEpoch: 3,
      preImage: { paid: false },
      inversePayload: inverse,
      traceAnchorRef: sha256HexTag('trace'),
      issuedAtMs: Date.now(),
      ttlMs: 60_000,
    }),
    { privateKey: signer.privateKey, kid: signer.kid },
  );
  const _meta = { compensationLease: lease, compensationInversePayload: inverse };
  const ok = (await client.callTool({
    name: 'pay',
    arguments: payArgs('inv-lease'),
    _meta,
  })) as CallToolResult;
  assert.notEqual(ok.isError, true, JSON.stringify(ok.content));
  assert.deepEqual(w.control.lastMeta?.['compensationLease'], lease, 'forwarded upstream');
  assert.deepEqual(w.control.lastMeta?.['compensationInversePayload'], inverse);

  const other = generateEd25519KeyPair();
  const forged = signLease(
    { ...lease, lease_id: 'urn:uuid:forged' },
    { privateKey: other.privateKey, kid: other.kid },
  );
  const bad = (await client.callTool({
    name: 'pay',
    arguments: payArgs('inv-forged'),
    _meta: { compensationLease: forged, compensationInversePayload: inverse },
  })) as CallToolResult;
  assert.equal(error(bad).code, 'ERR_LEASE_SIGNATURE');
  const tampered = (await client.callTool({
    name: 'pay',
    arguments: payArgs('inv-tampered'),
    _meta: { compensationLease: lease, compensationInversePayload: { refund: 'other' } },
  })) as CallToolResult;
  assert.equal(error(tampered).code, 'ERR_INVERSE_PAYLOAD_MISMATCH');
  assert.equal(w.control.calls['pay'], 1, 'refused leases never reach the upstream');
});

test('a predecessor’s pre-entry reservation is released and reissued by the successor: one effect', async (t) => {
  const w = await makeWorld(t);
  const { gateway } = await inProcessGateway(t, w);
  // The predecessor created (reserved) the occurrence the agent's call maps to, then died before entry.
  const predecessor = await w.baton().takeover('payments-agent');
  const { deriveCall } = await import('../../src/mcp/derive.js');
  const { parsePolicy } = await import('../../src/mcp/index.js');
  const { compileArguments } = await import('../../src/mcp/arguments.js');
  const { PAY_TOOL } = await import('./upstream-payments.js');
  const toolPolicy = parsePolicy(JSON.stringify(w.policy)).tools.get('pay');
  assert.ok(toolPolicy !== undefined);
  const check = compileArguments(PAY_TOOL, toolPolicy);
  const reserved = await predecessor.create(
    deriveCall(toolPolicy, payArgs('inv-pre'), undefined, check).operation,
  );
  const successor = await connectSession(t, gateway);
  const r = (await successor.callTool({ name: 'pay', arguments: payArgs('inv-pre') })) as CallToolResult;
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  assert.notEqual(meta(r).id, reserved.occurrence.id, 'a new occurrence, linked to the released one');
  assert.equal(meta(r).effect, 'occurred');
  const tombstone = await w.store.service.getOccurrenceView(reserved.occurrence.id);
  assert.equal(tombstone.phase, 'released');
  const again = (await successor.callTool({ name: 'pay', arguments: payArgs('inv-pre') })) as CallToolResult;
  assert.equal(meta(again).id, meta(r).id, 'the repeat finds the reissued occurrence');
  assert.equal(w.control.calls['pay'], 1);
  assert.equal(w.provider.sandbox.effects().length, 1);
});
