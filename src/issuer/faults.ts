/**
 * Fault switches of the reference issuer, for tests and the demo: each is armed for a number of
 * answers (or until cleared) and consumed in arming order. Status faults change the next status
 * answers; SET faults change the next SET deliveries.
 */
/** Unrecognised states (A7#9): the answer or SET carries this `state` instead of the real one. */
export const STATE_FAULTS = {
  state_frozen: 'frozen',
  state_upper_active: 'ACTIVE',
  state_empty: '',
} as const;

/** The state a state fault substitutes, or the real one. */
export function faultedState(real: string, fault: string | undefined): string {
  return fault !== undefined && fault in STATE_FAULTS
    ? STATE_FAULTS[fault as keyof typeof STATE_FAULTS]
    : real;
}

export const STATUS_FAULTS = [
  'alg_none',
  'hs256',
  'wrong_typ',
  'no_typ',
  'wrong_kid',
  'wrong_iss',
  'wrong_aud',
  'wrong_sub',
  'wrong_nonce',
  'other_mission',
  'origin_mismatch',
  'expired',
  'future_iat',
  'past_expires_at',
  'bad_signature',
  'unsigned_200',
  'introspection_jwt',
  'http_401',
  'http_404',
  'http_429',
  'http_503',
  // A 503 that says how long (RFC 9110 §10.2.3): `Retry-After: 9`; the consumer holds that long.
  'http_503_retry_after',
  // The A7 parts the switches above left to unit tests: other token types (A7#4), a key no longer
  // at jwks_uri (A7#7) and states no companion defines (A7#9).
  'typ_at_jwt',
  'typ_secevent',
  'retired_key',
  'state_frozen',
  'state_upper_active',
  'state_empty',
] as const;
export type StatusFault = (typeof STATUS_FAULTS)[number];

export const SET_FAULTS = [
  'drop',
  'reorder',
  'replay',
  'replay_other_bytes',
  'no_exp',
  'expired',
  'wrong_aud',
  'wrong_iss',
  'bad_signature',
  'origin_mismatch',
  'state_frozen',
  'state_upper_active',
  'state_empty',
] as const;
export type SetFault = (typeof SET_FAULTS)[number];

interface Armed<F> {
  fault: F;
  remaining: number;
}

export class FaultBox<F extends string> {
  readonly #armed: Armed<F>[] = [];
  readonly #known: readonly F[];

  constructor(known: readonly F[]) {
    this.#known = known;
  }

  isKnown(name: string): name is F {
    return (this.#known as readonly string[]).includes(name);
  }

  /** `count` answers (Infinity: until cleared). */
  arm(fault: F, count = 1): void {
    this.#armed.push({ fault, remaining: count });
  }

  /** The next armed fault, consumed; undefined when none is armed. */
  take(): F | undefined {
    const first = this.#armed[0];
    if (first === undefined) return undefined;
    first.remaining -= 1;
    if (first.remaining <= 0) this.#armed.shift();
    return first.fault;
  }

  clear(): void {
    this.#armed.length = 0;
  }
}
