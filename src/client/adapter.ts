/**
 * The provider adapter `perform` calls at most once per entered occurrence. It sends the entry
 * ticket's exact request with its native key and reports what came back as an acknowledgement:
 * the native answer and the binding fields it carried, or `result: 'unavailable'` when no usable
 * answer came. It never retries on its own beyond what the provider's native key makes safe. If it
 * throws, `perform` assumes the request may have reached the provider and leaves it unresolved.
 *
 * src/providers' HttpProviderAdapter fits this interface as it is (its SendResult carries
 * `acknowledgement`). An `authentication` verdict inside the acknowledgement is never forwarded:
 * an executor's word is not authentication (AOC-REQ-009; docs/api.md "Why acknowledgements are
 * unauthenticated evidence") — Baton's status sources are what resolve an occurrence.
 */
import type { EntryTicket } from '../occurrences/index.js';
import type { ExecutorAcknowledgement } from './types.js';

export interface ProviderAdapter {
  send(ticket: EntryTicket): Promise<{ readonly acknowledgement: ExecutorAcknowledgement }>;
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
