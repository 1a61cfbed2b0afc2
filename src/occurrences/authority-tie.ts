/**
 * Authority is tied to the request (docs/occurrences.md "Authority tied to the request",
 * AOC-REQ-012): a profile says where the provider request carries the amount and its unit, and
 * create refuses — `authority_request_mismatch`, no state change — a request whose amount is not
 * the authority amount the occurrence reserves, is negative, fractional or not a number, or whose
 * unit is not the authority's. Without this, a request for 1,000,000 could reserve 1.
 *
 * Fail closed: a profile that declares no tie cannot create occurrences at all. A provider whose
 * requests carry no amount (a message, a deployment) declares `perOccurrence`: each occurrence
 * spends exactly that many units, whatever the request says.
 */
import type { JsonObject } from '../core/json.js';
import type { AuthorityTie } from './profile-types.js';
import type { Fields, Reader } from './validate.js';

const UNIT = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$/;
const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;

function readUnit(r: Reader, value: unknown, members: readonly string[], member: RegExp): void {
  if (typeof value === 'string') {
    r.string(value, '$.authority.unit', UNIT);
    return;
  }
  const f = r.object(value, '$.authority.unit', ['member', 'values']);
  const name = r.string(f['member'], '$.authority.unit.member', member);
  if (!members.includes(name)) r.fail('$.authority.unit.member', 'must be a request member');
  const values = f['values'];
  const names = typeof values === 'object' && values !== null ? Object.keys(values) : [];
  const map = r.object(values, '$.authority.unit.values', [], names);
  if (names.length === 0 || names.length > 64) r.fail('$.authority.unit.values', 'must map 1..64 values');
  for (const n of names) {
    r.string(n, '$.authority.unit.values (name)', undefined, 64);
    r.string(map[n], `$.authority.unit.values.${n}`, UNIT);
  }
}

/** Validate a profile's `authority` member against its request representation. */
export function readAuthorityTie(
  r: Reader,
  value: unknown,
  request: { readonly members: readonly string[]; readonly required: readonly string[] },
  member: RegExp,
): void {
  const { required, members } = request;
  const head = r.object(value, '$.authority', [], ['amount', 'unit', 'perOccurrence']);
  if (head['perOccurrence'] !== undefined) {
    const f = r.object(value, '$.authority', ['perOccurrence']);
    r.integer(f['perOccurrence'], '$.authority.perOccurrence', 1, MAX_AMOUNT);
    return;
  }
  const f = r.object(value, '$.authority', ['amount', 'unit']);
  const amount = r.string(f['amount'], '$.authority.amount', member);
  if (!required.includes(amount)) r.fail('$.authority.amount', 'must be a required request member');
  readUnit(r, f['unit'], members, member);
}

export interface TieRefusal {
  readonly reason:
    | 'profile_declares_no_tie'
    | 'amount_not_a_number'
    | 'amount_negative'
    | 'amount_fractional'
    | 'amount_differs'
    | 'unit_unknown'
    | 'unit_differs';
  readonly message: string;
}

function unitOf(tie: Extract<AuthorityTie, { amount: string }>, request: Fields): string | undefined {
  if (typeof tie.unit === 'string') return tie.unit;
  const v = request[tie.unit.member];
  return typeof v === 'string' && Object.hasOwn(tie.unit.values, v) ? tie.unit.values[v] : undefined;
}

/**
 * Whether `request` spends exactly `authority` (amount and unit) under the profile's tie; the
 * refusal names what differs, never the values (the request may be private).
 */
export function checkAuthorityTie(
  tie: AuthorityTie | undefined,
  request: JsonObject,
  authority: { readonly amount: number; readonly unit: string },
): TieRefusal | undefined {
  if (tie === undefined) {
    return {
      reason: 'profile_declares_no_tie',
      message: 'the provider profile does not say where the request carries its amount (authority)',
    };
  }
  if ('perOccurrence' in tie) {
    return authority.amount === tie.perOccurrence
      ? undefined
      : {
          reason: 'amount_differs',
          message: 'the authority amount is not the profile’s per-occurrence amount',
        };
  }
  const amount = request[tie.amount];
  if (typeof amount !== 'number' || !Number.isFinite(amount)) {
    return { reason: 'amount_not_a_number', message: `$.request.${tie.amount} must be a number` };
  }
  if (amount < 0) return { reason: 'amount_negative', message: `$.request.${tie.amount} is negative` };
  // Authority is counted in whole units (the unit is integral, e.g. cents): no fraction of one.
  if (!Number.isSafeInteger(amount)) {
    return { reason: 'amount_fractional', message: `$.request.${tie.amount} is not a whole number of units` };
  }
  if (amount !== authority.amount) {
    return { reason: 'amount_differs', message: `$.request.${tie.amount} differs from the authority amount` };
  }
  const unit = unitOf(tie, request);
  if (unit === undefined)
    return { reason: 'unit_unknown', message: 'the request’s unit is not one the profile maps' };
  if (unit !== authority.unit) {
    return { reason: 'unit_differs', message: 'the request’s unit is not the authority budget’s unit' };
  }
  return undefined;
}
