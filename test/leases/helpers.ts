import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/core/clock.js';
import { generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { sha256HexTag } from '../../src/core/digest.js';
import type { JsonValue } from '../../src/core/json.js';
import { ERROR_CODES, type BatonErrorCode } from '../../src/core/errors.js';
import {
  LEASE_HEADER,
  buildLease,
  decodeReceiptHeader,
  verifyReceipt,
  encodeLeaseHeader,
  keyRing,
  parseFenceToken,
  signLease,
  signRecoveryOrder,
  type KeyResolver,
  type Lease,
  type Receipt,
  type RecoveryMode,
  type SigningKey,
  type UnsignedLease,
} from '../../src/leases/index.js';
import { startSor, type RunningSor, type SorOptions } from '../../src/sor/server.js';

export const T0 = Date.parse('2026-11-29T18:00:00.000Z');
export const OPERATOR = 'operator-token-for-tests';
export const TRACE = sha256HexTag('trace');

export interface Harness {
  sor: RunningSor;
  clock: ManualClock;
  /** gateways[0]; every gateway key is trusted by the system of record. */
  gateway: SigningKey;
  gateways: SigningKey[];
  sorKey: SigningKey;
  /** Resolves the system of record's receipt key only. */
  receiptKeys: KeyResolver;
  dbPath: string;
  close(): Promise<void>;
}

export async function harness(
  gatewayCount = 1,
  sorOptions: Partial<Pick<SorOptions, 'busyTimeoutMs'>> = {},
): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-sor-'));
  const clock = new ManualClock(T0);
  const pairs = Array.from({ length: gatewayCount }, () => generateEd25519KeyPair());
  const s = generateEd25519KeyPair();
  const gateways = pairs.map((g) => ({ privateKey: g.privateKey, kid: g.kid }));
  const sorKey = { privateKey: s.privateKey, kid: s.kid };
  const dbPath = join(dir, 'sor.db');
  const sor = await startSor({
    dbPath,
    signer: sorKey,
    trusted: pairs.map((g) => g.publicKey),
    operatorToken: OPERATOR,
    clock,
    sweepIntervalMs: 0,
    ...sorOptions,
  });
  return {
    sor,
    clock,
    gateway: gateways[0]!,
    gateways,
    sorKey,
    receiptKeys: keyRing([s.publicKey]),
    dbPath,
    async close() {
      await sor.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function readResource(h: Harness, id: string): Promise<{ epoch: number; state: JsonValue }> {
  const res = await fetch(`${h.sor.url}/api/v2/inventory/allocations/${id}`);
  if (res.status !== 200) throw new Error(`read ${id}: ${res.status}`);
  return {
    epoch: parseFenceToken(res.headers.get('agent-fence-token')),
    state: (await res.json()) as JsonValue,
  };
}

export const allocate = (quantity: number): JsonValue => ({ op: 'allocate', quantity });
export const release = (quantity: number): JsonValue => ({ op: 'release', quantity });

/** Read the resource, then build an unsigned lease the way a gateway does. */
export async function draftLease(
  h: Harness,
  id: string,
  mode: RecoveryMode,
  over: Partial<{
    tReqMs: number;
    tGrantedMs: number;
    ttlMs: number;
    inverse: JsonValue;
    leaseId: string;
  }> = {},
): Promise<UnsignedLease> {
  const { epoch, state } = await readResource(h, id);
  return buildLease({
    target: h.sor.targetUri(id),
    mode,
    tReqMs: over.tReqMs ?? 450,
    tGrantedMs: over.tGrantedMs ?? 2000,
    currentEpoch: epoch,
    preImage: state,
    inversePayload: over.inverse ?? release(3),
    traceAnchorRef: TRACE,
    issuedAtMs: h.clock.wallMs(),
    ttlMs: over.ttlMs ?? 30_000,
    ...(over.leaseId !== undefined ? { leaseId: over.leaseId } : {}),
  });
}

export interface Reply {
  status: number;
  body: Record<string, unknown>;
  receiptHeader: string | null;
  fence: string | null;
}

async function reply(res: Response): Promise<Reply> {
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    receiptHeader: res.headers.get('agent-commit-receipt'),
    fence: res.headers.get('agent-fence-token'),
  };
}

export async function mutate(
  h: Harness,
  id: string,
  lease: Lease | string | undefined,
  body: unknown = { operation: allocate(3), inverse_payload: release(3) },
): Promise<Reply> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (lease !== undefined)
    headers[LEASE_HEADER] = typeof lease === 'string' ? lease : encodeLeaseHeader(lease);
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  return reply(
    await fetch(`${h.sor.url}/api/v2/inventory/allocations/${id}`, {
      method: 'POST',
      headers,
      body: payload,
    }),
  );
}

export async function post(h: Harness, path: string, body?: unknown, operator = false): Promise<Reply> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (operator) headers['authorization'] = `Bearer ${OPERATOR}`;
  const init: RequestInit = { method: 'POST', headers };
  if (body !== undefined) init.body = JSON.stringify(body);
  return reply(await fetch(`${h.sor.url}${path}`, init));
}

export function sign(h: Harness, lease: UnsignedLease): Lease {
  return signLease(lease, h.gateway);
}

export async function auditIds(h: Harness): Promise<Set<string>> {
  const res = await fetch(`${h.sor.url}/ptcl/audit?limit=1000`, {
    headers: { authorization: `Bearer ${OPERATOR}` },
  });
  const { entries } = (await res.json()) as { entries: Array<{ receipt: Receipt }> };
  return new Set(entries.map((e) => e.receipt.receipt_id));
}

/** A refusal: its status and code, a receipt signed by the system of record, the same in the header, audited. */
export async function assertRefused(h: Harness, r: Reply, code: BatonErrorCode): Promise<Receipt> {
  assert.equal(
    r.body['code'],
    code,
    `expected ${code}, got ${String(r.body['code'])}: ${String(r.body['detail'])}`,
  );
  assert.equal(r.status, ERROR_CODES[code].status);
  const receipt = r.body['receipt'] as Receipt;
  assert.equal(receipt.receipt_type, 'rejection');
  assert.equal(receipt.receipt_type === 'rejection' && receipt.code, code);
  assert.ok(verifyReceipt(receipt, h.receiptKeys), 'rejection receipt must verify under the SoR key');
  assert.deepEqual(decodeReceiptHeader(r.receiptHeader ?? ''), receipt);
  // docs/leases.md §6: a refusal of a request with no verified signature is kept in the bounded table.
  const kept = new Set(h.sor.ledger.unauthenticatedRefusals().entries.map((e) => e.receipt.receipt_id));
  assert.ok(
    (await auditIds(h)).has(receipt.receipt_id) || kept.has(receipt.receipt_id),
    'rejection receipt must be in the audit log or the unauthenticated refusals',
  );
  return receipt;
}

export async function assertAccepted(h: Harness, r: Reply, status = 200): Promise<Receipt> {
  assert.equal(
    r.status,
    status,
    `expected ${status}, got ${r.status}: ${String(r.body['code'])} ${String(r.body['detail'])}`,
  );
  const receipt = r.body['receipt'] as Receipt;
  assert.ok(verifyReceipt(receipt, h.receiptKeys), 'receipt must verify under the SoR key');
  assert.deepEqual(decodeReceiptHeader(r.receiptHeader ?? ''), receipt);
  assert.ok((await auditIds(h)).has(receipt.receipt_id), 'receipt must be in the audit log');
  return receipt;
}

export async function recoverLease(
  h: Harness,
  leaseId: string,
  key: SigningKey = h.gateway,
  atMs = h.clock.wallMs(),
): Promise<Reply> {
  return post(
    h,
    `/ptcl/leases/${encodeURIComponent(leaseId)}/recover`,
    signRecoveryOrder(leaseId, atMs, key),
  );
}

export async function leaseStatus(h: Harness, leaseId: string): Promise<string> {
  const res = await fetch(`${h.sor.url}/ptcl/leases/${encodeURIComponent(leaseId)}`);
  return String(((await res.json()) as { status: unknown }).status);
}
