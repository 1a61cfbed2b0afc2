/**
 * `tools/list` is the upstream's, with Baton's annotations on consequential tools: `_meta` names the
 * policy that applies, `idempotentHint` is true (a repeat returns the original outcome), and the
 * native key argument is taken out of the input schema, since Baton supplies it (AOC-CASE-006).
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../core/json.js';
import { pointerTokens } from './pointer.js';
import type { ToolPolicy } from './policy.js';
import { META_CONSEQUENTIAL } from './results.js';

type Schema = { properties?: Record<string, unknown>; required?: unknown; [k: string]: unknown };

function isSchema(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * `schema` less the member at `tokens`, followed through `properties` at every level (a nested
 * native key such as `/options/idempotency_key` too): the member goes from its parent's `properties`
 * and from that parent's `required`. A path the schema does not spell out through `properties` is
 * left as it is — the arguments check (arguments.ts) excuses the key's absence wherever it is.
 */
function withoutMember(schema: Schema, tokens: readonly string[]): Schema {
  const [name, ...rest] = tokens;
  const properties = isSchema(schema.properties) ? schema.properties : undefined;
  if (name === undefined) return schema;
  if (rest.length > 0) {
    const child = properties?.[name];
    if (properties === undefined || !Object.hasOwn(properties, name) || !isSchema(child)) return schema;
    return { ...schema, properties: { ...properties, [name]: withoutMember(child, rest) } };
  }
  if (properties === undefined) return schema;
  const { [name]: _removed, ...kept } = properties;
  const required = Array.isArray(schema.required)
    ? { required: schema.required.filter((r) => r !== name) }
    : {};
  return { ...schema, properties: kept, ...required };
}

function withoutArgument(schema: Tool['inputSchema'], p: ToolPolicy): Tool['inputSchema'] {
  if (p.nativeKey?.to !== 'argument') return schema;
  const tokens = pointerTokens(p.nativeKey.pointer);
  if (tokens === undefined || tokens.length === 0) return schema;
  return withoutMember(schema, tokens) as Tool['inputSchema'];
}

/**
 * `missionsEnforced`: the gateway runs a MissionGate (`baton mcp` always does: mission-gate.ts);
 * only a gateway embedded without one shows a declared rule as `declared_not_enforced`.
 */
export function annotateTool(tool: Tool, p: ToolPolicy, lineage: string, missionsEnforced = false): Tool {
  const baton: JsonObject = {
    lineage,
    provider: { ...p.provider },
    authority: p.authority.id,
    creationKey: p.creationKey.from,
    nativeKey: p.nativeKey === null ? null : p.nativeKey.to,
    settledBy: p.settle.statusSources ? 'status_sources' : 'unsettled_without_status_sources',
    mission:
      p.mission === null
        ? null
        : missionsEnforced
          ? { enforcedBy: 'baton', meta: p.mission.meta, required: p.mission.required }
          : 'declared_not_enforced',
  };
  return {
    ...tool,
    inputSchema: withoutArgument(tool.inputSchema, p),
    annotations: { ...(tool.annotations ?? {}), idempotentHint: true },
    _meta: { ...(tool._meta ?? {}), [META_CONSEQUENTIAL]: baton },
  };
}
