/** Read-only queries, each in one consistent snapshot. */
import { digestBytes } from '../../core/digest.js';
import { BatonError } from '../../core/errors.js';
import { readName, readOccurrenceId } from '../inputs.js';
import { lineageSubject, occurrenceSubject, profileNotFound, type Caller } from '../machine/common.js';
import type {
  AuthorityRecord,
  DomainRecord,
  EvidenceEvent,
  LineageRecord,
  Outcome,
  Phase,
} from '../model.js';
import type { OccurrencesReader } from '../ports.js';
import { OUTCOMES, PHASES } from '../model.js';
import type { RegisteredProfile } from '../profile-types.js';
import type { OccurrenceView, ServiceContext } from './context.js';
import { authenticate, refuseUnlessOwn, view } from './context.js';

export interface OccurrenceDetail {
  readonly occurrence: OccurrenceView;
  /** The occurrence's whole evidence chain, oldest first. */
  readonly evidence: readonly EvidenceEvent[];
  /**
   * AOC-REQ-005: the takeovers that delivered this occurrence to a successor — its lineage's
   * `generation_advanced` events whose `delivered` lists it as reserved or unresolved — oldest first.
   */
  readonly handovers: readonly EvidenceEvent[];
}

/** Whether a takeover event's body lists this occurrence as delivered. */
export function deliversOccurrence(e: EvidenceEvent, id: string): boolean {
  if (e.type !== 'generation_advanced') return false;
  const body = e.body as { delivered?: { reserved?: unknown; unresolved?: unknown } } | null;
  const lists = [body?.delivered?.reserved, body?.delivered?.unresolved];
  return lists.some((l) => Array.isArray(l) && l.includes(id));
}

/**
 * One page of a lineage's history. Each takeover advances the generation by one, issues that
 * generation's credential and appends one `generation_advanced` event to `lineage:<id>`, so the
 * history has one position per takeover: generation n, its credential and the chain's n-th event.
 * Both grow with every takeover, so a view holds the positions `after + 1 .. after + limit` of
 * each; `nextAfter` is where the next page starts, null only on the last page.
 */
export interface LineageView {
  readonly id: string;
  /** The current generation (the lineage's row, read in the page's snapshot). */
  readonly generation: number;
  /**
   * Every generation of the lineage that a takeover retired, on every page: the lineage's, not
   * the page's, so no page (and no cursor) can show a lineage with retired generations as having
   * none. One number per takeover, read from the credentials' index.
   */
  readonly retiredGenerations: readonly number[];
  /** The page's generations: when each credential was issued and retired. */
  readonly credentials: readonly { generation: number; issuedAt: number; retiredAt: number | null }[];
  /** The page's events of the lineage's chain, oldest first. */
  readonly evidence: readonly EvidenceEvent[];
  readonly nextAfter: number | null;
}

/** Where a page of a lineage's history starts (after that position; 0: the first) and how long. */
export interface LineagePage {
  readonly after?: number;
  readonly limit?: number;
}

/** Positions per lineage page: 50 unless asked, at most 500 (as `GET /v1/evidence`). */
export const LINEAGE_PAGE = { default: 50, max: 500 } as const;

export interface OccurrenceCounts {
  readonly total: number;
  readonly byPhase: Readonly<Record<Phase, number>>;
  readonly byOutcome: Readonly<Record<Outcome, number>>;
  readonly unresolved: number;
  readonly conflicts: number;
}

export async function getOccurrence(ctx: ServiceContext, id: unknown): Promise<OccurrenceDetail> {
  const occurrenceId = readOccurrenceId(id);
  return ctx.uow.read(async (repo) => {
    const o = await repo.getOccurrence(occurrenceId);
    if (o === undefined) throw new BatonError('occurrence_not_found', 'no such occurrence');
    const evidence = await repo.listEvents(occurrenceSubject(o.id));
    // Through the handover index: the lineage's chain grows with every takeover, the occurrence's
    // handovers only with the takeovers it stayed open across. An indexed event that does not
    // list it is left out here and reported by the route's chain check (verifyHandovers).
    const named = await repo.listHandovers(o.id, o.lineage);
    return { occurrence: view(o), evidence, handovers: named.filter((e) => deliversOccurrence(e, o.id)) };
  });
}

/** The occurrence without its evidence chain (what an ownership check or a poll needs). */
export async function getOccurrenceView(ctx: ServiceContext, id: unknown): Promise<OccurrenceView> {
  const occurrenceId = readOccurrenceId(id);
  return ctx.uow.read(async (repo) => {
    const o = await repo.getOccurrence(occurrenceId);
    if (o === undefined) throw new BatonError('occurrence_not_found', 'no such occurrence');
    return view(o);
  });
}

/**
 * The occurrence as an executor may see it, with the executor it authenticated: the credential
 * lookup, the occurrence and the visibility rule in ONE snapshot (issue 16 §1: no separate
 * authentication read before a reconcile).
 */
export async function getOccurrenceViewAs(
  ctx: ServiceContext,
  id: unknown,
  credential: string,
): Promise<{ readonly occurrence: OccurrenceView; readonly caller: Caller }> {
  const occurrenceId = readOccurrenceId(id);
  return ctx.uow.read(async (repo) => {
    // One statement for both reads where the store offers it (issue 16 §2).
    await repo.prefetchView?.(digestBytes(credential), occurrenceId);
    const caller = await authenticate(repo, credential);
    return { occurrence: view(refuseUnlessOwn(caller, await repo.getOccurrence(occurrenceId))), caller };
  });
}

/** AOC-REQ-005: what the successor must be able to query before it acts. */
export async function listOpen(
  ctx: ServiceContext,
  lineage: unknown,
): Promise<{ reserved: OccurrenceView[]; unresolved: OccurrenceView[] }> {
  const id = readName(lineage, '$.lineage');
  return ctx.uow.read(async (repo) => {
    const open = await repo.listOccurrences({ lineage: id, phases: ['reserved', 'entered'] });
    return {
      reserved: open.filter((o) => o.phase === 'reserved').map(view),
      unresolved: open.filter((o) => o.phase === 'entered').map(view),
    };
  });
}

/**
 * The lineage's current executor generation, from its one row: what an in-process caller fences on
 * before acting (src/client/in-process-harness.ts), without the pages of credentials and evidence
 * `getLineage` answers, which grow with every takeover.
 */
export async function currentGeneration(ctx: ServiceContext, lineage: unknown): Promise<number> {
  const id = readName(lineage, '$.lineage');
  return ctx.uow.read(async (repo) => (await existingLineage(repo, id)).generation);
}

async function existingLineage(repo: OccurrencesReader, id: string): Promise<LineageRecord> {
  const l = await repo.getLineage(id);
  if (l === undefined) throw new BatonError('lineage_not_found', 'no such lineage');
  return l;
}

function readLineagePage(page: LineagePage): { after: number; limit: number } {
  const { after = 0, limit = LINEAGE_PAGE.default } = page;
  if (!Number.isSafeInteger(after) || after < 0)
    throw new BatonError('input_invalid', 'after must be a whole number, 0 or more', { path: '$.after' });
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > LINEAGE_PAGE.max)
    throw new BatonError('input_invalid', `limit must be 1..${LINEAGE_PAGE.max}`, { path: '$.limit' });
  return { after, limit };
}

/**
 * A page of the lineage's history (`LineageView`), in one snapshot. One position more than the
 * page is read of each list to say whether the history goes on, without a COUNT.
 */
export async function getLineage(
  ctx: ServiceContext,
  lineage: unknown,
  page: LineagePage = {},
): Promise<LineageView> {
  const id = readName(lineage, '$.lineage');
  const { after, limit } = readLineagePage(page);
  const end = after + limit;
  return ctx.uow.read(async (repo) => {
    const l = await existingLineage(repo, id);
    const creds = await repo.pageCredentials(id, after, limit + 1);
    const retiredGenerations = await repo.retiredGenerations(id);
    const events = await repo.pageEvents(lineageSubject(id), after, limit + 1);
    const shown = creds.filter((c) => c.generation <= end);
    const more = creds.length > shown.length || events.some((e) => e.idx > end);
    return {
      id,
      generation: l.generation,
      retiredGenerations,
      credentials: shown.map((c) => ({
        generation: c.generation,
        issuedAt: c.issuedAt,
        retiredAt: c.retiredAt,
      })),
      evidence: events.filter((e) => e.idx <= end).map(({ idx: _idx, ...event }) => event),
      nextAfter: more ? end : null,
    };
  });
}

export async function counts(ctx: ServiceContext): Promise<OccurrenceCounts> {
  return ctx.uow.read(async (repo) => {
    const rows = await repo.countByState();
    const byPhase = Object.fromEntries(PHASES.map((p) => [p, 0])) as Record<Phase, number>;
    const byOutcome = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
    let total = 0;
    let conflicts = 0;
    for (const r of rows) {
      byPhase[r.phase] += r.count;
      byOutcome[r.outcome] += r.count;
      total += r.count;
      if (r.conflict) conflicts += r.count;
    }
    return { total, byPhase, byOutcome, unresolved: byPhase.entered, conflicts };
  });
}

export async function getDomain(ctx: ServiceContext): Promise<DomainRecord> {
  const d = await ctx.uow.read((repo) => repo.getDomain());
  if (d === undefined) throw new BatonError('domain_not_found', 'the coordination domain is not configured');
  return d;
}

export async function getAuthority(ctx: ServiceContext, id: unknown): Promise<AuthorityRecord> {
  const authorityId = readName(id, '$.authority');
  const a = await ctx.uow.read((repo) => repo.getAuthority(authorityId));
  if (a === undefined) throw new BatonError('authority_not_found', 'no such authority budget');
  return a;
}

export async function getProfile(
  ctx: ServiceContext,
  id: unknown,
  version: unknown,
): Promise<RegisteredProfile> {
  const pid = readName(id, '$.profileId');
  const ver = readName(version, '$.profileVersion');
  const p = await ctx.uow.read((repo) => repo.getProfile(pid, ver));
  if (p === undefined) {
    const refused = profileNotFound(pid, ver);
    throw new BatonError(refused.code, refused.message, refused.details);
  }
  return p;
}
