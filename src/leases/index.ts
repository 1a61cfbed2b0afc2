// The public surface of the leases context (PTCL, compensation-leases-cas-fencing.txt).
export * from './model.js';
export * from './signing.js';
export { leaseFromJson, parseLease, parseLeaseJson, unsignedLeaseFromJson } from './parse.js';
export * from './build.js';
export * from './verify.js';
export * from './receipts.js';
export * from './recovery-order.js';
export * from './carriage.js';
export type { Outcome, ResourceModel, Staged, Write } from './outcome.js';
export { admit, approve, lapse } from './machine.js';
export { recover, type RecoveryView } from './recover.js';
export type { AuditEntry, LeaseLedger, LedgerTx } from './ledger.js';
export * from './service.js';
export * from './plugin.js';
