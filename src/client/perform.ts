/**
 * `executor.perform(operation, adapter)` (DESIGN.md §8): create → enter → send → acknowledge →
 * reconcile (one pass of Baton's status sources, which alone may resolve it), with
 * one rule above all: an entered occurrence is never entered or sent again (AOC-REQ-010). On any
 * doubt it stops, leaves the occurrence as it is (unresolved once entered) and says why; the
 * successor's takeover lists it (AOC-REQ-005) and status sources, not retries, resolve it.
 */
import { isBatonError, type BatonError } from '../core/errors.js';
import type { EntryTicket, OccurrenceView } from '../occurrences/index.js';
import { evidenceOnly, toAdapter, type ProviderAdapter, type ProviderCall } from './adapter.js';
import type { CallOptions, ExecutorAcknowledgement, Executor, Operation, PerformResult } from './types.js';

type Calls = Pick<Executor, 'create' | 'enter' | 'acknowledge' | 'reconcile'>;

type Step<T> = { ok: true; value: T } | { ok: false; refusal: boolean; code: string };

/**
 * A refusal is Baton's answer that the command did not apply (one transaction, rolled back). A
 * server error, a lost answer or anything unexpected is doubt: the command may have applied.
 */
function isRefusal(error: BatonError): boolean {
  // An abort is the caller's, not Baton's answer: doubt, unless the call was never sent.
  if (error.code === 'client_aborted') return error.details['sent'] === false;
  return error.status < 500;
}

async function attempt<T>(call: () => Promise<T>): Promise<Step<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (error) {
    if (isBatonError(error)) return { ok: false, refusal: isRefusal(error), code: error.code };
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

async function send(adapter: ProviderAdapter, ticket: EntryTicket): Promise<Step<ExecutorAcknowledgement>> {
  const sent = await attempt(async () => (await adapter.send(ticket)).acknowledgement);
  // An adapter failure is always doubt: the request may have reached the provider.
  return sent.ok ? sent : { ...sent, refusal: false };
}

export async function perform(
  x: Calls,
  operation: Operation,
  provider: ProviderAdapter | ProviderCall,
  options?: CallOptions,
): Promise<PerformResult> {
  const adapter = toAdapter(provider);
  const created = await attempt(() => x.create(operation, options));
  if (!created.ok) {
    // Nothing was entered: create never calls the provider. Repeating perform is safe (creation binding).
    const status = created.refusal ? 'refused' : 'unresolved';
    const reason = created.refusal ? created.code : 'create_unconfirmed';
    return { status, occurrenceId: null, reason, adapterCalls: 0, errorCode: created.code };
  }
  const o = created.value.occurrence;
  if (o.phase !== 'reserved') return fromState(o, 0, { reason: `existing_${o.phase}` });

  const entered = await attempt(() => x.enter(o.id, undefined, options));
  if (!entered.ok) {
    if (entered.refusal) return { ...fromState(o, 0), status: 'refused', reason: entered.code };
    return unresolved(o, 'entry_unconfirmed', 0, entered.code);
  }
  const ticket = entered.value;

  const answer = await send(adapter, ticket);
  if (!answer.ok) return unresolved(ticket.occurrence, 'adapter_failed', 1, answer.code);
  if (answer.value.occurrenceId !== ticket.occurrence.id) {
    return unresolved(ticket.occurrence, 'acknowledgement_mismatch', 1);
  }

  const recorded = await attempt(() => x.acknowledge(evidenceOnly(answer.value), options));
  if (!recorded.ok) return unresolved(ticket.occurrence, 'acknowledgement_not_recorded', 1, recorded.code);
  // Recorded as evidence: the executor's word never moves the outcome (AOC-REQ-009).
  const r = recorded.value;
  if (!r.occurrence.unresolved) return fromState(r.occurrence, 1);
  // Baton's own status sources may: one pass, now, so that a confirmed effect is known at once.
  const checked = await attempt(() => x.reconcile(ticket.occurrence.id, options));
  if (!checked.ok) {
    // The pass did not run or its answer was lost: what the acknowledgement left unknown stands.
    const missing = r.missingKnowledge === null ? {} : { missingKnowledge: r.missingKnowledge };
    return fromState(r.occurrence, 1, { reason: 'awaiting_status', errorCode: checked.code, ...missing });
  }
  const latest = checked.value.occurrence;
  if (!latest.unresolved) return fromState(latest, 1);
  // Still open: say what the status sources left unknown (the acknowledgement's reason if none answered).
  const unknown = checked.value.missingKnowledge ?? r.missingKnowledge;
  return fromState(latest, 1, {
    reason: 'awaiting_status',
    ...(unknown === null ? {} : { missingKnowledge: unknown }),
  });
}
