/**
 * Recovery orders (Baton's choice; the draft names no trigger): a gateway asks the system of record
 * to run a lease's recovery by sending a small document signed with the same key that signed the
 * lease, so nobody who merely saw a lease can undo a commit.
 */
import { BatonError, isBatonError } from '../core/errors.js';
import { parseStrictJson } from '../core/json.js';
import { isSha256HexTag } from '../core/digest.js';
import { formatRfc3339, isRfc3339DateTime, parseRfc3339 } from '../core/time.js';
import {
  MAX_CLOCK_SKEW_MS,
  PTCL_VERSION,
  type DocumentSignature,
  type Lease,
  type Rejection,
} from './model.js';
import { exactObject, malformed } from './parse.js';
import { checkDocumentSignature, signDocument, type KeyResolver, type SigningKey } from './signing.js';
import { assertNowMs } from './verify.js';

export interface RecoveryOrder {
  ptcl_version: typeof PTCL_VERSION;
  order_type: 'recover';
  lease_id: string;
  issued_at: string;
  signature: DocumentSignature;
}

export function signRecoveryOrder(leaseId: string, nowMs: number, key: SigningKey): RecoveryOrder {
  const body = {
    ptcl_version: PTCL_VERSION as typeof PTCL_VERSION,
    order_type: 'recover' as const,
    lease_id: leaseId,
  };
  return signDocument({ ...body, issued_at: formatRfc3339(nowMs) }, key);
}

export function parseRecoveryOrder(input: string | Uint8Array): RecoveryOrder {
  let value: unknown;
  try {
    value = parseStrictJson(input, { maxBytes: 4096, maxDepth: 4 });
  } catch (error) {
    if (!isBatonError(error)) throw error;
    throw new BatonError('ERR_LEASE_MALFORMED', 'recovery order is not strict JSON', { json: error.code });
  }
  const o = exactObject(value, ['ptcl_version', 'order_type', 'lease_id', 'issued_at', 'signature'], 'order');
  const s = exactObject(o['signature'], ['alg', 'kid', 'sig'], 'signature');
  const { ptcl_version, order_type, lease_id, issued_at } = o;
  if (ptcl_version !== PTCL_VERSION || order_type !== 'recover') throw malformed('not a PTCL recovery order');
  if (typeof lease_id !== 'string' || typeof issued_at !== 'string' || !isRfc3339DateTime(issued_at)) {
    throw malformed('recovery order members are malformed');
  }
  if (typeof s['alg'] !== 'string' || !isSha256HexTag(s['kid']) || typeof s['sig'] !== 'string') {
    throw malformed('recovery order signature is malformed');
  }
  const signature = { alg: s['alg'], kid: s['kid'], sig: s['sig'] };
  return { ptcl_version, order_type, lease_id, issued_at, signature };
}

export type RecoveryOrderVerdict = { ok: true; order: RecoveryOrder } | { ok: false; rejection: Rejection };

/**
 * Signed by the lease's own key, for this lease, and fresh within the 60 s skew bound. A verdict, so
 * a refusal can never be read as success; `nowMs` must be Unix milliseconds as a safe integer
 * (input_invalid otherwise: NaN would pass the freshness comparison).
 */
export function verifyRecoveryOrder(
  order: RecoveryOrder,
  lease: Lease,
  keys: KeyResolver,
  nowMs: number,
): RecoveryOrderVerdict {
  assertNowMs(nowMs);
  const refuse = (rejection: Rejection): RecoveryOrderVerdict => ({ ok: false, rejection });
  if (order.lease_id !== lease.lease_id || order.signature.kid !== lease.signature.kid) {
    return refuse({
      code: 'ERR_LEASE_SIGNATURE',
      rule: 'CRYPTOGRAPHIC_BINDING',
      message: 'order is not by the lease signer',
    });
  }
  const bad = checkDocumentSignature(order, keys);
  if (bad !== undefined) return refuse(bad);
  if (Math.abs(parseRfc3339(order.issued_at) - nowMs) > MAX_CLOCK_SKEW_MS) {
    return refuse({
      code: 'ERR_CLOCK_SKEW',
      rule: 'CLOCK_SKEW',
      message: 'recovery order is not within 60 s of now',
    });
  }
  return { ok: true, order };
}
