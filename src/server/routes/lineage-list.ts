/**
 * `GET /v1/lineages`: every lineage, a page at a time in id order (the console's lineages list,
 * issue 14 §3), by keyset over the primary key (src/store/lineages-list.ts). The cursor holds the
 * last id, authenticated (src/core/cursor.ts); any other is refused, never read as "start over".
 * Operators only: an executor reads its own lineage at /v1/lineages/{lineage}.
 */
import { BatonError } from '../../core/errors.js';
import { NAME } from '../../occurrences/validate.js';
import { pageLineages } from '../../store/lineages-list.js';
import { listScope } from '../../core/cursor.js';
import { CURSOR_PARAM, CURSOR_SCHEMA } from '../cursor.js';
import { timed, type RouteSpec, type ServerDeps } from '../route.js';
import { array, count, epochMs, nullable, object, pageLimit500 } from '../schemas/common.js';

export const DEFAULT_LINEAGE_PAGE = 50;

const listQuery = object(
  {
    cursor: CURSOR_SCHEMA,
    limit: pageLimit500(DEFAULT_LINEAGE_PAGE),
  },
  ['cursor', 'limit'],
);

const lineagePage = object({
  lineages: array(
    object({ id: { type: 'string' }, generation: count, createdAt: epochMs, updatedAt: epochMs }),
  ),
  nextCursor: nullable({ type: 'string' }),
});

/**
 * The scope of `GET /v1/lineages` cursors (src/core/cursor.ts): the list has no filter to bind
 * (its query is `cursor` and `limit`, and `limit` is not bound), so every query is the same one.
 */
const LINEAGES_SCOPE = listScope('lineages');

const decodeLineageCursor = (deps: ServerDeps, cursor: string): string =>
  deps.cursors.read(LINEAGES_SCOPE, cursor, CURSOR_PARAM, (k) =>
    k.length === 1 && typeof k[0] === 'string' && NAME.test(k[0]) ? k[0] : undefined,
  );

export function lineageListRoutes(deps: ServerDeps): RouteSpec[] {
  return [
    {
      method: 'GET',
      url: '/v1/lineages',
      operationId: 'listLineages',
      summary: 'Every lineage, in id order, a page at a time (cursor)',
      tag: 'lineages',
      roles: ['operator'],
      schema: { querystring: listQuery, response: { 200: lineagePage } },
      handler: async (input) => {
        const limit = Number(input.query['limit'] ?? DEFAULT_LINEAGE_PAGE);
        if (limit > 500) throw new BatonError('input_invalid', 'limit must be 1..500', { path: '$.limit' });
        const cursor = input.query['cursor'];
        const after = cursor === undefined ? undefined : decodeLineageCursor(deps, cursor);
        // One row more than the page says whether another page exists, without a COUNT.
        const rows = await timed(deps, 'list_lineages', () =>
          deps.engine.read((ex) => pageLineages(ex, after, limit + 1)),
        );
        const page = rows.slice(0, limit);
        const last = page.at(-1);
        const nextCursor =
          rows.length > limit && last !== undefined ? deps.cursors.issue(LINEAGES_SCOPE, [last.id]) : null;
        return { body: { lineages: page, nextCursor } };
      },
    },
  ];
}
