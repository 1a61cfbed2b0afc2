/**
 * The provider adapter `perform` calls at most once per entered occurrence. It sends the entry
 * ticket's exact request with its native key and reports what came back as an acknowledgement:
 * the native answer and the binding fields it carried, or `result: 'unavailable'` when no usable
 * answer came. It never retries on its own beyond what the provider's native key makes safe. If it
 * throws, or answers something that is not an acknowledgement (`provider_response_invalid`),
 * `perform` assumes the request may have reached the provider and leaves it unresolved.
 *
 * src/providers' HttpProviderAdapter fits this interface as it is (its SendResult carries
 * `acknowledgement`). An `authentication` verdict inside the acknowledgement is never forwarded:
 * an executor's word is not authentication (AOC-REQ-009; docs/api.md "Why acknowledgements are
 * unauthenticated evidence") — Baton's status sources are what resolve an occurrence.
 */
import type { JsonValue } from '../core/json.js';
import type { EntryTicket } from '../occurrences/index.js';
import type { ExecutorAcknowledgement } from './types.js';

export interface ProviderAdapter {
  send(ticket: EntryTicket): Promise<{ readonly acknowledgement: ExecutorAcknowledgement }>;
}

/**
 * The user's own provider client as a plain async function: it receives the entry ticket — the
 * exact `request`, the `nativeKey` and the `nativeKeyHeader` to send it under — and returns
 * whatever the client returned. It sends `ticket.request` (what the occurrence binds by digest)
 * under `ticket.nativeKey`, and refuses, by throwing before anything leaves, when the profile gives
 * no key (`nativeKey === null`): sent without one, a repeat could apply twice. E.g.
 * `(t) => { if (t.nativeKey === null) throw new BatonError('profile_invalid', 'no native key');
 * return stripe.paymentIntents.create(t.request as Params, { idempotencyKey: t.nativeKey }); }`.
 * `perform` calls it at most once per entered occurrence; its result is recorded as
 * unauthenticated evidence (AOC-REQ-009) and a throw is doubt, never a retry.
 */
export type ProviderCall = (ticket: EntryTicket) => Promise<unknown>;

/** JSON-safe copy of what a provider client returned (its own class instances, dates, …). */
function asJson(value: unknown): JsonValue | undefined {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(JSON.stringify(value)) as JsonValue;
  } catch {
    // Not representable as JSON (a cycle, a BigInt): the answer is evidenced as present, unshown.
    return undefined;
  }
}

const NATIVE_STATUS = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}$/;

/** The answer's own `status` member (Stripe objects and the sandbox's carry one), if readable. */
function nativeStatusOf(answer: JsonValue | undefined): string | undefined {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return undefined;
  const status = answer['status'];
  return typeof status === 'string' && NATIVE_STATUS.test(status) ? status : undefined;
}

/**
 * A ProviderAdapter around a ProviderCall: a returned value is an answer (with its `status` as
 * the native status when it has one, else an answer Baton cannot read); a throw is doubt.
 */
export function callAdapter(call: ProviderCall, nowMs: () => number = Date.now): ProviderAdapter {
  return {
    async send(ticket) {
      const answer = asJson(await call(ticket));
      const nativeStatus = nativeStatusOf(answer);
      return {
        acknowledgement: {
          occurrenceId: ticket.occurrence.id,
          observedAt: nowMs(),
          ...(nativeStatus === undefined
            ? { result: 'unavailable' as const }
            : { result: 'found' as const, nativeStatus }),
          carried: {},
          ...(answer === undefined ? {} : { response: answer }),
        },
      };
    },
  };
}

export function toAdapter(adapter: ProviderAdapter | ProviderCall): ProviderAdapter {
  return typeof adapter === 'function' ? callAdapter(adapter) : adapter;
}

/** Only the members an executor may report, whatever else the adapter's object carries. */
export function evidenceOnly(a: ExecutorAcknowledgement): ExecutorAcknowledgement {
  const optional = {
    ...(a.nativeStatus === undefined ? {} : { nativeStatus: a.nativeStatus }),
    ...(a.response === undefined ? {} : { response: a.response }),
    ...(a.complete === undefined ? {} : { complete: a.complete }),
  };
  return {
    occurrenceId: a.occurrenceId,
    observedAt: a.observedAt,
    result: a.result,
    carried: a.carried,
    ...optional,
  };
}
