// The public surface of the leases context (PTCL, compensation-leases-cas-fencing.txt), the package's
// `baton-aoc/leases` entry. It loads no native module, Fastify or database driver at run time
// (plugin.ts imports Fastify for types only). Every verifier here answers with a verdict or a boolean:
// the internal checks that answer "undefined when valid" (checkDocumentSignature) stay unexported.
export * from './model.js';
export {
  SIGNATURE_ALG,
  keyRing,
  signDocument,
  signatureOver,
  signingInput,
  signingKeyFrom,
  type KeyResolver,
  type SigningKey,
} from './signing.js';
export { leaseFromJson, parseLease, parseLeaseJson, unsignedLeaseFromJson } from './parse.js';
export * from './build.js';
export {
  LEASE_CHECKS,
  verifyLease,
  verifyLeaseState,
  verifyLeaseText,
  type LeaseCheckName,
  type LeaseChecks,
  type LeaseStateFacts,
  type LeaseVerdict,
} from './verify.js';
export * from './receipts.js';
export * from './recovery-order.js';
export * from './carriage.js';
export type { Outcome, ResourceModel, Staged, Write } from './outcome.js';
export { admit, approve, lapse } from './machine.js';
export { recover, type RecoveryView } from './recover.js';
export type { AuditEntry, LeaseLedger, LedgerTx } from './ledger.js';
export * from './service.js';
export * from './plugin.js';
// What a system of record built on LeaseService needs besides the above: its clock, the error type
// its ports throw and callers catch, the digest a ResourceRecord carries and the JSON types of states.
export type { Clock } from '../core/clock.js';
export { systemClock } from '../core/clock.js';
export { BatonError, isBatonError, type BatonErrorCode } from '../core/errors.js';
export { sha256HexTagJcs, type Sha256HexTag } from '../core/digest.js';
export type { JsonObject, JsonValue } from '../core/json.js';
