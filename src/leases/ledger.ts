/**
 * The port a system of record implements to persist what the plugin decides. `transact` takes a
 * synchronous function on purpose: the fence check and the write it guards run with no await in
 * between, inside one atomic transaction that excludes every other writer (the reference adapter
 * uses a SQLite IMMEDIATE transaction, src/sor/sqlite-ledger.ts). That is the draft's CAS.
 */
import type { EscrowRecord, LeaseRecord, ResourceRecord, ShadowRecord, SnapshotRecord } from './model.js';
import type { Write } from './outcome.js';
import type { Receipt } from './receipts.js';

export interface LedgerTx {
  resource(target: string): ResourceRecord | undefined;
  lease(leaseId: string): LeaseRecord | undefined;
  snapshot(leaseId: string): SnapshotRecord | undefined;
  shadow(leaseId: string): ShadowRecord | undefined;
  /** Escrowed mutations whose approval deadline is before `nowMs`. */
  dueEscrows(nowMs: number): EscrowRecord[];
  write(change: Write): void;
  /** Append-only: receipts are never updated or deleted. */
  appendAudit(receipt: Receipt): void;
  /**
   * Optional: record the refusal of a request that carried no verified signature in a bounded store
   * (say, the last N and a count), so unauthenticated traffic cannot grow the audit log without
   * bound. Without it such refusals are appended to the audit log like any other.
   */
  noteUnauthenticated?(receipt: Receipt): void;
}

export interface AuditEntry {
  seq: number;
  receipt: Receipt;
}

export interface LeaseLedger {
  /**
   * One serialized, all-or-nothing transaction; a throw rolls every write back. When another writer
   * holds the lock past the ledger's own wait, throw `BatonError` `store_busy`: LeaseService answers
   * it with a typed, retryable 503 and a signed (unaudited) rejection receipt.
   */
  transact<T>(fn: (tx: LedgerTx) => T): T;
  audit(afterSeq: number, limit: number): AuditEntry[];
  pendingEscrows(): EscrowRecord[];
}
