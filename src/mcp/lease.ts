/**
 * A PTCL compensation lease carried in the call's `_meta.compensationLease` (src/leases/carriage.ts):
 * verified here against the gateway's trusted lease keys before anything is created, and forwarded
 * to the upstream with its staged inverse payload (required: a lease without one is refused). The system of record still checks the fence
 * epoch and the pre-image itself (draft §4): the gateway cannot see them.
 */
import { BatonError } from '../core/errors.js';
import type { JsonObject } from '../core/json.js';
import {
  leaseFromMcpMeta,
  MCP_INVERSE_META,
  MCP_LEASE_META,
  verifyLease,
  type KeyResolver,
} from '../leases/index.js';

/** The `_meta` members to forward upstream: the lease and its inverse payload, or nothing. */
export function checkLease(meta: JsonObject, keys: KeyResolver | undefined, nowMs: number): JsonObject {
  const carried = leaseFromMcpMeta(meta);
  if (carried.lease === undefined) {
    if (carried.inversePayload !== undefined) {
      throw new BatonError(
        'ERR_LEASE_MALFORMED',
        `_meta.${MCP_INVERSE_META} without _meta.${MCP_LEASE_META}`,
      );
    }
    return {};
  }
  if (keys === undefined) {
    throw new BatonError(
      'ERR_LEASE_SIGNATURE',
      'this gateway has no trusted lease keys (--lease-key) to verify the lease',
    );
  }
  const staged = carried.inversePayload;
  // Draft §4 rule 3: the inverse payload is pre-staged and bound by its JCS hash. None staged is
  // ERR_INVERSE_PAYLOAD_MISMATCH, as the system of record answers it (`{ staged: undefined }`).
  const verdict = verifyLease(carried.lease, { nowMs, keys, inverse: { staged } });
  if (!verdict.ok)
    throw new BatonError(verdict.rejection.code, verdict.rejection.message, { rule: verdict.rejection.rule });
  // verifyLease refused a lease with none staged, so `staged` is here.
  return { [MCP_LEASE_META]: meta[MCP_LEASE_META] ?? null, [MCP_INVERSE_META]: staged ?? null };
}
