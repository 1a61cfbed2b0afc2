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

function withoutArgument(schema: Tool['inputSchema'], p: ToolPolicy): Tool['inputSchema'] {
  if (p.nativeKey?.to !== 'argument') return schema;
  const tokens = pointerTokens(p.nativeKey.pointer);
  if (tokens?.length !== 1 || schema.properties === undefined) return schema;
  const name = tokens[0] as string;
  const { [name]: _removed, ...properties } = schema.properties;
  const required = schema.required?.filter((r) => r !== name);
  return { ...schema, properties, ...(required === undefined ? {} : { required }) };
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
