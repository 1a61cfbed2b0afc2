/** Principal tokens over HTTP (admin only); the same operations as `baton tokens`. */
import { listTokens, revokeToken } from '../../store/principals.js';
import { actorOf } from '../auth.js';
import { bodyObject, param, timed, tokenOf, type RouteSpec, type ServerDeps } from '../route.js';
import { array, epochMs, nullable, object, oneOf, type Schema } from '../schemas/common.js';
import { tokenBody } from '../schemas/inputs.js';
import { createToken } from '../tokens.js';

const str: Schema = { type: 'string' };
const tokenMembers = {
  id: str,
  name: str,
  role: oneOf(['operator', 'admin']),
  createdAt: epochMs,
  revokedAt: nullable(epochMs),
};
const tokenRecord = object(tokenMembers);
const createdToken = object({ ...tokenMembers, token: { type: 'string', description: 'shown once' } });

export function tokenRoutes(deps: ServerDeps): RouteSpec[] {
  return [
    {
      method: 'POST',
      url: '/v1/tokens',
      operationId: 'createToken',
      summary: 'Create an operator or admin token (the secret is shown once)',
      tag: 'tokens',
      roles: ['admin'],
      schema: { body: tokenBody, response: { 201: createdToken } },
      handler: async (input) => {
        const b = bodyObject(input) as { role: string; name?: string };
        const actor = actorOf(tokenOf(input));
        const created = await timed(deps, 'create_token', () =>
          createToken(deps.engine, b, { clock: deps.clock, actor }),
        );
        return { status: 201, body: created };
      },
    },
    {
      method: 'GET',
      url: '/v1/tokens',
      operationId: 'listTokens',
      summary: 'Every principal token (never a secret)',
      tag: 'tokens',
      roles: ['admin'],
      schema: { response: { 200: object({ tokens: array(tokenRecord) }) } },
      handler: async () => ({
        body: { tokens: await timed(deps, 'list_tokens', () => listTokens(deps.engine)) },
      }),
    },
    {
      method: 'DELETE',
      url: '/v1/tokens/:id',
      operationId: 'revokeToken',
      summary: 'Revoke a principal token (idempotent)',
      tag: 'tokens',
      roles: ['admin'],
      schema: {
        params: object({ id: { type: 'string', pattern: '^tok_[a-f0-9]{32}$' } }),
        response: { 200: tokenRecord },
      },
      handler: async (input) => {
        const id = param(input, 'id');
        const actor = actorOf(tokenOf(input));
        return {
          body: await timed(deps, 'revoke_token', () =>
            revokeToken(deps.engine, id, deps.clock.wallMs(), actor),
          ),
        };
      },
    },
  ];
}
