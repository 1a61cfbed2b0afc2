/**
 * The imperative shell of the system of record (DESIGN.md §1 service.ts shape): each command parses
 * its input outside the ledger, then, inside one ledger transaction, reads the clock once, verifies,
 * decides and writes. The clock is read only once the transaction holds the write lock: taking it may
 * wait (SQLite's busy timeout), and draft §4 rule 1 asks that the clock not have passed the lease's
 * expiry "prior to applying the mutation" — a reading taken before the wait would let a lease that
 * expired while another writer held the lock commit, under a backdated receipt. Every answer carries a
 * signed receipt, and every receipt is appended to the audit log in the same transaction as the change
 * it reports (draft §5: auditable rejection receipts).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { sha256HexTag, type Sha256HexTag } from '../core/digest.js';
import { BatonError, ERROR_CODES, isBatonError } from '../core/errors.js';
import { canonicalize } from '../core/jcs.js';
import type { JsonValue } from '../core/json.js';
import type { AuditEntry, LeaseLedger, LedgerTx } from './ledger.js';
import { admit, approve, lapse } from './machine.js';
import type { EscrowRecord, Lease, LeaseRecord, Rejection, ResourceRecord, ShadowRecord } from './model.js';
import { reject, type Outcome, type ResourceModel } from './outcome.js';
import { parseLease } from './parse.js';
import { rejectionDraft, signReceipt, type Receipt, type ReceiptDraft } from './receipts.js';
import { recover } from './recover.js';
import { parseRecoveryOrder, verifyRecoveryOrder, type RecoveryOrder } from './recovery-order.js';
import type { KeyResolver, SigningKey } from './signing.js';
import { verifyLease, verifyLeaseState } from './verify.js';

export interface LeaseServiceOptions {
  ledger: LeaseLedger;
  model: ResourceModel;
  clock: Clock;
  /** The system of record's own key: it signs every receipt. */
  signer: SigningKey;
  /** Gateways whose leases this system of record honours. */
  trusted: KeyResolver;
  newReceiptId?: () => string;
}

export interface Answer {
  status: number;
  receipt: Receipt;
  resource: ResourceRecord | undefined;
  rejection?: Rejection;
}

/** What the gateway staged beside its lease: the operation and the inverse payload. */
export interface StagedRequest {
  operation: JsonValue | undefined;
  inversePayload: JsonValue | undefined;
  /** Why the request body could not be read, if it could not. */
  defect?: string;
}

interface Facts {
  target: string;
  leaseId: string | null;
  leaseHash: Sha256HexTag | null;
  resource: ResourceRecord | undefined;
  /**
   * Set on a recovery: its refusals before the order's signature verified (no such lease, a bad
   * signature) are unauthenticated, recorded in the bounded table (#refuseIn).
   */
  unauthenticatedRecovery?: boolean;
}

export class LeaseService {
  readonly #o: LeaseServiceOptions;

  constructor(options: LeaseServiceOptions) {
    this.#o = options;
  }

  read(target: string): ResourceRecord | undefined {
    return this.#o.ledger.transact((tx) => tx.resource(target));
  }

  leaseRecord(leaseId: string): LeaseRecord | undefined {
    return this.#o.ledger.transact((tx) => tx.lease(leaseId));
  }

  shadow(leaseId: string): ShadowRecord | undefined {
    return this.#o.ledger.transact((tx) => tx.shadow(leaseId));
  }

  audit(afterSeq: number, limit: number): AuditEntry[] {
    return this.#o.ledger.audit(afterSeq, limit);
  }

  /** Pending escrows, after letting the overdue ones lapse. */
  pendingEscrows(): EscrowRecord[] {
    this.sweep();
    return this.#o.ledger.pendingEscrows();
  }

  /** A leased mutation of `target` (draft §3, §4): commit, shadow write or escrow hold — or a refusal. */
  mutate(target: string, leaseBytes: Uint8Array | undefined, staged: StagedRequest): Answer {
    const facts: Facts = { target, leaseId: null, leaseHash: null, resource: undefined };
    return this.#unlessBusy(facts, () => this.#mutate(facts, leaseBytes, staged));
  }

  #mutate(facts: Facts, leaseBytes: Uint8Array | undefined, staged: StagedRequest): Answer {
    const { target } = facts;
    if (leaseBytes === undefined) {
      return this.#refuse(
        facts,
        reject('ERR_LEASE_MALFORMED', 'CRYPTOGRAPHIC_BINDING', 'no lease presented'),
      );
    }
    facts.leaseHash = sha256HexTag(leaseBytes);
    let lease: Lease;
    try {
      lease = parseLease(leaseBytes);
    } catch (error) {
      if (!isBatonError(error, 'ERR_LEASE_MALFORMED')) throw error;
      return this.#refuse(facts, reject(error.code, 'CRYPTOGRAPHIC_BINDING', error.message));
    }
    facts.leaseId = lease.lease_id;
    const { operation, inversePayload } = staged;
    return this.#o.ledger.transact((tx) => {
      const nowMs = this.#now();
      const verdict = verifyLease(lease, { nowMs, keys: this.#o.trusted, target });
      if (!verdict.ok && verdict.rejection.code !== 'ERR_LEASE_SIGNATURE') {
        // Draft §5 (replay): a retry of the very lease already accepted — its answer lost — is told
        // `replayed` whatever else has changed since (expiry included), with the resource's current
        // epoch and where its record is, not `expired` with no epoch (docs/leases.md §3).
        const prior = tx.lease(lease.lease_id);
        if (prior !== undefined && canonicalize(prior.lease) === canonicalize(lease)) {
          facts.resource = tx.resource(prior.target);
          const why = `lease_id was already used: this lease was accepted (${prior.status}); see GET /ptcl/leases/{lease_id} and its receipt in the audit log`;
          return this.#refuseIn(tx, facts, reject('ERR_LEASE_REPLAYED', 'LEASE_REPLAY', why), nowMs);
        }
      }
      if (!verdict.ok) return this.#refuseIn(tx, facts, verdict.rejection, nowMs);
      if (staged.defect !== undefined) {
        return this.#refuseIn(tx, facts, reject('input_invalid', 'RESOURCE_SEMANTICS', staged.defect), nowMs);
      }
      const resource = (facts.resource = tx.resource(target));
      if (resource === undefined)
        return this.#refuseIn(tx, facts, reject('not_found', 'TARGET_BINDING', 'no such resource'), nowMs);
      // Every state fact, required by verifyLeaseState: none of checks 7–10 can be skipped here.
      const state = ledgerFacts(() =>
        verifyLeaseState(verdict.lease, {
          epoch: resource.epoch,
          stateDigest: resource.digest,
          inverse: { staged: inversePayload },
          replayed: tx.lease(lease.lease_id) !== undefined,
        }),
      );
      if (!state.ok) return this.#refuseIn(tx, facts, state.rejection, nowMs);
      if (operation === undefined || inversePayload === undefined) {
        return this.#refuseIn(
          tx,
          facts,
          reject('input_invalid', 'RESOURCE_SEMANTICS', 'no operation staged'),
          nowMs,
        );
      }
      const outcome = admit(verdict.lease, resource, { operation, inversePayload }, nowMs, this.#o.model);
      return this.#finish(tx, outcome, facts, nowMs);
    });
  }

  /**
   * Run a lease's recovery on a signed recovery order (recovery-order.ts). `endpointUri` is the system
   * of record's own URI of the endpoint, named by refusals that find no lease.
   */
  recover(leaseId: string, orderBytes: Uint8Array, endpointUri: string): Answer {
    const facts: Facts = { target: endpointUri, leaseId, leaseHash: null, resource: undefined };
    return this.#unlessBusy(facts, () => this.#recover(facts, leaseId, orderBytes));
  }

  #recover(facts: Facts, leaseId: string, orderBytes: Uint8Array): Answer {
    facts.unauthenticatedRecovery = true;
    let order: RecoveryOrder;
    try {
      order = parseRecoveryOrder(orderBytes);
    } catch (error) {
      if (!isBatonError(error, 'ERR_LEASE_MALFORMED')) throw error;
      return this.#refuse(facts, reject(error.code, 'CRYPTOGRAPHIC_BINDING', error.message));
    }
    if (order.lease_id !== leaseId) {
      return this.#refuse(
        facts,
        reject('ERR_LEASE_MALFORMED', 'CRYPTOGRAPHIC_BINDING', 'order names another lease'),
      );
    }
    return this.#withLease(facts, (tx, rec, resource, nowMs) => {
      const checked = verifyRecoveryOrder(order, rec.lease, this.#o.trusted, nowMs);
      if (!checked.ok) return { kind: 'refused', rejection: checked.rejection, writes: [] };
      const view = { resource, snapshot: tx.snapshot(leaseId), shadow: tx.shadow(leaseId) };
      return recover(rec, view, nowMs, this.#o.model);
    });
  }

  /** An operator approves a HUMAN_ESCROW mutation (the caller has authenticated the operator). */
  approve(leaseId: string, endpointUri: string): Answer {
    const facts: Facts = { target: endpointUri, leaseId, leaseHash: null, resource: undefined };
    return this.#unlessBusy(facts, () =>
      this.#withLease(facts, (_tx, rec, resource, nowMs) =>
        approve(rec, resource, nowMs, this.#o.model, this.#o.trusted),
      ),
    );
  }

  /**
   * A signed, audited refusal of a request that reached no command: one whose body the HTTP layer
   * refused before reading it (plugin.ts). `endpointUri` is the system of record's own URI of the
   * endpoint; nothing but the receipt is written. `authenticated`: the request passed operator
   * authentication, so its refusal goes to the full audit log, not the bounded table (#refuseIn).
   */
  refuseRequest(
    endpointUri: string,
    leaseId: string | null,
    rejection: Rejection,
    { authenticated = false }: { authenticated?: boolean } = {},
  ): Answer {
    const facts: Facts = { target: endpointUri, leaseId, leaseHash: null, resource: undefined };
    return this.#unlessBusy(facts, () => this.#refuse(facts, rejection, !authenticated));
  }

  /** Let every escrowed mutation whose window has passed lapse; returns the lapse receipts. */
  sweep(): Receipt[] {
    return this.#o.ledger.transact((tx) => {
      const nowMs = this.#now();
      return tx.dueEscrows(nowMs).flatMap((escrow) => {
        const rec = tx.lease(escrow.leaseId);
        if (rec === undefined) return [];
        const facts: Facts = {
          target: rec.target,
          leaseId: rec.leaseId,
          leaseHash: null,
          resource: tx.resource(rec.target),
        };
        return [this.#finish(tx, lapse(rec), facts, nowMs).receipt];
      });
    });
  }

  /**
   * The clock; called only inside `transact`, once the write lock is held (see the top of this file).
   * A reading that is not Unix milliseconds as a safe integer (NaN, a Date, seconds as a fraction) is
   * the system of record's own fault: it throws `internal` — rolling the transaction back — because
   * every comparison with NaN is false and would let an expired lease commit (draft §4 rule 1).
   */
  #now(): number {
    const nowMs: unknown = this.#o.clock.wallMs();
    if (!Number.isSafeInteger(nowMs)) {
      throw new BatonError('internal', 'the clock returned no Unix milliseconds (safe integer)', {
        member: 'clock.wallMs',
      });
    }
    return nowMs as number;
  }

  /**
   * Run a command; when the ledger could not take its write lock in time (`store_busy`, thrown by
   * `transact` before anything was written) answer 503 with a signed rejection receipt — signing needs
   * no database — that is, alone among receipts, not in the audit log: the log is what could not be
   * written. The client may retry (the code is retryable; nothing was consumed or changed).
   */
  #unlessBusy(facts: Facts, run: () => Answer): Answer {
    try {
      return run();
    } catch (error) {
      if (!isBatonError(error, 'store_busy')) throw error;
      const rejection = reject(
        'store_busy',
        'RESOURCE_SEMANTICS',
        'the system of record’s database is busy (another writer holds the lock); nothing was changed, retry',
      );
      const draft = rejectionDraft(rejection, {
        leaseId: facts.leaseId,
        epoch: null,
        leaseHash: facts.leaseHash,
      });
      const receipt = this.#sign(draft, facts.target, this.#now());
      return { status: receiptStatus(rejection), receipt, resource: undefined, rejection };
    }
  }

  #withLease(
    facts: Facts,
    decide: (tx: LedgerTx, rec: LeaseRecord, resource: ResourceRecord, nowMs: number) => Outcome,
  ): Answer {
    return this.#o.ledger.transact((tx) => {
      const nowMs = this.#now();
      const rec = tx.lease(facts.leaseId ?? '');
      if (rec === undefined) {
        const rejection = reject('not_found', 'LEASE_REPLAY', 'no such lease');
        return this.#refuseIn(tx, facts, rejection, nowMs, facts.unauthenticatedRecovery === true);
      }
      facts.target = rec.target;
      const resource = (facts.resource = tx.resource(rec.target));
      if (resource === undefined)
        return this.#refuseIn(tx, facts, reject('not_found', 'TARGET_BINDING', 'no such resource'), nowMs);
      return this.#finish(tx, decide(tx, rec, resource, nowMs), facts, nowMs);
    });
  }

  #finish(tx: LedgerTx, outcome: Outcome, facts: Facts, nowMs: number): Answer {
    for (const change of outcome.writes) tx.write(change);
    if (outcome.kind === 'refused') return this.#refuseIn(tx, facts, outcome.rejection, nowMs);
    const receipt = this.#sign(outcome.receipt, facts.target, nowMs);
    tx.appendAudit(receipt);
    return { status: outcome.status, receipt, resource: outcome.resource };
  }

  /** A refusal before any signature verified (no lease, unparseable lease or order, body unread). */
  #refuse(facts: Facts, rejection: Rejection, unauthenticated = true): Answer {
    return this.#o.ledger.transact((tx) =>
      this.#refuseIn(tx, facts, rejection, this.#now(), unauthenticated),
    );
  }

  /**
   * Draft §5: a refusal is an auditable, signed receipt. Those of requests that carry no verified
   * signature (no lease, an unparseable one, a bad signature, an unknown lease id for recovery, a body
   * refused unread) can be sent by anyone without limit, so the ledger keeps them in a bounded table
   * (`LedgerTx.noteUnauthenticated`, the last N) rather than the append-only log; every refusal of a
   * lease or order whose signature verified stays in the full audit log (docs/leases.md §6).
   */
  #refuseIn(
    tx: LedgerTx,
    facts: Facts,
    rejection: Rejection,
    nowMs: number,
    unauthenticated = false,
  ): Answer {
    const epoch = facts.resource?.epoch ?? null;
    const draft = rejectionDraft(rejection, { leaseId: facts.leaseId, epoch, leaseHash: facts.leaseHash });
    const receipt = this.#sign(draft, facts.target, nowMs);
    // A signature that does not verify authenticates nothing, wherever it is met (lease or order).
    const anonymous = unauthenticated || rejection.code === 'ERR_LEASE_SIGNATURE';
    if (anonymous && tx.noteUnauthenticated !== undefined) tx.noteUnauthenticated(receipt);
    else tx.appendAudit(receipt);
    const status = receiptStatus(rejection);
    return { status, receipt, resource: facts.resource, rejection };
  }

  #sign(draft: ReceiptDraft, target: string, nowMs: number): Receipt {
    const receiptId = this.#o.newReceiptId?.() ?? `urn:uuid:${randomUUID()}`;
    return signReceipt(draft, { receiptId, nowMs, target }, this.#o.signer);
  }
}

function receiptStatus(rejection: Rejection): number {
  return ERROR_CODES[rejection.code].status;
}

/**
 * The state facts come from the system of record's own ledger, not from the client: a malformed one
 * (a PostgreSQL BIGINT read back as text, an upper-case digest) is the system of record's fault,
 * `internal` — thrown, so the transaction rolls back — never the client's `input_invalid`.
 */
function ledgerFacts<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (!isBatonError(error) || error.code !== 'input_invalid') throw error;
    const why = `the lease ledger returned a resource record that is not well-formed: ${error.message}`;
    throw new BatonError('internal', why, {}, { cause: error });
  }
}
