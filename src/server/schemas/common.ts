/**
 * JSON Schema building blocks shared by the route files. The same objects drive Fastify's request
 * validation and response serialization and the OpenAPI document (src/server/openapi.ts), so the
 * published contract is the one the server enforces. The occurrences service re-checks every input
 * with its strict readers; these schemas are the first, documented fence, never the only one.
 */
import { NAME_PATTERN } from '../../core/names.js';

export type Schema = Readonly<Record<string, unknown>>;

/** The services' identifier rule (src/core/names.ts, which their readers use too). */
export { NAME_PATTERN };

export const name: Schema = { type: 'string', pattern: NAME_PATTERN, maxLength: 128 };
/** Free text: any characters but U+0000 (docs/api.md "Text"; the service refuses it too). */
export const NO_NUL_PATTERN = '^[^\\u0000]*$';

/**
 * A page's `limit` query member (a string: the query is text) admitting exactly 1..500, the bound
 * the routes enforce: the pattern itself states it, so a client generated from /openapi.json
 * never sends a limit the document calls valid and the server refuses (501..999 once passed).
 */
export function pageLimit500(defaultLimit: number): Schema {
  return {
    type: 'string',
    pattern: '^(?:[1-9][0-9]?|[1-4][0-9]{2}|500)$',
    description: `1..500, default ${defaultLimit}`,
  };
}
export const text: Schema = { type: 'string', minLength: 1, maxLength: 512, pattern: NO_NUL_PATTERN };
export const int: Schema = { type: 'integer' };
export const count: Schema = { type: 'integer', minimum: 0 };
export const bool: Schema = { type: 'boolean' };
export const epochMs: Schema = { type: 'integer', description: 'Unix time in milliseconds' };
export const digest: Schema = { type: 'string', pattern: '^sha-256:[A-Za-z0-9_-]{43}$' };
/** Any JSON value (evidence bodies, provider answers). */
export const anyJson: Schema = {};
export const anyObject: Schema = { type: 'object', additionalProperties: true };

export function nullable(schema: Schema): Schema {
  const type = schema['type'];
  if (typeof type !== 'string') return { anyOf: [schema, { type: 'null' }] };
  const { type: _t, ...rest } = schema;
  const extra = 'enum' in rest ? { enum: [...(rest['enum'] as unknown[]), null] } : {};
  return { ...rest, ...extra, type: [type, 'null'] };
}

export function oneOf(values: readonly string[]): Schema {
  return { type: 'string', enum: [...values] };
}

/** An object with exactly these members; `optional` names the ones that may be absent. */
export function object(
  properties: Readonly<Record<string, Schema>>,
  optional: readonly string[] = [],
): Schema {
  return {
    type: 'object',
    additionalProperties: false,
    required: Object.keys(properties).filter((k) => !optional.includes(k)),
    properties,
  };
}

export function array(items: Schema, maxItems?: number): Schema {
  return maxItems === undefined ? { type: 'array', items } : { type: 'array', items, maxItems };
}

export const problem: Schema = {
  ...object(
    {
      type: { type: 'string' },
      title: { type: 'string' },
      status: int,
      detail: { type: 'string' },
      code: { type: 'string' },
      retryable: bool,
      details: anyObject,
    },
    ['details'],
  ),
  description: 'RFC 9457 problem details (application/problem+json)',
};

export const evidenceEvent: Schema = object({
  seq: count,
  subject: { type: 'string' },
  type: { type: 'string' },
  body: anyJson,
  at: epochMs,
  actor: { type: 'string' },
  prev: nullable({ type: 'string' }),
  hash: { type: 'string' },
});

export const idParams: Schema = object({ id: name });
export const lineageParams: Schema = object({ lineage: name });
export const noBody: Schema = { type: 'null', description: 'no body' };
