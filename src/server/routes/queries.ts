/**
 * Operator queries over the whole domain: occurrence counts and the evidence log (DESIGN.md §2):
 * one subject's chain, and a re-walk of every chain (`baton log verify` over HTTP).
 */
import { listEvidence } from '../../store/evidence-log.js';
import { verifyEvidence } from '../../store/evidence-verify.js';
import { timed, type RouteSpec, type ServerDeps } from '../route.js';
import { array, bool, count, evidenceEvent, NO_NUL_PATTERN, nullable, object } from '../schemas/common.js';
import { counts } from '../schemas/records.js';

const subjectQuery = object({
  subject: { type: 'string', minLength: 1, maxLength: 512, pattern: NO_NUL_PATTERN },
});

const chainReport = object(
  {
    ok: bool,
    subjects: count,
    events: count,
    problems: count,
    firstBroken: object({ seq: count, subject: nullable({ type: 'string' }), reason: { type: 'string' } }),
  },
  ['firstBroken'],
);

export function queryRoutes(deps: ServerDeps): RouteSpec[] {
  return [
    {
      method: 'GET',
      url: '/v1/counts',
      operationId: 'counts',
      summary: 'Occurrence counts by phase and outcome, unresolved and conflicting',
      tag: 'queries',
      roles: ['operator'],
      schema: { response: { 200: counts } },
      handler: async () => ({ body: await timed(deps, 'counts', () => deps.service.counts()) }),
    },
    {
      method: 'GET',
      url: '/v1/evidence',
      operationId: 'listEvidence',
      summary: 'The evidence chain of one subject (occurrence:<id>, lineage:<id>, authority:<id>, …)',
      tag: 'evidence',
      roles: ['operator'],
      schema: {
        querystring: subjectQuery,
        response: { 200: object({ subject: { type: 'string' }, events: array(evidenceEvent) }) },
      },
      handler: async (input) => {
        const subject = input.query['subject'] ?? '';
        const events = await timed(deps, 'list_evidence', () =>
          deps.engine.read((ex) => listEvidence(ex, subject)),
        );
        return { body: { subject, events } };
      },
    },
    {
      method: 'GET',
      url: '/v1/evidence/verify',
      operationId: 'verifyEvidence',
      summary: 'Re-walk every chain of the evidence log and report the first break',
      tag: 'evidence',
      roles: ['operator'],
      schema: { response: { 200: chainReport } },
      handler: async () => ({
        body: await timed(deps, 'verify_evidence', () => verifyEvidence(deps.engine)),
      }),
    },
  ];
}
