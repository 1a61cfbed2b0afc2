/** Per-request helpers shared by the payment routes: faults, delays, input checks. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyRequest } from 'fastify';
import { BatonError } from '../../core/errors.js';
import { faultKind, parseFaultHeader, type Fault } from './faults.js';
import { ENVIRONMENT, type JsonRecord } from './model.js';
import { errorAnswer, type Answer } from './http.js';
import type { SandboxState } from './state.js';

export const FAULT_HEADER = 'sandbox-fault';
const KEY_SYNTAX = /^[\x21-\x7e]{1,255}$/;

export function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

/** The request's faults split by kind: the header's plus the admin rules' transport faults. */
export function requestFaults(
  state: SandboxState,
  request: FastifyRequest,
  key: string | undefined,
): { transport: Fault[]; payment: Fault[] } {
  const fromHeader = parseFaultHeader(request.headers[FAULT_HEADER]);
  return {
    transport: [
      ...fromHeader.filter((f) => faultKind(f) === 'transport'),
      ...state.faults.take('transport', key),
    ],
    payment: fromHeader.filter((f) => faultKind(f) === 'payment'),
  };
}

/** Hold the request for the `delay` faults; closing the sandbox cuts the wait short. */
export async function pause(state: SandboxState, faults: readonly Fault[]): Promise<void> {
  const ms = faults.reduce((sum, f) => sum + (f.name === 'delay' ? f.ms : 0), 0);
  if (ms > 0) await sleep(ms, undefined, { signal: state.abort.signal });
}

/** 404 for an account this sandbox does not serve (undefined when it does). */
export function unknownAccount(state: SandboxState, account: string): Answer | undefined {
  if (state.accounts.has(account)) return undefined;
  return errorAnswer(state, 404, 'account_not_found', { account, environment: ENVIRONMENT });
}

export function checkKey(state: SandboxState, key: string): Answer | undefined {
  if (!KEY_SYNTAX.test(key)) return errorAnswer(state, 400, 'invalid_request', { param: 'Idempotency-Key' });
  return undefined;
}

function isText(value: unknown, max: number): boolean {
  return typeof value === 'string' && value.length > 0 && value.length <= max;
}

/** The payment request schema (docs/sandbox.md): amount in minor units, ISO 4217 letters. */
export function checkPaymentBody(
  state: SandboxState,
  body: unknown,
): { ok: true; body: JsonRecord } | { ok: false; answer: Answer } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, answer: errorAnswer(state, 400, 'invalid_request', { param: 'body' }) };
  }
  const b = body as JsonRecord;
  const amount = b['amount'];
  const problems: [string, boolean][] = [
    ['amount', typeof amount === 'number' && Number.isSafeInteger(amount) && amount > 0],
    ['currency', typeof b['currency'] === 'string' && /^[a-z]{3}$/.test(b['currency'])],
    ['payee', isText(b['payee'], 200)],
    ['invoice', isText(b['invoice'], 200)],
  ];
  const bad = problems.find(([, ok]) => !ok);
  if (bad === undefined) return { ok: true, body: b };
  return { ok: false, answer: errorAnswer(state, 400, 'invalid_request', { param: bad[0] }) };
}

/** Map a thrown error to an answer: bad input is 400, anything else an honest 500. */
export function failureAnswer(state: SandboxState, error: unknown): Answer {
  if (error instanceof BatonError && error.status === 400) {
    return errorAnswer(state, 400, 'invalid_request', { code: error.code });
  }
  if (error instanceof BatonError && error.code === 'json_too_large') {
    return errorAnswer(state, 413, 'invalid_request', { code: error.code });
  }
  return errorAnswer(state, 500, 'internal_error');
}
