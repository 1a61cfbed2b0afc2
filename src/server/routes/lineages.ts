/**
 * Lineages: takeover (AOC-REQ-006) and the queries a successor needs before it acts (AOC-REQ-005).
 * Takeover is an operator act: it retires the current executor generation, so an executor can
 * never take over its own lineage, let alone another's.
 */
import { BatonError } from '../../core/errors.js';
import { lineageSubject } from '../../occurrences/machine/common.js';
import { actorOf } from '../auth.js';
import {
  bodyObject,
  param,
  timed,
  tokenOf,
  type HandlerInput,
  type RouteSpec,
  type ServerDeps,
} from '../route.js';
import { lineageParams, object } from '../schemas/common.js';
import { takeoverBody } from '../schemas/inputs.js';
import { lineageView, openWork, takeoverResult } from '../schemas/records.js';
import { chainCursor, chainPageRequest, evidencePageQuery } from './queries.js';

/**
 * The lineage's history gains a generation and a takeover event with every takeover, so it is
 * answered a page at a time as `GET /v1/evidence?subject=lineage:<id>` is (`limit` 1..500, default
 * 50; `cursor`, the same chain-position cursor): `evidenceNextCursor` is null only on the last page.
 */
const lineagePageQuery = object({ ...evidencePageQuery }, ['cursor', 'limit']);

/** An executor may read only its own lineage: naming another is `403 forbidden`. */
export function ownLineageOnly(input: HandlerInput, lineage: string): void {
  const p = input.principal;
  if (p?.kind === 'executor' && p.lineage !== lineage) {
    throw new BatonError('forbidden', 'an executor may read only its own lineage');
  }
}

function visibleLineage(input: HandlerInput): string {
  const lineage = param(input, 'lineage');
  ownLineageOnly(input, lineage);
  return lineage;
}

export function lineageRoutes(deps: ServerDeps): RouteSpec[] {
  const svc = deps.service;
  return [
    {
      method: 'POST',
      url: '/v1/lineages/:lineage/takeover',
      operationId: 'takeover',
      summary:
        'Advance the generation, retire the predecessor, issue the successor’s credential; with expectedGeneration, only if that is the current generation (else 409 generation_mismatch, nothing changed)',
      tag: 'lineages',
      roles: ['operator'],
      schema: { params: lineageParams, body: takeoverBody, response: { 201: takeoverResult } },
      handler: async (input) => {
        const lineage = param(input, 'lineage');
        const actor = actorOf(tokenOf(input));
        // The schema admitted an integer ≥ 0; the service checks it again and compares it inside
        // the takeover's own transaction, never against an earlier read.
        const expected = bodyObject(input)['expectedGeneration'] as number | undefined;
        const cmd = expected === undefined ? { lineage } : { lineage, expectedGeneration: expected };
        const result = await timed(deps, 'takeover', () => svc.takeover(cmd, actor));
        return { status: 201, body: result };
      },
    },
    {
      method: 'GET',
      url: '/v1/lineages/:lineage',
      operationId: 'getLineage',
      summary:
        'A lineage: its current generation and one page of its history — generations and takeover evidence, oldest first (limit, cursor; evidenceNextCursor null on the last page)',
      tag: 'lineages',
      roles: ['operator', 'executor'],
      schema: { params: lineageParams, querystring: lineagePageQuery, response: { 200: lineageView } },
      handler: async (input) => {
        const lineage = visibleLineage(input);
        // The lineage's history is its chain's positions: the cursors of GET /v1/evidence?subject=.
        const subject = lineageSubject(lineage);
        const page = chainPageRequest(deps, subject, input.query);
        const { nextAfter, ...view } = await timed(deps, 'get_lineage', () => svc.getLineage(lineage, page));
        const evidenceNextCursor = nextAfter === null ? null : chainCursor(deps, subject, nextAfter);
        return { body: { ...view, evidenceNextCursor } };
      },
    },
    {
      method: 'GET',
      url: '/v1/lineages/:lineage/open',
      operationId: 'listOpen',
      summary: 'The lineage’s reserved and unresolved occurrences (AOC-REQ-005)',
      tag: 'lineages',
      roles: ['operator', 'executor'],
      schema: { params: lineageParams, response: { 200: openWork } },
      handler: async (input) => {
        const lineage = visibleLineage(input);
        const open = await timed(deps, 'list_open', () => svc.listOpen(lineage));
        return { body: { lineage, ...open } };
      },
    },
  ];
}
