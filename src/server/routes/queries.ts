/**
 * Operator queries over the whole domain: occurrence counts and the evidence log (DESIGN.md §2):
 * one subject's chain, a page at a time, and a re-walk of every chain (`baton log verify` over
 * HTTP).
 */
import { BatonError } from '../../core/errors.js';
import { pageEvidence, type EvidenceEvent } from '../../store/evidence-log.js';
import { verifyEvidence } from '../../store/evidence-verify.js';
import { chainScope, CURSOR_PARAM, CURSOR_SCHEMA } from '../cursor.js';
import { timed, type RouteSpec, type ServerDeps } from '../route.js';
import {
  array,
  bool,
  count,
  evidenceEvent,
  NO_NUL_PATTERN,
  nullable,
  object,
  pageLimit500,
} from '../schemas/common.js';
import { counts } from '../schemas/records.js';

/** `GET /v1/evidence` pages as `GET /v1/lineages` and `GET /v1/occurrences` do: 1..500, default 50. */
export const DEFAULT_EVIDENCE_PAGE = 50;
export const MAX_EVIDENCE_PAGE = 500;

/** The paging members of a chain's query string (optional both): `cursor` and `limit`. */
export const evidencePageQuery = {
  cursor: CURSOR_SCHEMA,
  // MAX_EVIDENCE_PAGE is 500: the pattern admits exactly 1..500.
  limit: pageLimit500(DEFAULT_EVIDENCE_PAGE),
} as const;

const subjectQuery = object(
  {
    subject: { type: 'string', minLength: 1, maxLength: 512, pattern: NO_NUL_PATTERN },
    ...evidencePageQuery,
  },
  ['cursor', 'limit'],
);

const evidencePage = object({
  subject: { type: 'string' },
  events: array(evidenceEvent),
  nextCursor: nullable({ type: 'string' }),
});

/** A chain cursor: the chain position (idx, from 1) of the last event listed, for that chain only. */
const decodeEvidenceCursor = (deps: ServerDeps, subject: string, cursor: string): number =>
  deps.cursors.read(chainScope(subject), cursor, CURSOR_PARAM, (k) =>
    k.length === 1 && Number.isSafeInteger(k[0]) && (k[0] as number) >= 1 ? (k[0] as number) : undefined,
  );

/** The cursor of the page of `subject`'s chain after `position` (what `chainPageRequest` reads). */
export const chainCursor = (deps: ServerDeps, subject: string, position: number): string =>
  deps.cursors.issue(chainScope(subject), [position]);

/**
 * The query's `limit` (1..500, default 50) and the position in `subject`'s chain its `cursor`
 * names (0 without one); a limit above 500 or a cursor Baton did not issue for this chain is
 * `input_invalid`.
 */
export function chainPageRequest(
  deps: ServerDeps,
  subject: string,
  query: Readonly<Record<string, string>>,
): { after: number; limit: number } {
  const limit = Number(query['limit'] ?? DEFAULT_EVIDENCE_PAGE);
  if (limit > MAX_EVIDENCE_PAGE) {
    throw new BatonError('input_invalid', `limit must be 1..${MAX_EVIDENCE_PAGE}`, { path: '$.limit' });
  }
  const cursor = query['cursor'];
  return { after: cursor === undefined ? 0 : decodeEvidenceCursor(deps, subject, cursor), limit };
}

/**
 * One page of `subject`'s chain, oldest first, under the query's `limit` and `cursor`
 * (`evidencePageQuery`). One event more than the page is read to say whether the chain goes on,
 * without a COUNT: `nextCursor` is null only on the chain's last page, so a page is never taken
 * for the whole chain.
 */
export async function readEvidencePage(
  deps: ServerDeps,
  subject: string,
  query: Readonly<Record<string, string>>,
): Promise<{ events: EvidenceEvent[]; nextCursor: string | null }> {
  const { after, limit } = chainPageRequest(deps, subject, query);
  const rows = await timed(deps, 'list_evidence', () =>
    deps.engine.read((ex) => pageEvidence(ex, subject, after, limit + 1)),
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const nextCursor = rows.length > limit && last !== undefined ? chainCursor(deps, subject, last.idx) : null;
  return { events: page.map(({ idx: _idx, ...event }) => event), nextCursor };
}

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
      summary:
        'The evidence chain of one subject (occurrence:<id>, lineage:<id>, authority:<id>, …), oldest first, a page at a time (cursor)',
      tag: 'evidence',
      roles: ['operator'],
      schema: { querystring: subjectQuery, response: { 200: evidencePage } },
      handler: async (input) => {
        const subject = input.query['subject'] ?? '';
        return { body: { subject, ...(await readEvidencePage(deps, subject, input.query)) } };
      },
    },
    {
      method: 'GET',
      url: '/v1/evidence/verify',
      operationId: 'verifyEvidence',
      summary:
        'Re-walk every chain of the evidence log, compare the occurrence and authority rows with their chains, and report the first problem',
      tag: 'evidence',
      roles: ['operator'],
      schema: { response: { 200: chainReport } },
      handler: async () => ({
        body: await timed(deps, 'verify_evidence', () => verifyEvidence(deps.engine)),
      }),
    },
  ];
}
