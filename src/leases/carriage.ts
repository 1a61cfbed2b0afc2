/**
 * How leases and receipts travel (draft §3, §6; choices in docs/leases.md):
 * - `Agent-Compensation-Lease`: base64url (no padding) of the lease document's exact UTF-8 bytes
 *   (media type application/agent-tx-lease+json); a value starting with `{` is read as the JSON
 *   text itself. A header repeated by an intermediary (joined with ", ") decodes to neither and fails.
 * - `Agent-Fence-Token`: the resource's current epoch as a decimal integer.
 * - `Agent-Commit-Receipt`: base64url of the receipt's JCS bytes.
 * - MCP: `params._meta.compensationLease` holds the lease object itself and
 *   `params._meta.compensationInversePayload` the staged inverse payload.
 */
import { canonicalBytes } from '../core/jcs.js';
import { BatonError, isBatonError } from '../core/errors.js';
import type { JsonObject, JsonValue } from '../core/json.js';
import type { Lease } from './model.js';
import { leaseFromJson, parseLeaseJson } from './parse.js';
import type { Receipt } from './receipts.js';

export const LEASE_HEADER = 'agent-compensation-lease';
export const FENCE_TOKEN_HEADER = 'agent-fence-token';
export const COMMIT_RECEIPT_HEADER = 'agent-commit-receipt';
export const MCP_LEASE_META = 'compensationLease';
export const MCP_INVERSE_META = 'compensationInversePayload';

const B64URL = /^[A-Za-z0-9_-]+$/;

export function encodeLeaseHeader(lease: Lease): string {
  return Buffer.from(JSON.stringify(lease), 'utf8').toString('base64url');
}

/** The lease bytes a header carries; undefined when absent, ERR_LEASE_MALFORMED when undecodable. */
export function decodeLeaseHeader(value: string | string[] | undefined): Buffer | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value) || value.length === 0) {
    throw new BatonError('ERR_LEASE_MALFORMED', 'Agent-Compensation-Lease must appear exactly once');
  }
  const trimmed = value.trim();
  if (trimmed.startsWith('{')) return Buffer.from(trimmed, 'latin1');
  const bytes = B64URL.test(trimmed) ? Buffer.from(trimmed, 'base64url') : undefined;
  if (bytes === undefined || bytes.toString('base64url') !== trimmed) {
    throw new BatonError('ERR_LEASE_MALFORMED', 'Agent-Compensation-Lease is not unpadded base64url');
  }
  return bytes;
}

export function encodeReceiptHeader(receipt: Receipt): string {
  return canonicalBytes(receipt).toString('base64url');
}

export function decodeReceiptHeader(value: string): JsonValue {
  return parseLeaseJson(Buffer.from(value, 'base64url'));
}

/** The epoch in an Agent-Fence-Token value: a decimal integer, nothing else. */
export function parseFenceToken(value: string | null | undefined): number {
  if (
    typeof value !== 'string' ||
    !/^(0|[1-9][0-9]{0,15})$/.test(value) ||
    !Number.isSafeInteger(Number(value))
  ) {
    throw new BatonError('input_invalid', 'Agent-Fence-Token is not a decimal epoch');
  }
  return Number(value);
}

/** Put a lease and its inverse payload into an MCP request's `_meta`. */
export function withMcpLease(
  meta: JsonObject | undefined,
  lease: Lease,
  inversePayload: JsonValue,
): JsonObject {
  return {
    ...(meta ?? {}),
    [MCP_LEASE_META]: lease as unknown as JsonObject,
    [MCP_INVERSE_META]: inversePayload,
  };
}

/**
 * Read them back. The lease is re-serialized to bytes for the same strict path as the header; the
 * MCP message itself must have been parsed strictly (duplicate members refused) by the caller.
 */
export function leaseFromMcpMeta(meta: unknown): {
  leaseBytes: Buffer | undefined;
  lease: Lease | undefined;
  inversePayload: JsonValue | undefined;
} {
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) {
    return { leaseBytes: undefined, lease: undefined, inversePayload: undefined };
  }
  const object = meta as JsonObject;
  const raw = Object.hasOwn(object, MCP_LEASE_META) ? object[MCP_LEASE_META] : undefined;
  const inversePayload = Object.hasOwn(object, MCP_INVERSE_META) ? object[MCP_INVERSE_META] : undefined;
  if (raw === undefined) return { leaseBytes: undefined, lease: undefined, inversePayload };
  // Shape first: a lone surrogate or a non-JSON value in a member is ERR_LEASE_MALFORMED (docs/leases.md
  // §1), as it is in a header, not the JCS encoder's jcs_unsupported_value.
  const lease = leaseFromJson(raw);
  return { leaseBytes: leaseJcs(raw), lease, inversePayload };
}

function leaseJcs(raw: JsonValue): Buffer {
  try {
    return canonicalBytes(raw);
  } catch (error) {
    if (!isBatonError(error)) throw error;
    throw new BatonError('ERR_LEASE_MALFORMED', 'lease has no JCS', { json: error.code }, { cause: error });
  }
}
