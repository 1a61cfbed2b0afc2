/**
 * Occurrence commands and the occurrence query (DESIGN.md §3, docs/api.md). Executor commands pass
 * the bearer credential to the service, which authenticates it again and decides inside one
 * transaction; the server's own checks (role, lineage ownership) only refuse earlier, never admit.
 */
import { BatonError } from '../../core/errors.js';
import { parseRfc3339 } from '../../core/time.js';
import type {
  CreateInput,
  EnterInput,
  ListInput,
  OccurrenceDetail,
  OccurrenceView,
  ReissueInput,
  ReleaseInput,
  RemedyInput,
} from '../../occurrences/index.js';
import {
  bodyObject,
  executorCredential,
  executorOf,
  param,
  timed,
  type HandlerInput,
  type RouteSpec,
  type ServerDeps,
} from '../route.js';
import { verifySubject, type SubjectVerification } from '../../store/evidence-verify.js';
import { verifyHandovers } from '../../store/handovers.js';
import { idParams } from '../schemas/common.js';
import { ownLineageOnly } from './lineages.js';
import { createBody, enterBody, reissueBody, releaseBody, remedyBody } from '../schemas/inputs.js';
import {
  createResult,
  entryTicket,
  listQuery,
  occurrenceDetail,
  occurrencePage,
  occurrenceResult,
} from '../schemas/records.js';

/**
 * The occurrence, if the caller may see it: operators see every occurrence, an executor only its
 * own lineage's. Another lineage's occurrence answers exactly like a missing one.
 */
function refuseOtherLineage(input: HandlerInput, lineage: string): void {
  const p = input.principal;
  if (p?.kind === 'executor-bearer') {
    // Fail closed: this route's command was declared to check the credential itself.
    throw new BatonError('internal', 'visibility checked for an executor that was not authenticated');
  }
  if (p?.kind === 'executor' && lineage !== p.lineage) {
    throw new BatonError('occurrence_not_found', 'no such occurrence');
  }
}

/** The occurrence with its evidence, for a caller allowed to see it. */
export async function visibleOccurrence(
  deps: ServerDeps,
  input: HandlerInput,
  id: string,
): Promise<OccurrenceDetail> {
  const detail = await timed(deps, 'get_occurrence', () => deps.service.getOccurrence(id));
  refuseOtherLineage(input, detail.occurrence.lineage);
  return detail;
}

/**
 * Refuse, before a command, an occurrence this caller may not see — another lineage's answers
 * exactly like a missing one. Reads the occurrence only, not its evidence; the service checks
 * again inside the command's transaction.
 */
export async function checkVisible(
  deps: ServerDeps,
  input: HandlerInput,
  id: string,
): Promise<OccurrenceView> {
  const o = await timed(deps, 'get_occurrence', () => deps.service.getOccurrenceView(id));
  refuseOtherLineage(input, o.lineage);
  return o;
}

/**
 * The lineage an executor's list is confined to: its own. Naming another lineage is refused as
 * reading that lineage is (`GET /v1/lineages/{lineage}`: `403 forbidden`), never answered with the
 * executor's own list as if the filter had been applied.
 */
function ownLineage(input: HandlerInput): string | undefined {
  const p = input.principal;
  if (p?.kind !== 'executor') return undefined;
  const named = input.query['lineage'];
  if (named !== undefined) ownLineageOnly(input, named);
  return p.lineage;
}

/** The query string as the service's list input; an executor sees only its own lineage. */
function listInput(input: HandlerInput): ListInput {
  const q = input.query;
  const time = (k: string): number | undefined =>
    q[k] === undefined ? undefined : parseRfc3339(q[k], `$.${k}`);
  const own = ownLineage(input);
  const named: Record<string, unknown> = {
    phase: q['phase'],
    outcome: q['outcome'],
    lineage: own ?? q['lineage'],
    profileId: q['profile'],
    creationKey: q['creationKey'],
    createdFrom: time('from'),
    createdBefore: time('to'),
    cursor: q['cursor'],
    limit: q['limit'] === undefined ? undefined : Number(q['limit']),
  };
  for (const k of Object.keys(named)) if (named[k] === undefined) delete named[k];
  return named;
}

function chainCheck(
  v: SubjectVerification,
  events: OccurrenceDetail['evidence'],
  scope: 'chain' | 'handovers',
): Record<string, unknown> {
  // An event is marked verified only as the check recomputed it: same seq and same hash.
  const verified = events.filter((e) => v.verified.get(e.seq) === e.hash).map((e) => e.seq);
  return {
    ok: v.ok,
    scope,
    problems: v.problems,
    verified,
    ...(v.firstBroken === undefined ? {} : { firstBroken: v.firstBroken }),
  };
}

/**
 * The detail with each chain it shows checked: the occurrence's own chain whole, by the store's
 * chain walker (the one `baton log verify` runs); its lineage's, where the handovers live, only
 * at the handovers — each one's content, its links to the events on either side and the chain's
 * recorded head (`verifyHandovers`) — because that chain grows with every takeover and a whole
 * walk per detail would too. Either check failing is `ok: false`; a handover is marked verified
 * only when all of its checks pass, so a broken one is never shown as verified.
 */
async function detailWithChains(deps: ServerDeps, d: OccurrenceDetail): Promise<Record<string, unknown>> {
  const o = d.occurrence;
  const [own, lineage] = await deps.engine.read(async (ex) => [
    await verifySubject(ex, `occurrence:${o.id}`),
    await verifyHandovers(ex, o.lineage, o.id),
  ]);
  return {
    ...d,
    chains: {
      occurrence: chainCheck(own, d.evidence, 'chain'),
      lineage: chainCheck(lineage, d.handovers, 'handovers'),
    },
  };
}

function createdStatus(created: boolean): number {
  return created ? 201 : 200;
}

export function occurrenceRoutes(deps: ServerDeps): RouteSpec[] {
  const svc = deps.service;
  return [
    {
      method: 'POST',
      url: '/v1/occurrences',
      operationId: 'createOccurrence',
      summary: 'Create, reserve and bind an occurrence (idempotent by creation key)',
      tag: 'occurrences',
      roles: ['executor'],
      // The service authenticates the credential in the create's own transaction (issue 16 §1).
      authenticatesExecutor: true,
      schema: { body: createBody, response: { 200: createResult, 201: createResult } },
      handler: async (input) => {
        const credential = executorCredential(input);
        const cmd = { ...bodyObject(input), credential } as unknown as CreateInput;
        const r = await timed(deps, 'create', () => svc.create(cmd));
        return { status: createdStatus(r.created), body: r };
      },
    },
    {
      method: 'GET',
      url: '/v1/occurrences',
      operationId: 'listOccurrences',
      summary:
        'A page of occurrences, newest first, by phase, outcome, lineage, profile, creation key or time',
      tag: 'occurrences',
      roles: ['operator', 'executor'],
      schema: { querystring: listQuery, response: { 200: occurrencePage } },
      handler: async (input) => ({
        body: await timed(deps, 'list_occurrences', () => svc.listOccurrences(listInput(input))),
      }),
    },
    {
      method: 'GET',
      url: '/v1/occurrences/:id',
      operationId: 'getOccurrence',
      summary:
        'One occurrence with its evidence chain (checked whole) and the handovers that delivered it (checked with their links and the lineage chain’s head)',
      tag: 'occurrences',
      roles: ['operator', 'executor'],
      schema: { params: idParams, response: { 200: occurrenceDetail } },
      handler: async (input) => {
        const detail = await visibleOccurrence(deps, input, param(input, 'id'));
        return { body: await timed(deps, 'verify_chain', () => detailWithChains(deps, detail)) };
      },
    },
    {
      method: 'POST',
      url: '/v1/occurrences/:id/enter',
      operationId: 'enterOccurrence',
      summary: 'Provider entry (compare-and-set); returns exactly what to send',
      tag: 'occurrences',
      roles: ['executor'],
      // Authentication and visibility (another lineage's occurrence answers like a missing one)
      // are decided inside the entry's own transaction (issue 16 §1).
      authenticatesExecutor: true,
      schema: { params: idParams, body: enterBody, response: { 200: entryTicket } },
      handler: async (input) => {
        const occurrenceId = param(input, 'id');
        const b = bodyObject(input);
        const cmd = { ...b, occurrenceId, credential: executorCredential(input) } as unknown as EnterInput;
        const ticket = await timed(deps, 'enter', () => svc.enter(cmd));
        deps.metrics.countEntry();
        return { body: ticket };
      },
    },
    {
      method: 'POST',
      url: '/v1/occurrences/:id/release',
      operationId: 'releaseOccurrence',
      summary: 'Pre-entry release; the occurrence stays as a tombstone',
      tag: 'occurrences',
      roles: ['executor'],
      schema: { params: idParams, body: releaseBody, response: { 200: occurrenceResult } },
      handler: async (input) => {
        const occurrenceId = param(input, 'id');
        await checkVisible(deps, input, occurrenceId);
        const cmd = { ...bodyObject(input), occurrenceId, credential: executorOf(input).credential };
        const occurrence = await timed(deps, 'release', () => svc.release(cmd as unknown as ReleaseInput));
        return { body: { occurrence } };
      },
    },
    {
      method: 'POST',
      url: '/v1/occurrences/:id/reissue',
      operationId: 'reissueOccurrence',
      summary: 'A new occurrence for a released one, linked to it',
      tag: 'occurrences',
      roles: ['executor'],
      schema: { params: idParams, body: reissueBody, response: { 200: createResult, 201: createResult } },
      handler: async (input) => {
        const occurrenceId = param(input, 'id');
        await checkVisible(deps, input, occurrenceId);
        const cmd = { ...bodyObject(input), occurrenceId, credential: executorOf(input).credential };
        const r = await timed(deps, 'reissue', () => svc.reissue(cmd as unknown as ReissueInput));
        return { status: createdStatus(r.created), body: r };
      },
    },
    {
      method: 'POST',
      url: '/v1/occurrences/:id/remedies',
      operationId: 'remedyOccurrence',
      summary: 'Compensation, refund or replacement: a new occurrence linked to an entered one',
      tag: 'occurrences',
      roles: ['executor'],
      schema: { params: idParams, body: remedyBody, response: { 200: createResult, 201: createResult } },
      handler: async (input) => {
        const remedyOf = param(input, 'id');
        await checkVisible(deps, input, remedyOf);
        const cmd = { ...bodyObject(input), remedyOf, credential: executorOf(input).credential };
        const r = await timed(deps, 'remedy', () => svc.remedy(cmd as unknown as RemedyInput));
        return { status: createdStatus(r.created), body: r };
      },
    },
  ];
}
