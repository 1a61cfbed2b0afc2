/**
 * Lineages: takeover (AOC-REQ-006) and the queries a successor needs before it acts (AOC-REQ-005).
 * Takeover is an operator act: it retires the current executor generation, so an executor can
 * never take over its own lineage, let alone another's.
 */
import { BatonError } from '../../core/errors.js';
import { actorOf } from '../auth.js';
import { param, timed, tokenOf, type HandlerInput, type RouteSpec, type ServerDeps } from '../route.js';
import { lineageParams } from '../schemas/common.js';
import { emptyBody } from '../schemas/inputs.js';
import { lineageView, openWork, takeoverResult } from '../schemas/records.js';

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
      summary: 'Advance the generation, retire the predecessor, issue the successor’s credential',
      tag: 'lineages',
      roles: ['operator'],
      schema: { params: lineageParams, body: emptyBody, response: { 201: takeoverResult } },
      handler: async (input) => {
        const lineage = param(input, 'lineage');
        const actor = actorOf(tokenOf(input));
        const result = await timed(deps, 'takeover', () => svc.takeover({ lineage }, actor));
        return { status: 201, body: result };
      },
    },
    {
      method: 'GET',
      url: '/v1/lineages/:lineage',
      operationId: 'getLineage',
      summary: 'A lineage: its current and retired generations and its evidence',
      tag: 'lineages',
      roles: ['operator', 'executor'],
      schema: { params: lineageParams, response: { 200: lineageView } },
      handler: async (input) => {
        const lineage = visibleLineage(input);
        return { body: await timed(deps, 'get_lineage', () => svc.getLineage(lineage)) };
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
