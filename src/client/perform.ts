/**
 * `executor.perform(operation, adapter)` (DESIGN.md §8): create-and-enter → send →
 * acknowledge-and-settle (one pass of Baton's status sources, which alone may resolve it) — two
 * calls to Baton per lifecycle (issue 16 §4) — with
 * one rule above all: an entered occurrence is never entered or sent again (AOC-REQ-010). On any
 * doubt it stops, leaves the occurrence as it is (unresolved once entered) and says why; the
 * successor's takeover lists it (AOC-REQ-005) and status sources, not retries, resolve it. The
 * caller's signal never cuts off the recording of an answer the provider already gave.
 */
import { BatonError, isBatonError } from '../core/errors.js';
import type { EntryTicket, OccurrenceView } from '../occurrences/index.js';
import { evidenceOnly, toAdapter, type ProviderAdapter, type ProviderCall } from './adapter.js';
import { acknowledgementFault, createAndEnterFault, settledFault } from './answer-shape.js';
import type { CallOptions, ExecutorAcknowledgement, Executor, Operation, PerformResult } from './types.js';

type Calls = Pick<Executor, 'createAndEnter' | 'acknowledgeAndSettle'>;

type Step<T> =
  { ok: true; value: T } | { ok: false; refusal: boolean; code: string; details?: Record<string, unknown> };

/**
 * A refusal is Baton's answer that the command did not apply (one transaction, rolled back), or a
 * call the client never sent (`sent: false`: an abort before sending, a request that could not be
 * built). A server error, a lost answer or anything unexpected is doubt: the command may have
 * applied. Fail closed on both statuses: the code's, and the one on the wire (`details.status`,
 * set by the HTTP transport) — a 5xx is doubt whatever code its body names (AOC-REQ-010).
 */
function isRefusal(error: BatonError): boolean {
  const wire = error.details['status'];
  if (typeof wire === 'number' && wire >= 500) return false;
  if (error.details['sent'] === false) return true;
  // An abort is the caller's, not Baton's answer: doubt once it may have been sent.
  if (error.code === 'client_aborted') return false;
  return error.status < 500;
}

async function attempt<T>(call: () => Promise<T>): Promise<Step<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (error) {
    if (isBatonError(error))
      return { ok: false, refusal: isRefusal(error), code: error.code, details: error.details };
    return { ok: false, refusal: false, code: 'internal' };
  }
}

/** The result a known occurrence state implies. */
function fromState(
  o: OccurrenceView,
  adapterCalls: 0 | 1,
  extra: Partial<PerformResult> = {},
): PerformResult {
  const base = { occurrenceId: o.id, occurrence: o, adapterCalls, ...extra };
  if (o.phase === 'released') return { ...base, status: 'refused', reason: extra.reason ?? 'released' };
  if (o.phase === 'resolved' && !o.conflict) {
    if (o.effect === 'occurred') return { ...base, status: 'succeeded' };
    if (o.effect === 'none_confirmed') return { ...base, status: 'failed' };
  }
  return { ...base, status: 'unresolved' };
}

function unresolved(
  o: OccurrenceView,
  reason: string,
  adapterCalls: 0 | 1,
  errorCode?: string,
): PerformResult {
  const code = errorCode === undefined ? {} : { errorCode };
  return { status: 'unresolved', occurrenceId: o.id, occurrence: o, reason, adapterCalls, ...code };
}

/**
 * Whatever the executor handed back, checked before perform acts on it: the HTTP client checks it
 * too, but `perform` takes any executor, and a malformed answer must stop it, not turn into a
 * TypeError (AOC-REQ-010 before the provider call, AOC-REQ-004 after it).
 */
function checked<T extends object>(
  call: () => Promise<T>,
  fault: (v: Record<string, unknown>) => string | undefined,
) {
  return async (): Promise<T> => {
    const value = await call();
    const why = fault(value as Record<string, unknown>);
    if (why !== undefined) throw new BatonError('baton_response_invalid', `Baton answered with ${why}`);
    return value;
  };
}

async function send(adapter: ProviderAdapter, ticket: EntryTicket): Promise<Step<ExecutorAcknowledgement>> {
  const sent = await attempt(async () => {
    const answer: unknown = await adapter.send(ticket);
    const acknowledgement = (answer as { acknowledgement?: unknown } | null)?.acknowledgement;
    // Not an acknowledgement (`{}`, null): a typed error, and doubt like a throw — the request
    // may have reached the provider.
    const why = acknowledgementFault(acknowledgement);
    if (why !== undefined) throw new BatonError('provider_response_invalid', `the adapter answered ${why}`);
    return acknowledgement as ExecutorAcknowledgement;
  });
  // An adapter failure is always doubt: the request may have reached the provider.
  return sent.ok ? sent : { ...sent, refusal: false };
}

/** The acknowledgement step's deadline once the caller's signal has aborted (or the caller's, if shorter). */
export const RECORD_AFTER_ABORT_MS = 5_000;

/**
 * The acknowledgement step's options. The caller's signal stops perform before the provider is
 * called; once it has been called, the signal never stops the recording of what the provider
 * answered: that answer exists nowhere else, and an effect the provider applied with no record
 * of its answer is the worst state to leave (AOC-REQ-005, -009). So the step does not listen to the
 * signal, and when the signal has already aborted it runs under its own short deadline instead of
 * the client's (30 s by default), so an aborting caller is not held long.
 */
function recordOptions(options: CallOptions | undefined): CallOptions | undefined {
  if (options?.signal === undefined) return options;
  const { signal, ...rest } = options;
  if (!signal.aborted) return rest;
  return { ...rest, timeoutMs: Math.min(rest.timeoutMs ?? RECORD_AFTER_ABORT_MS, RECORD_AFTER_ABORT_MS) };
}

/** The occurrence a refusal names (create-and-enter puts it in `details` when it committed the create). */
function refusedOccurrence(details: Record<string, unknown> | undefined): string | null {
  const id = details?.['occurrenceId'];
  return typeof id === 'string' ? id : null;
}

export async function perform(
  x: Calls,
  operation: Operation,
  provider: ProviderAdapter | ProviderCall,
  options?: CallOptions,
): Promise<PerformResult> {
  const adapter = toAdapter(provider);
  // Call 1 of 2 (issue 16 §4): create and enter in one transaction.
  // Its ticket is checked before the adapter ever sees it: one without a native key (or with
  // `undefined` for one) must never reach the provider (AOC-REQ-010).
  const started = await attempt(
    checked(() => x.createAndEnter(operation, undefined, options), createAndEnterFault),
  );
  if (!started.ok) {
    // Refused: nothing was entered (a fresh create may have committed, named in the details).
    // Doubt: it may have entered — a repeat returns the original with no ticket, never a second entry.
    const occurrenceId = started.refusal ? refusedOccurrence(started.details) : null;
    const status = started.refusal ? 'refused' : 'unresolved';
    const reason = started.refusal ? started.code : 'entry_unconfirmed';
    return { status, occurrenceId, reason, adapterCalls: 0, errorCode: started.code };
  }
  const { occurrence: o, ticket } = started.value;
  if (ticket === null) return fromState(o, 0, { reason: `existing_${o.phase}` });

  const answer = await send(adapter, ticket);
  if (!answer.ok) return unresolved(ticket.occurrence, 'adapter_failed', 1, answer.code);
  if (answer.value.occurrenceId !== ticket.occurrence.id) {
    return unresolved(ticket.occurrence, 'acknowledgement_mismatch', 1);
  }

  // Call 2 of 2: the answer as (unauthenticated) evidence and one pass of Baton's own status
  // sources, which alone may resolve it (AOC-REQ-009), in one transaction.
  const acknowledgement = evidenceOnly(answer.value);
  const settled = await attempt(
    checked(() => x.acknowledgeAndSettle(acknowledgement, recordOptions(options)), settledFault),
  );
  if (!settled.ok) {
    // The provider's answer goes back to the caller, who alone still holds it, to record later.
    const r = unresolved(ticket.occurrence, 'acknowledgement_not_recorded', 1, settled.code);
    return { ...r, acknowledgement };
  }
  const s = settled.value;
  if (!s.occurrence.unresolved) return fromState(s.occurrence, 1);
  // Still open: say what the status sources left unknown (the acknowledgement's reason if none
  // answered) and, when a source could not be asked, that failure's code: an outage and a fault in
  // Baton read alike as `unavailable`, the code tells them apart.
  const unknown = s.missingKnowledge ?? s.acknowledgement.missingKnowledge;
  return fromState(s.occurrence, 1, {
    reason: 'awaiting_status',
    ...(unknown === null ? {} : { missingKnowledge: unknown }),
    ...(s.errorCode === undefined ? {} : { errorCode: s.errorCode }),
  });
}
