/**
 * The OpenAPI 3.1 document, derived from the very route specs the server registers (route.ts), so
 * every path, role, body, parameter and response it lists is the schema Fastify enforces.
 */
import { problem, type Schema } from './schemas/common.js';
import type { RouteSpec } from './route.js';

type Doc = Record<string, unknown>;

const PROBLEM_REF = { $ref: '#/components/schemas/Problem' };

function propertiesOf(schema: Schema | undefined): [string, Schema, boolean][] {
  if (schema === undefined) return [];
  const props = (schema['properties'] ?? {}) as Record<string, Schema>;
  const required = (schema['required'] ?? []) as string[];
  return Object.entries(props).map(([n, s]) => [n, s, required.includes(n)]);
}

function parameters(spec: RouteSpec): Doc[] {
  const path = propertiesOf(spec.schema.params).map(([n, schema]) => ({
    name: n,
    in: 'path',
    required: true,
    schema,
  }));
  const query = propertiesOf(spec.schema.querystring).map(([n, schema, required]) => ({
    name: n,
    in: 'query',
    required,
    schema,
  }));
  return [...path, ...query];
}

function acceptsNull(schema: Schema): boolean {
  const type = schema['type'];
  return type === 'null' || (Array.isArray(type) && type.includes('null'));
}

function operation(spec: RouteSpec): Doc {
  const responses: Doc = {};
  for (const [status, schema] of Object.entries(spec.schema.response)) {
    const type = spec.produces ?? 'application/json';
    const description =
      status === '201' ? 'Created' : status === '202' ? 'Accepted' : status >= '400' ? 'Refused' : 'OK';
    responses[status] = { description, content: { [type]: { schema } } };
  }
  const problemResponse = (description: string): Doc => ({
    description,
    content: { 'application/problem+json': { schema: PROBLEM_REF } },
  });
  responses['4XX'] = problemResponse('Refused: see `code` (docs/api.md)');
  responses['5XX'] = problemResponse('Server or store failure');
  const body = spec.schema.body;
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    tags: [spec.tag],
    security: spec.roles === 'public' && spec.auth === undefined ? [] : [{ bearer: [] }],
    'x-baton-roles':
      spec.roles === 'public'
        ? spec.auth === 'ssf-stream'
          ? ['ssf-transmitter']
          : []
        : [...new Set([...spec.roles, ...(spec.roles.includes('operator') ? ['admin'] : [])])],
    parameters: parameters(spec),
    ...(body === undefined
      ? {}
      : {
          requestBody: {
            required: !acceptsNull(body),
            content: Object.fromEntries(
              [spec.consumes ?? 'application/json', ...(spec.alsoConsumes ?? [])].map((type) => [
                type,
                { schema: body },
              ]),
            ),
          },
        }),
    responses,
  };
}

export function openApiDocument(routes: readonly RouteSpec[], version: string): Doc {
  const paths: Record<string, Doc> = {};
  for (const spec of routes) {
    const path = spec.url.replace(/:([A-Za-z]+)/g, '{$1}');
    paths[path] = { ...paths[path], [spec.method.toLowerCase()]: operation(spec) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Baton API',
      version,
      description: 'The coordination boundary between replaceable workers and providers (docs/api.md).',
    },
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'btk.<id>.<secret> principal token or an executor credential',
        },
      },
      schemas: { Problem: problem },
    },
  };
}
