/**
 * The fail-closed verifier (draft §4, §5): pure — (lease, what is known about the resource, now,
 * trusted keys) → verified lease | rejection. No I/O, no clock reads. Checks that need the system of
 * record's state run only when that state is supplied (the CLI verifies offline); the system of
 * record always supplies all of it (`verifyLeaseState` requires every state fact). The order below
 * fixes which code a lease with several defects gets; it is documented in docs/leases.md.
 *
 * The facts a caller passes are validated before any rule runs: a comparison with NaN, null or a
 * string is false, so an unvalidated fact would silently pass the expiry, skew or fence rule. A bad
 * fact is a typed `input_invalid` naming the member — the caller's bug — never a verdict.
 */
import { digestEquals, isSha256HexTag, sha256HexTagJcs } from '../core/digest.js';
import { BatonError, isBatonError } from '../core/errors.js';
import type { JsonValue } from '../core/json.js';
import {
  LATEST_INSTANT_MS,
  MAX_CLOCK_SKEW_MS,
  isRecoveryMode,
  type Lease,
  type Rejection,
  type UnsignedLease,
  type VerifiedLease,
} from './model.js';
import { leaseSigningInput } from './lease-jcs.js';
import { instantMs } from './instant.js';
import { parseLease } from './parse.js';
import { checkDocumentSignature, type KeyResolver } from './signing.js';

/** The facts about the resource only its system of record knows (draft §4 rules 2–3, replay). */
export interface LeaseStateFacts {
  /** The resource's current epoch: a non-negative safe integer. */
  epoch: number;
  /** `sha256:` + hex of the JCS of the resource's current state. */
  stateDigest: string;
  /** The pre-staged inverse payload; `{ staged: undefined }` means none was staged. */
  inverse: { staged: JsonValue | undefined };
  /** Whether this `lease_id` was already accepted by the system of record. */
  replayed: boolean;
}

export interface LeaseChecks extends Partial<LeaseStateFacts> {
  /** The verifier's wall clock, Unix milliseconds: a safe integer (not a Date, not seconds). */
  nowMs: number;
  keys: KeyResolver;
  /** The system of record's canonical URI of the addressed resource. */
  target?: string;
}

/**
 * The checks a verdict can report as run, in the order they run (docs/leases.md §3 numbers them),
 * each with the draft rule it enforces and the fact it was checked against. A check whose fact was
 * left out did not run and is absent from `checked`: a system of record must see all of them.
 */
export const LEASE_CHECKS = {
  signature: { rule: 'CRYPTOGRAPHIC_BINDING', fact: 'keys' },
  recovery_mode: { rule: 'FOUR_MODE_RESERVATION_MANDATE', fact: 'lease' },
  recovery_window: { rule: 'RECOVERY_WINDOW_INEQUALITY', fact: 'nowMs' },
  target: { rule: 'TARGET_BINDING', fact: 'target' },
  clock_skew: { rule: 'CLOCK_SKEW', fact: 'nowMs' },
  expiry: { rule: 'RECOVERY_WINDOW_INEQUALITY', fact: 'nowMs' },
  inverse_payload: { rule: 'FOUR_MODE_RESERVATION_MANDATE', fact: 'inverse' },
  replay: { rule: 'LEASE_REPLAY', fact: 'replayed' },
  fence_epoch: { rule: 'MONOTONIC_CAS_FENCING', fact: 'epoch' },
  pre_image: { rule: 'MONOTONIC_CAS_FENCING', fact: 'stateDigest' },
} as const satisfies Record<string, { rule: Rejection['rule']; fact: keyof LeaseChecks | 'lease' }>;
export type LeaseCheckName = keyof typeof LEASE_CHECKS;

const LEASE_ALONE: readonly LeaseCheckName[] = ['signature', 'recovery_mode', 'recovery_window'];
const TIME: readonly LeaseCheckName[] = ['clock_skew', 'expiry'];
const STATE = ['inverse_payload', 'replay', 'fence_epoch', 'pre_image'] as const;

export type LeaseVerdict =
  | { ok: true; lease: VerifiedLease; readonly checked: readonly LeaseCheckName[] }
  | { ok: false; rejection: Rejection };

const refuse = (code: Rejection['code'], rule: Rejection['rule'], message: string): LeaseVerdict => ({
  ok: false,
  rejection: { code, rule, message },
});

const badFact = (member: string, form: string): BatonError =>
  new BatonError('input_invalid', `lease check fact ${member} must be ${form}`, { member });

/** Unix milliseconds a verifier may compare with lease instants: a safe integer, nothing else. */
export function assertNowMs(nowMs: unknown, member = 'nowMs'): asserts nowMs is number {
  if (!Number.isSafeInteger(nowMs)) throw badFact(member, 'Unix milliseconds as a safe integer');
}

function assertStaticFacts(c: LeaseChecks): void {
  if (typeof c !== 'object' || c === null) throw badFact('checks', 'an object');
  assertNowMs(c.nowMs);
  if (typeof c.keys !== 'function') throw badFact('keys', 'a key resolver function');
  if (c.target !== undefined && typeof c.target !== 'string') throw badFact('target', 'a string');
}

/** Present state facts must be well formed; `required` also refuses absent ones (verifyLeaseState). */
function assertStateFacts(c: Partial<LeaseStateFacts>, required: boolean): void {
  const absent = (member: keyof LeaseStateFacts): boolean => {
    if (c[member] !== undefined) return false;
    if (required) throw badFact(member, 'given: a system of record checks every state fact');
    return true;
  };
  if (!absent('epoch') && !(Number.isSafeInteger(c.epoch) && (c.epoch as number) >= 0)) {
    throw badFact('epoch', 'a non-negative safe integer');
  }
  if (!absent('stateDigest') && !isSha256HexTag(c.stateDigest)) {
    throw badFact('stateDigest', 'sha256: + 64 lowercase hex');
  }
  if (!absent('inverse') && (typeof c.inverse !== 'object' || c.inverse === null)) {
    throw badFact('inverse', 'an object { staged }');
  }
  if (!absent('replayed') && typeof c.replayed !== 'boolean') throw badFact('replayed', 'a boolean');
}

function checkInverse(lease: Lease, staged: JsonValue | undefined): LeaseVerdict | undefined {
  // Draft §4 rule 3: the inverse payload is pre-staged before lock release and bound by its JCS hash.
  if (staged === undefined) {
    return refuse(
      'ERR_INVERSE_PAYLOAD_MISMATCH',
      'FOUR_MODE_RESERVATION_MANDATE',
      'no inverse payload staged',
    );
  }
  let digest: string;
  try {
    digest = sha256HexTagJcs(staged);
  } catch (error) {
    if (!isBatonError(error)) throw error;
    return refuse(
      'ERR_INVERSE_PAYLOAD_MISMATCH',
      'FOUR_MODE_RESERVATION_MANDATE',
      'inverse payload has no JCS',
    );
  }
  if (!digestEquals(digest, lease.inverse_payload_jcs_hash)) {
    return refuse(
      'ERR_INVERSE_PAYLOAD_MISMATCH',
      'FOUR_MODE_RESERVATION_MANDATE',
      'inverse payload hash differs',
    );
  }
  return undefined;
}

/**
 * The rules a lease's own members decide (docs/leases.md §3 checks 3–4): the recovery mode is one of
 * the four, t_req_ms <= t_granted_ms, and a window accepted at `acceptedAtMs` ends at an instant a
 * receipt can carry. The verifier measures the window from its clock; `signLease` runs the same rules
 * from the lease's own `issued_at`, so Baton never signs a lease every verifier refuses on its face.
 */
export function checkLeaseFace(lease: UnsignedLease, acceptedAtMs: number): Rejection | undefined {
  const no = (code: Rejection['code'], rule: Rejection['rule'], message: string): Rejection => ({
    code,
    rule,
    message,
  });
  if (!isRecoveryMode(lease.recovery_mode)) {
    return no(
      'ERR_UNKNOWN_RECOVERY_MODE',
      'FOUR_MODE_RESERVATION_MANDATE',
      'recovery mode is not one of the four',
    );
  }
  // Draft §4 rule 1: T_req <= T_granted.
  if (!(lease.t_req_ms <= lease.t_granted_ms)) {
    return no('ERR_RECOVERY_WINDOW', 'RECOVERY_WINDOW_INEQUALITY', 't_req_ms exceeds t_granted_ms');
  }
  // A window accepted now ends at now + t_granted_ms, an instant receipts carry in RFC 3339 (draft
  // §4 rule 1 grants the window; nothing can be granted that the receipt could not state).
  if (lease.t_granted_ms > LATEST_INSTANT_MS - acceptedAtMs) {
    return no(
      'ERR_RECOVERY_WINDOW',
      'RECOVERY_WINDOW_INEQUALITY',
      't_granted_ms would end the recovery window after 9999-12-31T23:59:59.999Z',
    );
  }
  return undefined;
}

/** Rules that hold for the lease alone: signature, mode, window inequality, target, time. */
function checkStatic(lease: Lease, c: LeaseChecks): LeaseVerdict | undefined {
  const bad = checkDocumentSignature(lease, c.keys, () => leaseSigningInput(lease));
  if (bad !== undefined) return { ok: false, rejection: bad };
  const face = checkLeaseFace(lease, c.nowMs);
  if (face !== undefined) return { ok: false, rejection: face };
  if (c.target !== undefined && lease.sor_target_uri !== c.target) {
    return refuse('ERR_TARGET_MISMATCH', 'TARGET_BINDING', 'lease names another resource');
  }
  if (instantMs(lease.issued_at) - c.nowMs > MAX_CLOCK_SKEW_MS) {
    return refuse('ERR_CLOCK_SKEW', 'CLOCK_SKEW', 'issued_at is more than 60 s ahead of the verifier clock');
  }
  // Draft §4 rule 1: no tolerance on expiry — skew allowance would silently extend the lease.
  if (c.nowMs > instantMs(lease.expires_at)) {
    return refuse('ERR_LEASE_EXPIRED', 'RECOVERY_WINDOW_INEQUALITY', 'lease has expired');
  }
  return undefined;
}

/** Rules that need the system of record: inverse staging, replay, fence epoch, pre-image. */
function checkState(lease: Lease, c: Partial<LeaseStateFacts>): LeaseVerdict | undefined {
  if (c.inverse !== undefined) {
    const bad = checkInverse(lease, c.inverse.staged);
    if (bad !== undefined) return bad;
  }
  if (c.replayed === true) return refuse('ERR_LEASE_REPLAYED', 'LEASE_REPLAY', 'lease_id was already used');
  // Draft §4 rule 2, literally: abort when current epoch >= cas_fence_epoch.
  if (c.epoch !== undefined && c.epoch >= lease.cas_fence_epoch) {
    return refuse(
      'ERR_STALE_FENCE_EPOCH',
      'MONOTONIC_CAS_FENCING',
      'resource epoch is not below cas_fence_epoch',
    );
  }
  if (c.stateDigest !== undefined && !digestEquals(c.stateDigest, lease.pre_image_state_hash)) {
    return refuse(
      'ERR_PRE_IMAGE_MISMATCH',
      'MONOTONIC_CAS_FENCING',
      'current state digest is not the pre-image',
    );
  }
  return undefined;
}

/** The checks that ran: those of the lease alone, and each one whose fact was given. */
function checkedBy(c: LeaseChecks, withStatic: boolean): LeaseCheckName[] {
  const ran: LeaseCheckName[] = withStatic ? [...LEASE_ALONE] : [];
  if (withStatic && c.target !== undefined) ran.push('target');
  if (withStatic) ran.push(...TIME);
  for (const name of STATE) if (c[LEASE_CHECKS[name].fact] !== undefined) ran.push(name);
  return ran;
}

/**
 * Every rule for which `checks` holds the fact. Facts left out skip their rules (the CLI verifies a
 * lease offline); the ok verdict's `checked` lists the rules that ran. A system of record passes
 * every fact — or runs this with `nowMs`, `keys`, `target` and then `verifyLeaseState`.
 */
export function verifyLease(lease: Lease, checks: LeaseChecks): LeaseVerdict {
  assertStaticFacts(checks);
  assertStateFacts(checks, false);
  return (
    checkStatic(lease, checks) ??
    checkState(lease, checks) ?? {
      ok: true,
      lease: lease as VerifiedLease,
      checked: checkedBy(checks, true),
    }
  );
}

/**
 * The state rules (docs/leases.md §3 checks 7–10) for a lease `verifyLease` already accepted, with
 * every state fact required: what the system of record (LeaseService) runs inside its transaction.
 */
export function verifyLeaseState(lease: VerifiedLease, facts: LeaseStateFacts): LeaseVerdict {
  assertStateFacts(facts, true);
  return checkState(lease, facts) ?? { ok: true, lease, checked: STATE };
}

/** Parse then verify; a parse failure is a rejection (ERR_LEASE_MALFORMED), never an exception. */
export function verifyLeaseText(input: string | Uint8Array, checks: LeaseChecks): LeaseVerdict {
  assertStaticFacts(checks);
  assertStateFacts(checks, false);
  let lease: Lease;
  try {
    lease = parseLease(input);
  } catch (error) {
    if (!isBatonError(error, 'ERR_LEASE_MALFORMED')) throw error;
    return refuse('ERR_LEASE_MALFORMED', 'CRYPTOGRAPHIC_BINDING', error.message);
  }
  return verifyLease(lease, checks);
}
