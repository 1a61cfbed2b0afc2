/**
 * Setup reads (operator): every registered profile version and every authority budget, so
 * `baton profiles list`, `baton authorities list` and the SDK's AdminClient need no store access.
 * Lists are capped by `limit` (1..1000, default 1000) and say `truncated` when they were cut; the
 * authority budgets are also paged by cursor (`nextCursor`, as `GET /v1/lineages`), so every budget
 * can be reached however many there are (the console's budgets page, docs/console.md).
 */
import { MAX_LIST } from '../../occurrences/index.js';
import { NAME } from '../../occurrences/validate.js';
import { BatonError } from '../../core/errors.js';
import { listScope } from '../../core/cursor.js';
import { CURSOR_PARAM, CURSOR_SCHEMA } from '../cursor.js';
import { timed, type HandlerInput, type RouteSpec, type ServerDeps } from '../route.js';
import { array, bool, epochMs, nullable, object, type Schema } from '../schemas/common.js';
import { authority } from '../schemas/records.js';

const str: Schema = { type: 'string' };
const limitQuery = object({ limit: { type: 'string', pattern: '^[1-9][0-9]{0,3}$' } }, ['limit']);

export const profileSummary: Schema = object({
  id: str,
  version: str,
  digest: str,
  account: str,
  environment: str,
  registeredAt: epochMs,
});

const authorityQuery = object(
  { limit: { type: 'string', pattern: '^[1-9][0-9]{0,3}$' }, cursor: CURSOR_SCHEMA },
  ['limit', 'cursor'],
);

/**
 * The scope of `GET /v1/authorities` cursors (src/core/cursor.ts): the list has no filter (its
 * query is `limit` and `cursor`, and `limit` is not bound), so every query is the same one. The
 * position is the last budget's id, authenticated: any other cursor is refused, never read as
 * "start over" or as the end of the list.
 */
const AUTHORITIES_SCOPE = listScope('authorities');

function limitOf(input: HandlerInput): number | undefined {
  const text = input.query['limit'];
  if (text === undefined) return undefined;
  const n = Number(text);
  if (n > MAX_LIST) throw new BatonError('input_invalid', `limit: must be at most ${MAX_LIST}`);
  return n;
}

export function adminReadRoutes(deps: ServerDeps): RouteSpec[] {
  const svc = deps.service;
  return [
    {
      method: 'GET',
      url: '/v1/profiles',
      operationId: 'listProfiles',
      summary: 'Every registered provider profile version (id, version, digest), ordered by id and version',
      tag: 'profiles',
      roles: ['operator'],
      schema: {
        querystring: limitQuery,
        response: { 200: object({ profiles: array(profileSummary), truncated: bool }) },
      },
      handler: async (input) => {
        const listed = await timed(deps, 'list_profiles', () => svc.listProfiles(limitOf(input)));
        return { body: { profiles: listed.items, truncated: listed.truncated } };
      },
    },
    {
      method: 'GET',
      url: '/v1/authorities',
      operationId: 'listAuthorities',
      summary: 'Every authority budget (total, reserved, consumed), ordered by id',
      tag: 'authorities',
      roles: ['operator'],
      schema: {
        querystring: authorityQuery,
        response: {
          200: object({
            authorities: array(authority),
            truncated: bool,
            nextCursor: nullable({
              type: 'string',
              description: 'pass back as `cursor` for the next page; null: this page ends the list',
            }),
          }),
        },
      },
      handler: async (input) => {
        const cursor = input.query['cursor'];
        const after =
          cursor === undefined
            ? undefined
            : deps.cursors.read(AUTHORITIES_SCOPE, cursor, CURSOR_PARAM, (k) =>
                k.length === 1 && typeof k[0] === 'string' && NAME.test(k[0]) ? k[0] : undefined,
              );
        const listed = await timed(deps, 'list_authorities', () =>
          svc.listAuthorities(limitOf(input), after),
        );
        const last = listed.items.at(-1);
        const nextCursor =
          listed.truncated && last !== undefined ? deps.cursors.issue(AUTHORITIES_SCOPE, [last.id]) : null;
        return { body: { authorities: listed.items, truncated: listed.truncated, nextCursor } };
      },
    },
  ];
}
