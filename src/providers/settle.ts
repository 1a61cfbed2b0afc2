/**
 * acknowledge-and-settle (issue 16 §4): the executor's report of the provider's answer and one
 * pass of the occurrence's pinned status sources, recorded in ONE transaction. The status source
 * is asked first (I/O never runs inside a transaction), then the acknowledgement and that answer
 * are appended together, in the order acknowledge-then-reconcile would append them. Evidence only:
 * it never enters (AOC-REQ-010); only the authenticated status answer may move the outcome
 * (AOC-REQ-009). If the first source leaves it unresolved, the next ones are asked as a reconcile
 * pass asks them, each its own observation. Repeats are bounded evidence like a reconcile's
 * (service/ack-bound.ts): an acknowledgement or a reading that moves nothing may be answered without
 * being appended (`notRecorded`). The acknowledgement is always answered: a source that
 * cannot be asked ends the pass as missing knowledge (`unavailable`, `byReason.error`), never the call;
 * the answer names the failure's code (`errorCode`) and the caller's `onError` gets the error itself,
 * so a broken store or a fault in Baton is never mistaken for a provider outage (AOC-REQ-009).
 */
import { errorCodeOf, type BatonErrorCode } from '../core/errors.js';
import type {
  AcknowledgementInput,
  NotRecorded,
  MissingKnowledgeReason,
  ObservationInput,
  ObserveResult,
  OccurrencesService,
  OccurrenceView,
} from '../occurrences/index.js';
import type { OccurrenceReconciled, ReconcileReport } from './reconciler.js';
import type { StatusSources } from './status-sources/index.js';

export type SettleService = Pick<
  OccurrencesService,
  'acknowledgeAndObserve' | 'observeAsked' | 'getProfile' | 'getOccurrenceView'
>;

/** The acknowledgement's own result, and the occurrence after the status pass. */
export interface AcknowledgedSettled extends OccurrenceReconciled {
  readonly acknowledgement: ObserveResult;
  /**
   * Present only when a status source could not be asked or its answer not recorded (the pass then
   * ends `unavailable`, counted as `byReason.error`): that failure's BatonError code, `internal` for
   * anything that is not a BatonError. Never its message.
   */
  readonly errorCode?: BatonErrorCode;
}

function report(
  asked: readonly ObserveResult[],
  start: OccurrenceView,
  end: OccurrenceView,
): ReconcileReport {
  const byReason: Record<string, number> = {};
  for (const r of asked) {
    const key = r.missingKnowledge ?? 'effective';
    byReason[key] = (byReason[key] ?? 0) + 1;
  }
  const wasOpen = start.unresolved && asked.length > 0;
  return {
    passes: asked.length > 0 ? 1 : 0,
    visited: asked.length > 0 ? 1 : 0,
    observations: asked.length,
    effective: asked.filter((r) => r.missingKnowledge === null).length,
    resolved: wasOpen && !end.unresolved ? [end.id] : [],
    unresolved: end.unresolved ? [end.id] : [],
    byReason,
  };
}

/** Who records, what is already known, and who hears a failure: each optional. */
export interface SettleOptions {
  /** The acknowledgement's actor in its evidence. */
  readonly ackActor?: string;
  /** Who asked for the status pass, in each reading's evidence. */
  readonly requestedBy?: string;
  /** The occurrence as the route already read it (with the credential, issue 16 §1): not read again. */
  readonly known?: OccurrenceView;
  /** The reporting executor's credential, checked again inside the recording transaction. */
  readonly reporter?: { readonly credential: string };
  /** Told the failure that ended the pass (the route logs it); the answer carries only its code. */
  readonly onError?: (error: unknown) => void;
  /** Told of each status reading answered but not appended (a repeat, or past the cap): counted. */
  readonly onNotRecorded?: (why: NotRecorded) => void;
}

/**
 * `sources` undefined: there is no status-source layer (an in-process client built without one);
 * the acknowledgement alone is recorded and the answer says no source was asked.
 */
export async function acknowledgeAndSettle(
  service: SettleService,
  sources: StatusSources | undefined,
  ack: AcknowledgementInput,
  options: SettleOptions = {},
): Promise<AcknowledgedSettled> {
  const { ackActor, requestedBy, known, reporter, onError, onNotRecorded } = options;
  const start = known ?? (await service.getOccurrenceView(ack.occurrenceId));
  const { provider } = start;
  const profile = (await service.getProfile(provider.profileId, provider.profileVersion)).document;
  const applicable = sources === undefined || !start.unresolved ? [] : sources.applicable(profile, start);
  const [first, ...rest] = applicable;
  // A source that could not be asked (the query threw) must not cost the acknowledgement: the
  // provider's answer is evidence only the executor has. The acknowledgement is recorded alone and
  // the pass ends there, missing knowledge `unavailable`, counted as `error` (never success). The
  // failure is not dropped: its code goes in the answer and the error itself to `onError`.
  let failure: { readonly error: unknown } | undefined;
  const readings: ObservationInput[] = [];
  if (first !== undefined && sources !== undefined) {
    try {
      readings.push((await sources.query(profile, start, first.id)).observation);
    } catch (error) {
      failure = { error };
    }
  }
  const both = await service.acknowledgeAndObserve(ack, readings, ackActor, requestedBy, reporter);
  const asked = [...both.observations];
  for (const r of asked) if (r.notRecorded !== undefined) onNotRecorded?.(r.notRecorded);
  let current = asked.at(-1)?.occurrence ?? both.acknowledgement.occurrence;
  let missing: MissingKnowledgeReason | null =
    failure !== undefined ? 'unavailable' : (asked.at(-1)?.missingKnowledge ?? null);
  for (const source of rest) {
    if (
      failure !== undefined ||
      sources === undefined ||
      asked.at(-1)?.effective === true ||
      !current.unresolved
    )
      break;
    try {
      // The acknowledgement is committed: a failure now ends the pass, it never fails the call (a
      // caller told "not recorded" would record the same answer twice).
      // Asked for by the caller, as the first reading was: bounded when it moves nothing.
      const reading = await sources.query(profile, current, source.id);
      const r = await service.observeAsked(reading.observation, undefined, requestedBy);
      if (r.notRecorded !== undefined) onNotRecorded?.(r.notRecorded);
      asked.push(r);
      current = r.occurrence;
      missing = r.missingKnowledge;
    } catch (error) {
      failure = { error };
      missing = 'unavailable';
    }
  }
  const counted = report(asked, start, current);
  const settled = {
    occurrence: current,
    acknowledgement: both.acknowledgement,
    report: failure === undefined ? counted : withError(counted),
    missingKnowledge: missing,
  };
  if (failure === undefined) return settled;
  onError?.(failure.error);
  return { ...settled, errorCode: errorCodeOf(failure.error) };
}

/** The pass's report with the source that could not be asked counted as `error` (no observation). */
function withError(r: ReconcileReport): ReconcileReport {
  return { ...r, passes: 1, visited: 1, byReason: { ...r.byReason, error: (r.byReason['error'] ?? 0) + 1 } };
}
