// Draft §4 rule 1: the clock is checked against the lease's times "prior to applying the mutation",
// so the system of record must read it once it holds the write lock, not before waiting for it.
// Another connection (lock-holder.ts, in a worker thread) holds BEGIN IMMEDIATE on the same SQLite
// file while the lease's time runs out; the command must see the time at which it got the lock.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import type { Clock } from '../../src/core/clock.js';
import { sha256HexTag } from '../../src/core/digest.js';
import { generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { formatRfc3339 } from '../../src/core/time.js';
import {
  LeaseService,
  buildLease,
  keyRing,
  signLease,
  signRecoveryOrder,
  verifyReceipt,
  type Answer,
  type Lease,
  type RecoveryMode,
} from '../../src/leases/index.js';
import { SEED, inventoryModel } from '../../src/sor/inventory.js';
import { SqliteLeaseLedger } from '../../src/sor/sqlite-ledger.js';
import { GO, READ, RELEASED, type LockHolderInput } from './lock-holder.js';

const T0 = Date.parse('2026-11-29T18:00:00.000Z');
const TARGET = 'http://sor.test/api/v2/inventory/allocations/99281';
const allocate = { op: 'allocate', quantity: 3 };
const release = { op: 'release', quantity: 3 };

/** Reads `now` until the other connection releases the lock, `later` from then on. */
class LockClock implements Clock {
  now = T0;
  later = T0;
  readsWhileHeld = 0;
  cells: Int32Array | undefined;

  wallMs(): number {
    const cells = this.cells;
    if (cells === undefined) return this.now;
    Atomics.store(cells, READ, 1);
    Atomics.notify(cells, READ);
    if (Atomics.load(cells, RELEASED) === 1) return this.later;
    this.readsWhileHeld++;
    return this.now;
  }

  monotonicMs(): number {
    return 0;
  }
}

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'baton-lock-wait-'));
  const dbPath = join(dir, 'sor.db');
  const ledger = new SqliteLeaseLedger(dbPath);
  const seed = SEED[0]!;
  ledger.seed(TARGET, seed.allocation, seed.epoch, T0);
  const clock = new LockClock();
  const gateway = generateEd25519KeyPair();
  const sor = generateEd25519KeyPair();
  const service = new LeaseService({
    ledger,
    model: inventoryModel,
    clock,
    signer: { privateKey: sor.privateKey, kid: sor.kid },
    trusted: keyRing([gateway.publicKey]),
  });
  const gatewayKey = { privateKey: gateway.privateKey, kid: gateway.kid };
  const lease = (mode: RecoveryMode): Lease => {
    const resource = service.read(TARGET)!;
    const draft = buildLease({
      target: TARGET,
      mode,
      tReqMs: 450,
      tGrantedMs: 2000,
      currentEpoch: resource.epoch,
      preImage: resource.state,
      inversePayload: release,
      traceAnchorRef: sha256HexTag('trace'),
      issuedAtMs: clock.now,
      ttlMs: 30_000,
    });
    return signLease(draft, gatewayKey);
  };
  const mutate = (l: Lease): Answer =>
    service.mutate(TARGET, Buffer.from(JSON.stringify(l)), { operation: allocate, inversePayload: release });
  const receiptKeys = keyRing([sor.publicKey]);
  const audited = (answer: Answer): boolean =>
    ledger.audit(0, 1000).some((e) => e.receipt.receipt_id === answer.receipt.receipt_id);
  /** Run `command` while another connection holds the write lock; it releases at time `later`. */
  async function whileLocked(later: number, command: () => Answer): Promise<Answer> {
    const cells = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
    // Under tsx the worker needs the .ts file (it inherits the loader); compiled tests run .js.
    const ts = import.meta.url.endsWith('.ts');
    // The holder waits this long for a clock read before it lets go. Code that reads the clock
    // before taking the lock reads it within this window (and so before RELEASED) unless this
    // thread stalls longer than it between GO and the read: a second leaves no such stall plausible.
    const input: LockHolderInput = { dbPath, cells: cells.buffer, fallbackMs: 1000 };
    const worker = new Worker(new URL(ts ? './lock-holder.ts' : './lock-holder.js', import.meta.url), {
      workerData: input,
    });
    const exited = once(worker, 'exit');
    const [first] = (await once(worker, 'message')) as [string];
    assert.equal(first, 'locked');
    clock.cells = cells;
    clock.later = later;
    clock.readsWhileHeld = 0;
    Atomics.store(cells, GO, 1);
    Atomics.notify(cells, GO);
    try {
      return command();
    } finally {
      await exited;
      clock.cells = undefined;
      clock.now = later;
    }
  }
  return {
    service,
    ledger,
    clock,
    gatewayKey,
    lease,
    mutate,
    receiptKeys,
    audited,
    whileLocked,
    close() {
      ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test('a lease that expires while another connection holds the write lock is refused, at the time the lock was had', async (t) => {
  const s = setup();
  t.after(() => s.close());
  const before = s.service.read(TARGET)!;
  const lease = s.lease('COMPENSATING_ACTION');
  const late = Date.parse(lease.expires_at) + 1;
  const answer = await s.whileLocked(late, () => s.mutate(lease));
  assert.equal(s.clock.readsWhileHeld, 0, 'the clock is not read before the lock is held');
  assert.equal(answer.rejection?.code, 'ERR_LEASE_EXPIRED');
  assert.equal(answer.status, 409);
  assert.equal(answer.receipt.issued_at, formatRfc3339(late), 'the receipt is not backdated');
  assert.ok(verifyReceipt(answer.receipt, s.receiptKeys));
  assert.ok(s.audited(answer), 'the refusal is audited');
  assert.deepEqual(s.service.read(TARGET), before, 'nothing applied');
  assert.equal(s.service.leaseRecord(lease.lease_id), undefined, 'the lease_id is not consumed');

  // A lease still valid when the lock comes commits, and its receipt carries that instant.
  const fresh = s.lease('COMPENSATING_ACTION');
  const inTime = s.clock.now + 5000;
  const ok = await s.whileLocked(inTime, () => s.mutate(fresh));
  assert.equal(ok.status, 200, String(ok.rejection?.code));
  assert.equal(ok.receipt.issued_at, formatRfc3339(inTime));
  const committed = s.service.leaseRecord(fresh.lease_id)!;
  assert.equal(committed.acceptedAtMs, inTime, 'the recovery window starts when the lock was had');
  assert.equal(committed.windowEndsAtMs, inTime + fresh.t_granted_ms);
});

test('escrow approval and recovery decide their windows on the clock read under the lock', async (t) => {
  const s = setup();
  t.after(() => s.close());
  const held = s.lease('HUMAN_ESCROW');
  assert.equal(s.mutate(held).status, 202);
  const before = s.service.read(TARGET)!;
  const approveBy = s.service.leaseRecord(held.lease_id)!.windowEndsAtMs;
  const approval = await s.whileLocked(approveBy + 1, () => s.service.approve(held.lease_id, TARGET));
  assert.equal(s.clock.readsWhileHeld, 0);
  assert.equal(approval.rejection?.code, 'ERR_ESCROW_LAPSED');
  assert.equal(approval.receipt.issued_at, formatRfc3339(approveBy + 1));
  assert.ok(s.audited(approval));
  assert.deepEqual(s.service.read(TARGET), before, 'the held mutation was not applied');
  assert.equal(s.service.leaseRecord(held.lease_id)!.status, 'lapsed');

  const committed = s.lease('COMPENSATING_ACTION');
  assert.equal(s.mutate(committed).status, 200);
  const after = s.service.read(TARGET)!;
  const rec = s.service.leaseRecord(committed.lease_id)!;
  const order = Buffer.from(JSON.stringify(signRecoveryOrder(committed.lease_id, s.clock.now, s.gatewayKey)));
  const closed = await s.whileLocked(rec.windowEndsAtMs + 1, () =>
    s.service.recover(committed.lease_id, order, TARGET),
  );
  assert.equal(s.clock.readsWhileHeld, 0);
  assert.equal(closed.rejection?.code, 'ERR_RECOVERY_WINDOW');
  assert.equal(closed.receipt.issued_at, formatRfc3339(rec.windowEndsAtMs + 1));
  assert.deepEqual(s.service.read(TARGET), after, 'no recovery after the window');
  assert.equal(s.service.leaseRecord(committed.lease_id)!.status, 'committed');
});
