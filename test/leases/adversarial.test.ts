import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import type { BatonErrorCode } from '../../src/core/errors.js';
import { generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { formatRfc3339, parseRfc3339 } from '../../src/core/time.js';
import {
  signDocument,
  signRecoveryOrder,
  verifyReceipt,
  type Lease,
  type Receipt,
  type UnsignedLease,
} from '../../src/leases/index.js';
import {
  OPERATOR,
  allocate,
  assertAccepted,
  assertRefused,
  draftLease,
  harness,
  leaseStatus,
  mutate,
  post,
  readResource,
  release,
  sign,
  type Harness,
} from './helpers.js';

const ID = '99281';

interface Case {
  name: string;
  code: BatonErrorCode;
  header: (h: Harness, base: UnsignedLease) => Lease | string | undefined;
  body?: unknown;
}

function flipHex(tag: string): string {
  return tag.slice(0, -1) + (tag.endsWith('0') ? '1' : '0');
}

/** A value of the same type and form as `value`, but different. */
function altered(member: string, value: unknown): unknown {
  if (member === 'ptcl_version') return '1.1';
  if (member === 'recovery_mode')
    return value === 'SNAPSHOT_RESTORE' ? 'COMPENSATING_ACTION' : 'SNAPSHOT_RESTORE';
  if (member === 'issued_at' || member === 'expires_at')
    return formatRfc3339(parseRfc3339(String(value)) - 1000);
  if (member === 'sor_target_uri') return String(value).replace(ID, '99282');
  if (typeof value === 'number') return value + 1;
  if (typeof value === 'string' && value.startsWith('sha256:')) return flipHex(value);
  return `${String(value)}x`;
}

function memberCases(base: UnsignedLease): Case[] {
  const lease = Object.keys(base).map((member): Case => ({
    name: `member ${member} altered after signing`,
    code: member === 'ptcl_version' ? 'ERR_LEASE_MALFORMED' : 'ERR_LEASE_SIGNATURE',
    header: (h, b) => ({ ...sign(h, b), [member]: altered(member, b[member as keyof UnsignedLease]) }),
  }));
  const sig = (['alg', 'kid', 'sig'] as const).map((member): Case => ({
    name: `signature.${member} altered`,
    code: 'ERR_LEASE_SIGNATURE',
    header: (h, b) => {
      const signed = sign(h, b);
      const s = signed.signature;
      const value =
        member === 'alg'
          ? 'ed25519'
          : member === 'kid'
            ? flipHex(s.kid)
            : `${s.sig[0] === 'A' ? 'B' : 'A'}${s.sig.slice(1)}`;
      return { ...signed, signature: { ...s, [member]: value } };
    },
  }));
  return [...lease, ...sig];
}

const stranger = generateEd25519KeyPair();

function duplicated(h: Harness, b: UnsignedLease): string {
  return JSON.stringify(sign(h, b)).replace('{', '{"cas_fence_epoch":1,');
}

const CASES: Case[] = [
  {
    name: 'forged signature (untrusted key, trusted kid)',
    code: 'ERR_LEASE_SIGNATURE',
    header: (h, b) => ({
      ...signDocument(b, stranger),
      signature: { ...signDocument(b, stranger).signature, kid: h.gateway.kid },
    }),
  },
  {
    name: 'signature of random bytes',
    code: 'ERR_LEASE_SIGNATURE',
    header: (h, b) => ({
      ...sign(h, b),
      signature: { ...sign(h, b).signature, sig: Buffer.alloc(64, 7).toString('base64url') },
    }),
  },
  {
    name: 'signed by an untrusted gateway',
    code: 'ERR_LEASE_SIGNATURE',
    header: (_h, b) => signDocument(b, stranger),
  },
  {
    name: 'wrong kid: another trusted gateway',
    code: 'ERR_LEASE_SIGNATURE',
    header: (h, b) => ({ ...sign(h, b), signature: { ...sign(h, b).signature, kid: h.gateways[1]!.kid } }),
  },
  {
    name: 'unknown alg',
    code: 'ERR_LEASE_SIGNATURE',
    header: (h, b) => ({ ...sign(h, b), signature: { ...sign(h, b).signature, alg: 'EdDSA' } }),
  },
  { name: 'duplicate member (raw JSON header)', code: 'ERR_LEASE_MALFORMED', header: duplicated },
  {
    name: 'duplicate member (base64url header)',
    code: 'ERR_LEASE_MALFORMED',
    header: (h, b) => Buffer.from(duplicated(h, b)).toString('base64url'),
  },
  { name: 'no lease header', code: 'ERR_LEASE_MALFORMED', header: () => undefined },
  { name: 'header not base64url', code: 'ERR_LEASE_MALFORMED', header: () => 'not a lease!' },
  {
    name: 'missing member (re-signed without trace_anchor_ref)',
    code: 'ERR_LEASE_MALFORMED',
    header: (h, b) => {
      const { trace_anchor_ref: _gone, ...rest } = b;
      return signDocument(rest, h.gateway) as unknown as Lease;
    },
  },
  {
    name: 'unknown member (signed)',
    code: 'ERR_LEASE_MALFORMED',
    header: (h, b) => signDocument({ ...b, extra: true }, h.gateway),
  },
  {
    name: 't_req_ms > t_granted_ms',
    code: 'ERR_RECOVERY_WINDOW',
    header: (h, b) => signDocument({ ...b, t_req_ms: b.t_granted_ms + 1 }, h.gateway),
  },
  {
    name: 't_granted_ms = MAX_SAFE_INTEGER (the window end is no instant a receipt can carry)',
    code: 'ERR_RECOVERY_WINDOW',
    header: (h, b) => signDocument({ ...b, t_granted_ms: Number.MAX_SAFE_INTEGER }, h.gateway),
  },
  {
    name: 't_granted_ms ending the window in a six-digit year',
    code: 'ERR_RECOVERY_WINDOW',
    header: (h, b) => signDocument({ ...b, t_granted_ms: 3e14 }, h.gateway),
  },
  {
    name: 'cas_fence_epoch = MAX_SAFE_INTEGER (no room for the recovery step)',
    code: 'ERR_LEASE_MALFORMED',
    header: (h, b) => signDocument({ ...b, cas_fence_epoch: Number.MAX_SAFE_INTEGER }, h.gateway),
  },
  {
    name: 'expired',
    code: 'ERR_LEASE_EXPIRED',
    header: (h, b) =>
      sign(h, {
        ...b,
        issued_at: formatRfc3339(h.clock.wallMs() - 60_000),
        expires_at: formatRfc3339(h.clock.wallMs() - 1),
      }),
  },
  {
    name: 'issued_at 61 s in the future',
    code: 'ERR_CLOCK_SKEW',
    header: (h, b) =>
      sign(h, {
        ...b,
        issued_at: formatRfc3339(h.clock.wallMs() + 61_000),
        expires_at: formatRfc3339(h.clock.wallMs() + 120_000),
      }),
  },
  {
    name: 'equal epoch',
    code: 'ERR_STALE_FENCE_EPOCH',
    header: (h, b) => sign(h, { ...b, cas_fence_epoch: b.cas_fence_epoch - 1 }),
  },
  {
    name: 'lower epoch',
    code: 'ERR_STALE_FENCE_EPOCH',
    header: (h, b) => sign(h, { ...b, cas_fence_epoch: b.cas_fence_epoch - 2 }),
  },
  {
    name: 'pre-image mismatch',
    code: 'ERR_PRE_IMAGE_MISMATCH',
    header: (h, b) =>
      sign(h, {
        ...b,
        pre_image_state_hash: flipHex(b.pre_image_state_hash) as UnsignedLease['pre_image_state_hash'],
      }),
  },
  {
    name: 'inverse payload differs from its hash',
    code: 'ERR_INVERSE_PAYLOAD_MISMATCH',
    header: (h, b) => sign(h, b),
    body: { operation: allocate(3), inverse_payload: release(4) },
  },
  {
    name: 'inverse payload not staged',
    code: 'ERR_INVERSE_PAYLOAD_MISMATCH',
    header: (h, b) => sign(h, b),
    body: { operation: allocate(3) },
  },
  {
    name: 'unknown recovery mode',
    code: 'ERR_UNKNOWN_RECOVERY_MODE',
    header: (h, b) => signDocument({ ...b, recovery_mode: 'BEST_EFFORT' }, h.gateway),
  },
  {
    name: 'lease for another resource',
    code: 'ERR_TARGET_MISMATCH',
    header: (h, b) => sign(h, { ...b, sor_target_uri: h.sor.targetUri('99282') }),
  },
  {
    name: 'body is not strict JSON',
    code: 'input_invalid',
    header: (h, b) => sign(h, b),
    body: '{"operation":1,"operation":2}',
  },
];

test('adversarial leases: each refused with its code and a signed, audited receipt; the resource unchanged', async (t) => {
  const h = await harness(2);
  t.after(() => h.close());
  const base = await draftLease(h, ID, 'COMPENSATING_ACTION');
  const cases = [...memberCases(base), ...CASES];
  for (const c of cases) {
    const before = await readResource(h, ID);
    const r = await mutate(h, ID, c.header(h, base), c.body);
    await assertRefused(h, r, c.code).catch((error: unknown) => {
      throw new Error(`case "${c.name}": ${error instanceof Error ? error.message : String(error)}`);
    });
    assert.deepEqual(await readResource(h, ID), before, `case "${c.name}" changed the resource`);
  }
  // The unaltered lease is accepted: every refusal above came from its one defect.
  await assertAccepted(h, await mutate(h, ID, sign(h, base)));
  t.diagnostic(`checked ${cases.length} refusal cases`);
});

test('a replayed lease_id is refused, even inside an otherwise valid fresh lease', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const first = sign(h, await draftLease(h, ID, 'COMPENSATING_ACTION'));
  await assertAccepted(h, await mutate(h, ID, first));
  const after = await readResource(h, ID);
  await assertRefused(h, await mutate(h, ID, first), 'ERR_LEASE_REPLAYED');
  const again = sign(h, await draftLease(h, ID, 'COMPENSATING_ACTION', { leaseId: first.lease_id }));
  await assertRefused(h, await mutate(h, ID, again), 'ERR_LEASE_REPLAYED');
  assert.deepEqual(await readResource(h, ID), after);
  assert.equal(h.sor.ledger.verifyAuditChain(), undefined, 'audit hash chain intact');
  const key = (await (await fetch(`${h.sor.url}/ptcl/receipt-key`)).json()) as { kid: string };
  assert.equal(key.kid, h.sorKey.kid, 'the receipt key is published');
  assert.equal((await fetch(`${h.sor.url}/ptcl/audit`)).status, 401, 'the audit log is for operators');
});

test('the recovery window may end at 9999-12-31T23:59:59.999Z and not one millisecond later', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const last = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
  // signLease refuses it (docs/leases.md §2): signed raw, so the system of record's refusal is tested.
  const over = signDocument(
    { ...(await draftLease(h, ID, 'COMPENSATING_ACTION')), t_granted_ms: last - h.clock.wallMs() + 1 },
    h.gateway,
  );
  const before = await readResource(h, ID);
  await assertRefused(h, await mutate(h, ID, over), 'ERR_RECOVERY_WINDOW');
  assert.deepEqual(await readResource(h, ID), before);
  const edge = sign(h, {
    ...(await draftLease(h, ID, 'COMPENSATING_ACTION')),
    t_granted_ms: last - h.clock.wallMs(),
  });
  const receipt = await assertAccepted(h, await mutate(h, ID, edge));
  assert.equal(
    receipt.receipt_type === 'commit' && receipt.recovery_window_ends_at,
    '9999-12-31T23:59:59.999Z',
  );
});

/** A POST over plain HTTP with the Host header a client chose (fetch does not let one set it). */
function postWithHost(h: Harness, path: string, host: string, body: string, operator = false) {
  const url = new URL(h.sor.url);
  const headers: Record<string, string> = { host, 'content-type': 'application/json' };
  if (operator) headers['authorization'] = `Bearer ${OPERATOR}`;
  return new Promise<{ status: number; receipt: Receipt }>((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { receipt: Receipt };
        resolve({ status: res.statusCode ?? 0, receipt: parsed.receipt });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

test("receipts name the system of record's own origin, never the request's Host", async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const id = 'urn:uuid:00000000-0000-4000-8000-000000000000';
  const enc = encodeURIComponent(id);
  const order = JSON.stringify(signRecoveryOrder(id, h.clock.wallMs(), h.gateway));
  const cases = [
    {
      path: `/ptcl/leases/${enc}/recover?x=evil`,
      body: order,
      operator: false,
      code: 'not_found',
      at: 'leases',
      action: 'recover',
    },
    {
      path: `/ptcl/leases/${enc}/recover`,
      body: '{',
      operator: false,
      code: 'ERR_LEASE_MALFORMED',
      at: 'leases',
      action: 'recover',
    },
    {
      path: `/ptcl/escrow/${enc}/approve`,
      body: '',
      operator: true,
      code: 'not_found',
      at: 'escrow',
      action: 'approve',
    },
  ];
  for (const c of cases) {
    const r = await postWithHost(h, c.path, 'evil.example:666', c.body, c.operator);
    assert.equal(r.receipt.receipt_type === 'rejection' && r.receipt.code, c.code);
    assert.ok(verifyReceipt(r.receipt, h.receiptKeys));
    assert.equal(r.receipt.sor_target_uri, `${h.sor.origin}/ptcl/${c.at}/${enc}/${c.action}`, c.path);
  }
});

test('bodies Fastify refuses unread (over 1 MiB, no media type) get a signed, audited refusal', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const pad = 'x'.repeat(1024 * 1024);
  const big = JSON.stringify({ operation: allocate(3), inverse_payload: release(3), pad });
  const lease = sign(h, await draftLease(h, ID, 'COMPENSATING_ACTION'));
  const before = await readResource(h, ID);
  const tooLarge = await mutate(h, ID, lease, big);
  await assertRefused(h, tooLarge, 'input_invalid');
  assert.match(String(tooLarge.body['detail']), /body limit/);
  // The lease is still checked first, as for any other unreadable body.
  const forged = { ...lease, t_req_ms: lease.t_req_ms + 1 };
  await assertRefused(h, await mutate(h, ID, forged, big), 'ERR_LEASE_SIGNATURE');
  const noMediaType = await fetch(`${h.sor.url}/api/v2/inventory/allocations/${ID}`, {
    method: 'POST',
    headers: { 'content-type': '???', 'agent-compensation-lease': JSON.stringify(lease) },
    body: JSON.stringify({ operation: allocate(3), inverse_payload: release(3) }),
  });
  assert.equal(noMediaType.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  await assertRefused(
    h,
    {
      status: noMediaType.status,
      body: (await noMediaType.json()) as Record<string, unknown>,
      receiptHeader: noMediaType.headers.get('agent-commit-receipt'),
      fence: null,
    },
    'input_invalid',
  );
  assert.deepEqual(await readResource(h, ID), before, 'nothing applied');
  await assertAccepted(h, await mutate(h, ID, lease), 200); // and the lease_id was not consumed

  const enc = encodeURIComponent(lease.lease_id);
  await assertRefused(h, await post(h, `/ptcl/leases/${enc}/recover`, { pad }), 'ERR_LEASE_MALFORMED');
  assert.equal(await leaseStatus(h, lease.lease_id), 'committed', 'no recovery ran');

  const held = sign(h, await draftLease(h, ID, 'HUMAN_ESCROW'));
  await assertAccepted(h, await mutate(h, ID, held), 202);
  const approve = `/ptcl/escrow/${encodeURIComponent(held.lease_id)}/approve`;
  const stranger = await post(h, approve, { pad });
  assert.equal(stranger.status, 401, 'approval still needs an operator');
  assert.equal(stranger.receiptHeader, null);
  await assertRefused(h, await post(h, approve, { pad }, true), 'input_invalid');
  assert.equal(await leaseStatus(h, held.lease_id), 'escrowed', 'nothing approved');
});
