/**
 * What a session's takeover hands over (AOC-REQ-005): the lineage's open work, reported — to the
 * log and in the MCP `instructions` the agent reads at initialize — and never repeated. A repeat of
 * one of these calls is answered from Baton's state (docs/mcp.md "Sessions and generations").
 */
import type { Executor } from '../client/index.js';

export function handoverReport(ex: Executor): { line: string; instructions: string } {
  const { reserved, unresolved } = ex.handover;
  const ids = (list: readonly { id: string }[]): string =>
    list.length === 0 ? 'none' : list.map((o) => o.id).join(', ');
  const line =
    `mcp: took over lineage ${ex.lineage} as generation ${ex.generation}; ` +
    `predecessor's in-doubt calls: ${ids(unresolved)}; pre-entry reservations: ${ids(reserved)}`;
  const instructions =
    `Consequential tools pass through Baton (lineage ${ex.lineage}, executor generation ${ex.generation}). ` +
    'A repeated call returns the original outcome; Baton never sends a consequential call twice. ' +
    (unresolved.length === 0
      ? 'No calls of a previous session are in doubt.'
      : `Calls of a previous session still in doubt (not repeated): ${ids(unresolved)}.`) +
    // Both lists, as on stderr (docs/mcp.md "Sessions and generations"): a reservation's repeat is
    // released and reissued by this generation, sent once (AOC-REQ-005, -010).
    (reserved.length === 0
      ? ''
      : ` A previous session's pre-entry reservations (created, never entered or sent): ${ids(reserved)}; a repeat of one of those calls is reissued and sent once.`);
  return { line, instructions };
}
