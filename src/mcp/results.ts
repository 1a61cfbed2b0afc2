/**
 * What the gateway answers the agent: the upstream's result with Baton's occurrence in `_meta`, or
 * a tool error naming Baton's code (and, when in doubt, the occurrence id and the missing knowledge).
 * The member names are stable: docs/mcp.md "What the agent sees".
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../core/json.js';
import type { OccurrenceView } from '../occurrences/index.js';

export const META_OCCURRENCE = 'baton/occurrence';
export const META_ERROR = 'baton/error';
export const META_CONSEQUENTIAL = 'baton/consequential';

export interface OccurrenceFacts {
  /** True when this answer is for a repeat of an earlier call (nothing was sent upstream now). */
  readonly repeat: boolean;
  readonly missingKnowledge?: string | null;
  /** Whether the upstream's own answer is what this result carries (false: it was lost). */
  readonly upstreamAnswer: boolean;
  readonly readTool?: JsonObject;
}

export function occurrenceMeta(o: OccurrenceView, facts: OccurrenceFacts): JsonObject {
  return {
    id: o.id,
    lineage: o.lineage,
    generation: o.enteredGeneration ?? o.capturedGeneration,
    phase: o.phase,
    outcome: o.outcome,
    effect: o.effect,
    unresolved: o.unresolved,
    conflict: o.conflict,
    providerReference: o.provider.providerReference,
    repeat: facts.repeat,
    upstreamAnswer: facts.upstreamAnswer,
    missingKnowledge: o.unresolved ? (facts.missingKnowledge ?? null) : null,
    ...(facts.readTool === undefined ? {} : { readTool: facts.readTool }),
  };
}

export function withOccurrence(
  result: CallToolResult,
  o: OccurrenceView,
  facts: OccurrenceFacts,
): CallToolResult {
  return { ...result, _meta: { ...(result._meta ?? {}), [META_OCCURRENCE]: occurrenceMeta(o, facts) } };
}

export interface ToolErrorFacts {
  readonly occurrence?: OccurrenceView;
  readonly facts?: OccurrenceFacts;
  readonly details?: JsonObject;
}

export function toolError(code: string, message: string, x: ToolErrorFacts = {}): CallToolResult {
  const o = x.occurrence;
  const facts = x.facts ?? { repeat: false, upstreamAnswer: false };
  const error: JsonObject = {
    code,
    message,
    ...(o === undefined ? {} : { occurrenceId: o.id }),
    ...(o?.unresolved === true ? { missingKnowledge: facts.missingKnowledge ?? null } : {}),
    ...(x.details ?? {}),
  };
  return {
    isError: true,
    content: [
      { type: 'text', text: `baton: ${code}: ${message}${o === undefined ? '' : ` (occurrence ${o.id})`}` },
    ],
    _meta: {
      [META_ERROR]: error,
      ...(o === undefined ? {} : { [META_OCCURRENCE]: occurrenceMeta(o, facts) }),
    },
  };
}
