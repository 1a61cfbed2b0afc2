/**
 * One reconciler pass over many claimed occurrences at once, in stages (issue 13 §8; serve's
 * background reconciler). Each stage asks every occurrence still open its NEXT applicable pinned
 * source — at most `concurrency` lookups in flight — and then records that stage's readings in
 * ONE transaction (`observeAll`: one COMMIT for the stage) instead of each lookup waiting behind
 * its own observation's commit (better-sqlite3's COMMIT blocks the thread). Per occurrence the
 * rule is visitOccurrence's: sources in order until one answer is effective or it is resolved.
 * Evidence only: it never enters (AOC-REQ-010). Claims (who may ask) are the caller's business.
 */
import type {
  ObserveResult,
  OccurrencesService,
  OccurrenceView,
  ProviderProfile,
  StatusSource,
} from '../occurrences/index.js';
import { readingProgress, type ReconcileProgress, type ReconcilerOptions } from './reconciler.js';
import { ACTIVE_KINDS, recordReading, type SourceReading } from './status-sources/index.js';

export interface StagedVisit {
  readonly occurrenceId: string;
  /** Whether any lookup for it started (false: stopped before its turn). */
  started: boolean;
  asks: number;
  resolved: boolean;
  retryAfter?: string;
  error?: unknown;
}

export interface StageOptions {
  readonly concurrency: number;
  /** Checked before every lookup: once true, no new lookup starts (the SIGTERM drain). */
  readonly stopped: () => boolean;
  readonly onProgress: (p: ReconcileProgress) => void;
}

type Visitor = Pick<ReconcilerOptions, 'sources' | 'kinds' | 'requestedBy'> & {
  readonly service: Pick<OccurrencesService, 'observe' | 'observeAll' | 'getProfile'>;
};

interface Open {
  readonly visit: StagedVisit;
  readonly profile: ProviderProfile;
  readonly sources: readonly StatusSource[];
  readonly next: number;
  readonly view: OccurrenceView;
}

type Asked = { readonly at: Open; readonly reading?: SourceReading; readonly error?: unknown };

/** Run `fn` over `items`, at most `limit` at once, starting none once `stopped()`. */
async function bounded<T, R>(
  items: readonly T[],
  limit: number,
  stopped: () => boolean,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (!stopped() && next < items.length) out.push(await fn(items[next++]!));
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return out;
}

async function opened(o: Visitor, view: OccurrenceView, visit: StagedVisit): Promise<Open | undefined> {
  if (!view.unresolved) return undefined;
  try {
    const { provider } = view;
    const profile = (await o.service.getProfile(provider.profileId, provider.profileVersion)).document;
    const sources = o.sources.applicable(profile, view, o.kinds ?? ACTIVE_KINDS);
    if (sources.length > 0) return { visit, profile, sources, next: 0, view };
  } catch (error) {
    visit.error = error;
  }
  // Nothing to ask (or its profile unreadable): visited, and backed off like an unanswered ask.
  visit.started = true;
  return undefined;
}

async function ask(o: Visitor, at: Open): Promise<Asked> {
  at.visit.started = true;
  try {
    return { at, reading: await o.sources.query(at.profile, at.view, at.sources[at.next]!.id) };
  } catch (error) {
    return { at, error };
  }
}

/**
 * One stage's readings in ONE transaction (one COMMIT); if any is refused that transaction
 * changed nothing, and each is recorded alone instead, so one refusal never costs the others.
 */
async function recordAll(
  o: Visitor,
  asked: readonly Asked[],
): Promise<PromiseSettledResult<ObserveResult | undefined>[]> {
  const readings = asked.flatMap((a) => (a.reading === undefined ? [] : [a.reading.observation]));
  try {
    const results = await o.service.observeAll(readings, o.requestedBy);
    let next = 0;
    return asked.map((a) => ({ status: 'fulfilled', value: a.reading && results[next++] }));
  } catch {
    // Not swallowed: the member that was refused is refused again alone, and its own error is
    // what the visit reports (a store failure likewise fails each member's own attempt).
    return Promise.allSettled(
      asked.map(async (a) =>
        a.reading === undefined ? undefined : recordReading(o.service, a.reading, o.requestedBy),
      ),
    );
  }
}

/** Record one stage's readings at once; what stays open asks its next source in the next stage. */
async function record(o: Visitor, asked: readonly Asked[], onProgress: StageOptions['onProgress']) {
  const recorded = await recordAll(o, asked);
  const open: Open[] = [];
  recorded.forEach((r, i) => {
    const { at, reading, error } = asked[i]!;
    if (r.status === 'rejected' || r.value === undefined || reading === undefined) {
      at.visit.error = r.status === 'rejected' ? (r.reason as unknown) : error;
      return;
    }
    const result = r.value;
    const source = at.sources[at.next]!;
    at.visit.asks += 1;
    at.visit.retryAfter = reading.retryAfter ?? at.visit.retryAfter;
    at.visit.resolved = !result.occurrence.unresolved;
    onProgress(readingProgress(source, reading, result));
    const more = !result.effective && result.occurrence.unresolved && at.next + 1 < at.sources.length;
    if (more) open.push({ ...at, next: at.next + 1, view: result.occurrence });
  });
  return open;
}

export async function visitInStages(
  o: Visitor,
  occurrences: readonly OccurrenceView[],
  options: StageOptions,
): Promise<Map<string, StagedVisit>> {
  const visits = new Map<string, StagedVisit>();
  let open: Open[] = [];
  for (const view of occurrences) {
    const visit: StagedVisit = { occurrenceId: view.id, started: false, asks: 0, resolved: !view.unresolved };
    visits.set(view.id, visit);
    const at = await opened(o, view, visit);
    if (at !== undefined) open.push(at);
  }
  while (open.length > 0 && !options.stopped()) {
    const asked = await bounded(open, options.concurrency, options.stopped, (at) => ask(o, at));
    open = await record(o, asked, options.onProgress);
  }
  return visits;
}
