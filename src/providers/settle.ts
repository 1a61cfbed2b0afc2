/**
 * acknowledge-and-settle (issue 16 §4): the executor's report of the provider's answer and one
 * pass of the occurrence's pinned status sources, recorded in ONE transaction. The status source
 * is asked first (I/O never runs inside a transaction), then the acknowledgement and that answer
 * are appended together, in the order acknowledge-then-reconcile would append them. Evidence only:
 * it never enters (AOC-REQ-010); only the authenticated status answer may move the outcome
 * (AOC-REQ-009). If the first source leaves it unresolved, the next ones are asked as a reconcile
 * pass asks them, each its own observation.
 */
import type {
  AcknowledgementInput,
  MissingKnowledgeReason,
  ObserveResult,
  OccurrencesService,
  OccurrenceView,
} from '../occurrences/index.js';
import type { OccurrenceReconciled, ReconcileReport } from './reconciler.js';
import { recordReading, type StatusSources } from './status-sources/index.js';

export type SettleService = Pick<
  OccurrencesService,
  'acknowledgeAndObserve' | 'observe' | 'getProfile' | 'getOccurrenceView'
>;

/** The acknowledgement's own result, and the occurrence after the status pass. */
export interface AcknowledgedSettled extends OccurrenceReconciled {
  readonly acknowledgement: ObserveResult;
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

/**
 * `sources` undefined: there is no status-source layer (an in-process client built without one);
 * the acknowledgement alone is recorded and the answer says no source was asked.
 */
export async function acknowledgeAndSettle(
  service: SettleService,
  sources: StatusSources | undefined,
  ack: AcknowledgementInput,
  ackActor?: string,
  requestedBy?: string,
  /** The occurrence as the route already read it (with the credential, issue 16 §1): not read again. */
  known?: OccurrenceView,
  /** The reporting executor's credential, checked again inside the recording transaction. */
  reporter?: { readonly credential: string },
): Promise<AcknowledgedSettled> {
  const start = known ?? (await service.getOccurrenceView(ack.occurrenceId));
  const { provider } = start;
  const profile = (await service.getProfile(provider.profileId, provider.profileVersion)).document;
  const applicable = sources === undefined || !start.unresolved ? [] : sources.applicable(profile, start);
  const [first, ...rest] = applicable;
  const observations =
    first === undefined || sources === undefined
      ? []
      : [(await sources.query(profile, start, first.id)).observation];
  const both = await service.acknowledgeAndObserve(ack, observations, ackActor, requestedBy, reporter);
  const asked = [...both.observations];
  let current = asked.at(-1)?.occurrence ?? both.acknowledgement.occurrence;
  let missing: MissingKnowledgeReason | null = asked.at(-1)?.missingKnowledge ?? null;
  for (const source of rest) {
    if (sources === undefined || asked.at(-1)?.effective === true || !current.unresolved) break;
    const r = await recordReading(service, await sources.query(profile, current, source.id), requestedBy);
    asked.push(r);
    current = r.occurrence;
    missing = r.missingKnowledge;
  }
  return {
    occurrence: current,
    acknowledgement: both.acknowledgement,
    report: report(asked, start, current),
    missingKnowledge: missing,
  };
}
