/**
 * Fault injection (docs/sandbox.md "Faults"). Transport faults change how one response travels
 * (any /v1 request); payment faults change how a payment behaves and apply only to the request that
 * creates it. Faults come from the `Sandbox-Fault` header or from admin rules (FaultBook).
 */
import { BatonError } from '../../core/errors.js';
import type { Behaviour } from './model.js';

export const TRANSPORT_FAULTS = [
  'drop_response_after_apply',
  'delay',
  'error_500_after_apply',
  'unsigned',
  'bad_signature',
  'other_account',
] as const;
export const PAYMENT_FAULTS = [
  'conflicting_status',
  'status_changes_later',
  'fail_terminal',
  'canceled_before_processing',
  'drop_webhook',
] as const;
export type FaultName = (typeof TRANSPORT_FAULTS)[number] | (typeof PAYMENT_FAULTS)[number];

export type Fault =
  | { name: 'delay'; ms: number }
  | { name: 'status_changes_later'; first: 'failed' | 'pending'; lookups: number }
  | { name: Exclude<FaultName, 'delay' | 'status_changes_later'> };

export type FaultKind = 'transport' | 'payment';

const MAX_DELAY_MS = 60_000;

function invalid(message: string, spec: string): never {
  throw new BatonError('input_invalid', message, { fault: spec.slice(0, 64) });
}

function count(text: string | undefined, spec: string, max: number): number {
  if (text === undefined || !/^[0-9]{1,6}$/.test(text) || Number(text) > max) {
    invalid(`fault needs a whole number parameter up to ${max}`, spec);
  }
  return Number(text);
}

/** `name`, `name:param` or `name;param` (`delay:250`, `status_changes_later:pending:3`). */
export function parseFault(spec: string): Fault {
  const [name, ...params] = spec.trim().split(/[:;]/);
  if (name === 'delay') return { name, ms: count(params[0], spec, MAX_DELAY_MS) };
  if (name === 'status_changes_later') {
    const first = params[0] === 'pending' || params[0] === 'failed' ? params.shift() : 'failed';
    const lookups = params.length === 0 ? 1 : count(params[0], spec, 1000);
    if (params.length > 1) invalid('too many fault parameters', spec);
    return { name, first: first as 'failed' | 'pending', lookups };
  }
  const known: readonly string[] = [...TRANSPORT_FAULTS, ...PAYMENT_FAULTS];
  if (name === undefined || !known.includes(name)) invalid('unknown fault', spec);
  if (params.length > 0) invalid('this fault takes no parameter', spec);
  return { name } as Fault;
}

/** The `Sandbox-Fault` header: a comma-separated list of fault specs. */
export function parseFaultHeader(value: string | string[] | undefined): Fault[] {
  if (value === undefined) return [];
  const text = Array.isArray(value) ? value.join(',') : value;
  return text
    .split(',')
    .filter((s) => s.trim() !== '')
    .map(parseFault);
}

export function faultKind(fault: Fault): FaultKind {
  return (TRANSPORT_FAULTS as readonly string[]).includes(fault.name) ? 'transport' : 'payment';
}

export function formatFault(fault: Fault): string {
  if (fault.name === 'delay') return `delay:${fault.ms}`;
  if (fault.name === 'status_changes_later') return `${fault.name}:${fault.first}:${fault.lookups}`;
  return fault.name;
}

/** The payment behaviour the faults ask for; two status behaviours at once are refused. */
export function behaviourOf(faults: readonly Fault[]): Behaviour {
  const chosen = faults.filter((f) => f.name !== 'drop_webhook' && faultKind(f) === 'payment');
  if (chosen.length > 1) invalid('at most one status fault per payment', chosen.map(formatFault).join(','));
  const f = chosen[0];
  if (f === undefined) return { kind: 'normal' };
  if (f.name === 'status_changes_later') return { kind: f.name, first: f.first, lookups: f.lookups };
  return { kind: f.name as 'fail_terminal' | 'canceled_before_processing' | 'conflicting_status' };
}

export interface FaultRule {
  readonly id: number;
  /** `next`, `all`, or `key:<idempotency key>`. */
  readonly target: string;
  readonly fault: Fault;
  remaining: number;
}

/** Admin fault rules, consumed by the requests they apply to. */
export class FaultBook {
  #next = 0;
  #rules: FaultRule[] = [];

  add(target: { key: string } | 'next' | 'all', fault: Fault, times?: number): FaultRule {
    const remaining = times ?? (target === 'all' ? Number.POSITIVE_INFINITY : 1);
    const rule = {
      id: ++this.#next,
      target: typeof target === 'string' ? target : `key:${target.key}`,
      fault,
      remaining,
    };
    this.#rules.push(rule);
    return rule;
  }

  /** Take the faults of `kind` that apply to a request about `key` (undefined: no key). */
  take(kind: FaultKind, key: string | undefined): Fault[] {
    const taken: Fault[] = [];
    for (const rule of this.#rules) {
      const byKey = key !== undefined && rule.target === `key:${key}`;
      const matches = byKey || rule.target === 'next' || rule.target === 'all';
      if (!matches || faultKind(rule.fault) !== kind || rule.remaining <= 0) continue;
      rule.remaining -= 1;
      taken.push(rule.fault);
    }
    this.#rules = this.#rules.filter((r) => r.remaining > 0);
    return taken;
  }

  list(): { id: number; target: string; fault: string; remaining: number | null }[] {
    return this.#rules.map((r) => ({
      id: r.id,
      target: r.target,
      fault: formatFault(r.fault),
      remaining: Number.isFinite(r.remaining) ? r.remaining : null,
    }));
  }

  clear(): number {
    const n = this.#rules.length;
    this.#rules = [];
    return n;
  }
}
