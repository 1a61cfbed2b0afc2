/**
 * Setup reads (operator): every registered profile version and every authority budget, so
 * `baton profiles list`, `baton authorities list` and the SDK's AdminClient need no store access.
 * Lists are capped by `limit` (1..1000, default 1000) and say `truncated` when they were cut.
 */
import { MAX_LIST } from '../../occurrences/index.js';
import { BatonError } from '../../core/errors.js';
import { timed, type HandlerInput, type RouteSpec, type ServerDeps } from '../route.js';
import { array, bool, epochMs, object, type Schema } from '../schemas/common.js';
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
        querystring: limitQuery,
        response: { 200: object({ authorities: array(authority), truncated: bool }) },
      },
      handler: async (input) => {
        const listed = await timed(deps, 'list_authorities', () => svc.listAuthorities(limitOf(input)));
        return { body: { authorities: listed.items, truncated: listed.truncated } };
      },
    },
  ];
}
