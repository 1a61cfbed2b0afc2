/**
 * The verifier API as an integrator calls it (`baton-aoc/leases`): bad facts are typed errors, never
 * a verdict (a comparison with NaN is false, so an unvalidated clock accepted expired leases); the ok
 * verdict names the checks that ran; junk receipts are false; the internal undefined-when-valid checks
 * are not exported; a key resolver returning a wrong key refuses. Real Ed25519 keys and signatures.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { sha256HexTag } from '../../src/core/digest.js';
import * as entry from '../../src/leases/index.js';
import { SqliteLeaseLedger } from '../../src/sor/sqlite-ledger.js';
import {
  BatonError,
  LEASE_CHECKS,
  LeaseService,
  buildLease,
  decodeReceiptHeader,
  keyRing,
  leaseFromMcpMeta,
  sha256HexTagJcs,
  signLease,
  signRecoveryOrder,
  signReceipt,
  signingKeyFrom,
  verifyLease,
  verifyLeaseState,
  verifyLeaseText,
  verifyReceipt,
  verifyRecoveryOrder,
  withMcpLease,
  type Clock,
  type KeyResolver,
  type Lease,
  type LeaseChecks,
  type LeaseLedger,
  type LeaseStateFacts,
  type VerifiedLease,
} from '../../src/leases/index.js';

const NOW = Date.parse('2026-11-29T18:00:00.000Z');
const gw = generateEd25519KeyPair();
const gwKey = signingKeyFrom(gw.privateKey);
const keys = keyRing([gw.publicKey]);
const TARGET = 'https://sor.example/api/items/1';
const STATE = { qty: 10 };
const INVERSE = { op: 'sub', n: 1 };

function lease(issuedAtMs = NOW, ttlMs = 30_000): Lease {
  return signLease(
    buildLease({
      target: TARGET,
      mode: 'COMPENSATING_ACTION',
      tReqMs: 100,
      tGrantedMs: 60_000,
      currentEpoch: 5,
      preImage: STATE,
      inversePayload: INVERSE,
      traceAnchorRef: sha256HexTag('trace'),
      issuedAtMs,
      ttlMs,
    }),
    gwKey,
  );
}

const facts = (): LeaseStateFacts => ({
  epoch: 5,
  stateDigest: sha256HexTagJcs(STATE),
  inverse: { staged: INVERSE },
  replayed: false,
});
const all = (over: Record<string, unknown> = {}): LeaseChecks => ({
  nowMs: NOW,
  keys,
  target: TARGET,
  ...facts(),
  ...over,
});

function factError(fn: () => unknown): string {
  try {
    const v = fn() as { ok: boolean };
    return v.ok ? 'OK (accepted)' : 'refused';
  } catch (error) {
    assert.ok(error instanceof BatonError, `a BatonError, not ${String(error)}`);
    assert.equal(error.code, 'input_invalid');
    return `input_invalid:${String(error.details['member'])}`;
  }
}

test('a clock reading that is not Unix milliseconds is input_invalid, never an accepted expired or future lease', () => {
  const expired = lease(NOW - 3_600_000, 1000);
  const future = lease(NOW + 3_600_000);
  // The reviewer's readings: NaN, a forgotten value, the clock function itself, a Date, seconds.
  const bad: unknown[] = [
    NaN,
    undefined,
    Date.now,
    new Date(NOW),
    NOW / 1000 + 0.5,
    Infinity,
    '1764439200000',
  ];
  for (const nowMs of bad) {
    for (const l of [expired, future]) {
      assert.equal(
        factError(() => verifyLease(l, all({ nowMs }))),
        'input_invalid:nowMs',
        String(nowMs),
      );
      assert.equal(
        factError(() => verifyLeaseText(JSON.stringify(l), all({ nowMs }))),
        'input_invalid:nowMs',
      );
    }
  }
  // The same leases under a real clock reading are refused with their own codes.
  assert.deepEqual(verifyLease(expired, all()), {
    ok: false,
    rejection: {
      code: 'ERR_LEASE_EXPIRED',
      rule: 'RECOVERY_WINDOW_INEQUALITY',
      message: 'lease has expired',
    },
  });
  const skew = verifyLease(future, all());
  assert.equal(!skew.ok && skew.rejection.code, 'ERR_CLOCK_SKEW');
});

test('state facts of the wrong form are input_invalid naming the member, not a passed fence', () => {
  const l = lease();
  const cases: Array<[string, unknown, string]> = [
    ['epoch', NaN, 'input_invalid:epoch'],
    ['epoch', null, 'input_invalid:epoch'],
    ['epoch', 9n, 'input_invalid:epoch'],
    ['epoch', '10', 'input_invalid:epoch'],
    ['epoch', -1, 'input_invalid:epoch'],
    ['epoch', 4.5, 'input_invalid:epoch'],
    ['stateDigest', 'sha256:ABC', 'input_invalid:stateDigest'],
    ['stateDigest', null, 'input_invalid:stateDigest'],
    ['replayed', 'no', 'input_invalid:replayed'],
    ['replayed', null, 'input_invalid:replayed'],
    ['inverse', null, 'input_invalid:inverse'],
    ['target', 42, 'input_invalid:target'],
    ['keys', keyRing([]) && {}, 'input_invalid:keys'],
  ];
  for (const [member, value, want] of cases) {
    assert.equal(
      factError(() => verifyLease(l, all({ [member]: value }))),
      want,
      `${member}=${String(value)}`,
    );
  }
  // Well-formed facts still decide: the epoch at the fence is stale.
  const stale = verifyLease(l, all({ epoch: 6 }));
  assert.equal(!stale.ok && stale.rejection.code, 'ERR_STALE_FENCE_EPOCH');
});

test('the ok verdict lists the checks that ran; verifyLeaseState requires every state fact', () => {
  const l = lease();
  const offline = verifyLease(l, { nowMs: NOW, keys });
  assert.deepEqual(offline.ok && offline.checked, [
    'signature',
    'recovery_mode',
    'recovery_window',
    'clock_skew',
    'expiry',
  ]);
  const full = verifyLease(l, all());
  assert.deepEqual(full.ok && [...full.checked].sort(), Object.keys(LEASE_CHECKS).sort());
  const partial = verifyLease(l, { nowMs: NOW, keys, epoch: 5 });
  assert.ok(partial.ok && partial.checked.includes('fence_epoch') && !partial.checked.includes('pre_image'));

  const verified = l as VerifiedLease;
  const state = verifyLeaseState(verified, facts());
  assert.deepEqual(state.ok && state.checked, ['inverse_payload', 'replay', 'fence_epoch', 'pre_image']);
  for (const member of ['epoch', 'stateDigest', 'inverse', 'replayed'] as const) {
    const { [member]: _left, ...rest } = facts();
    assert.equal(
      factError(() => verifyLeaseState(verified, rest as LeaseStateFacts)),
      `input_invalid:${member}`,
    );
  }
  const replay = verifyLeaseState(verified, { ...facts(), replayed: true });
  assert.equal(!replay.ok && replay.rejection.code, 'ERR_LEASE_REPLAYED');
});

test('the package entry exports no check that answers undefined when valid; recovery orders get a verdict', () => {
  for (const name of ['checkDocumentSignature', 'checkRecoveryOrder', 'checkAgainstState']) {
    assert.equal(name in entry, false, `${name} is not exported`);
  }
  const l = lease();
  const good = verifyRecoveryOrder(signRecoveryOrder(l.lease_id, NOW, gwKey), l, keys, NOW);
  assert.equal(good.ok, true);
  const evil = signingKeyFrom(generateEd25519KeyPair().privateKey);
  const forged = verifyRecoveryOrder(
    signRecoveryOrder(l.lease_id, NOW, evil),
    l,
    keyRing([evil.privateKey]),
    NOW,
  );
  assert.deepEqual(forged.ok ? 'accepted' : forged.rejection.code, 'ERR_LEASE_SIGNATURE');
  assert.equal(
    factError(() => verifyRecoveryOrder(signRecoveryOrder(l.lease_id, NOW, gwKey), l, keys, NaN)),
    'input_invalid:nowMs',
  );
});

test('verifyReceipt answers false for junk, including what decodeReceiptHeader returns for it', () => {
  const sor = signingKeyFrom(generateEd25519KeyPair().privateKey);
  const receiptKeys = keyRing([sor.privateKey]);
  const receipt = signReceipt(
    {
      receipt_type: 'rejection',
      lease_id: null,
      code: 'ERR_LEASE_MALFORMED',
      rule: 'CRYPTOGRAPHIC_BINDING',
      current_epoch: null,
      lease_hash: null,
    },
    { receiptId: 'urn:uuid:1', nowMs: NOW, target: TARGET },
    sor,
  );
  assert.equal(verifyReceipt(receipt, receiptKeys), true);
  const junk: unknown[] = [
    {},
    null,
    undefined,
    [],
    'receipt',
    { signature: null },
    { signature: { alg: 'Ed25519' } },
    { signature: { alg: 'Ed25519', kid: sor.kid, sig: 5 } },
    { ...receipt, extra: '\ud800' },
    { ...receipt, extra: NaN },
  ];
  for (const j of junk) assert.equal(verifyReceipt(j, receiptKeys), false, JSON.stringify(j));
  const header = Buffer.from('{"signature":null}').toString('base64url');
  assert.equal(verifyReceipt(decodeReceiptHeader(header), receiptKeys), false);
});

test('a lone surrogate in an MCP-carried lease member is ERR_LEASE_MALFORMED (docs/leases.md §1)', () => {
  const meta = withMcpLease(undefined, lease(), INVERSE);
  const carried = meta['compensationLease'] as Record<string, unknown>;
  for (const over of [
    { lease_id: '\ud800urn:x' },
    { '\udc00': 1 },
    { signature: { alg: 'Ed25519\ud800', kid: 'x', sig: 'y' } },
  ]) {
    assert.throws(
      () => leaseFromMcpMeta({ ...meta, compensationLease: { ...carried, ...over } }),
      (e: unknown) => e instanceof BatonError && e.code === 'ERR_LEASE_MALFORMED',
    );
  }
});

test('a key resolver that returns a private key or a non-Ed25519 key refuses with ERR_LEASE_SIGNATURE', () => {
  const l = lease();
  const x25519 = generateKeyPairSync('x25519').publicKey;
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
  const resolvers: Array<[string, KeyResolver]> = [
    ['private key', () => gw.privateKey],
    ['x25519 public key', () => x25519],
    ['rsa public key', () => rsa],
    ['not a key', () => ({}) as ReturnType<KeyResolver>],
  ];
  for (const [name, resolve] of resolvers) {
    const v = verifyLease(l, all({ keys: resolve }));
    assert.equal(v.ok ? 'accepted' : v.rejection.code, 'ERR_LEASE_SIGNATURE', name);
  }
});

// --- inside the system of record: LeaseService over a real SQLite ledger file ------------------

function service(t: TestContext, clock: Clock, trusted: KeyResolver) {
  const dir = mkdtempSync(join(tmpdir(), 'baton-verifier-api-'));
  const ledger = new SqliteLeaseLedger(join(dir, 'sor.db'));
  t.after(() => {
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });
  ledger.seed(TARGET, STATE, 5, NOW);
  const sor = signingKeyFrom(generateEd25519KeyPair().privateKey);
  const svc = new LeaseService({ ledger, model: { apply: (state) => state }, clock, signer: sor, trusted });
  return { svc, ledger, receiptKeys: keyRing([sor.privateKey]) };
}
const staged = { operation: { op: 'add', n: 1 }, inversePayload: INVERSE };

test('LeaseService refuses to decide on a clock reading of NaN: internal, rolled back, nothing written', (t) => {
  let wall = NaN;
  const clock: Clock = { wallMs: () => wall, monotonicMs: () => 0 };
  const { svc, ledger } = service(t, clock, keys);
  const expired = lease(NOW - 3_600_000, 1000);
  assert.throws(
    () => svc.mutate(TARGET, Buffer.from(JSON.stringify(expired)), staged),
    (e: unknown) => e instanceof BatonError && e.code === 'internal',
  );
  assert.deepEqual(ledger.audit(0, 10), [], 'no receipt, no change');
  assert.equal(svc.read(TARGET)?.epoch, 5);
  wall = NOW;
  const answer = svc.mutate(TARGET, Buffer.from(JSON.stringify(expired)), staged);
  assert.equal(answer.rejection?.code, 'ERR_LEASE_EXPIRED');
});

test('LeaseService with a resolver returning a private key answers a signed ERR_LEASE_SIGNATURE receipt', (t) => {
  const { svc, receiptKeys } = service(t, { wallMs: () => NOW, monotonicMs: () => 0 }, () => gw.privateKey);
  const answer = svc.mutate(TARGET, Buffer.from(JSON.stringify(lease())), staged);
  assert.equal(answer.status, 401);
  assert.equal(answer.rejection?.code, 'ERR_LEASE_SIGNATURE');
  assert.equal(verifyReceipt(answer.receipt, receiptKeys), true);
  assert.equal(svc.read(TARGET)?.epoch, 5);
});

test("a resource record the ledger returns malformed is the system of record's fault (internal), not the client's input_invalid", (t) => {
  const { ledger } = service(t, { wallMs: () => NOW, monotonicMs: () => 0 }, keys);
  // A ledger of one's own on PostgreSQL: pg reads a BIGINT back as text by default.
  const bigintAsText: LeaseLedger = {
    transact: (fn) =>
      ledger.transact((tx) =>
        fn({
          resource: (target) => {
            const r = tx.resource(target);
            return r === undefined ? r : { ...r, epoch: String(r.epoch) as unknown as number };
          },
          lease: (id) => tx.lease(id),
          snapshot: (id) => tx.snapshot(id),
          shadow: (id) => tx.shadow(id),
          dueEscrows: (now) => tx.dueEscrows(now),
          write: (change) => tx.write(change),
          appendAudit: (receipt) => tx.appendAudit(receipt),
        }),
      ),
    audit: (after, limit) => ledger.audit(after, limit),
    pendingEscrows: () => ledger.pendingEscrows(),
  };
  const sor = signingKeyFrom(generateEd25519KeyPair().privateKey);
  const clock: Clock = { wallMs: () => NOW, monotonicMs: () => 0 };
  const svc = new LeaseService({
    ledger: bigintAsText,
    model: { apply: (state) => state },
    clock,
    signer: sor,
    trusted: keys,
  });
  assert.throws(
    () => svc.mutate(TARGET, Buffer.from(JSON.stringify(lease())), staged),
    (e: unknown) => e instanceof BatonError && e.code === 'internal' && /lease ledger/.test(e.message),
  );
  assert.deepEqual(ledger.audit(0, 10), [], 'rolled back: no receipt blaming the client');
});
