/**
 * Provider entry's Mission read for the common answer, `continue` (issue 11 §8, build spec A3.6):
 * ONE statement that locks the governed occurrence's Mission view, then its work item (the
 * harness's lock order, as missions-entry-gate.ts explains per engine), and returns only the
 * columns `entryContinues` decides on, plus the item's session taint (HAR-29). A whole item and
 * view (some forty columns, two JSON documents) cost several times this read and its row objects;
 * only a stop needs them, and reads them then (`lockEntryGate`, the same rows, already locked).
 * The columns come back as ONE JSON array: the driver builds a row object property by property,
 * which for fifteen columns costs more than parsing their JSON text once (issue 11 §8).
 */
import type { EntryFacts, MissionBinding, SubagentHandle } from '../missions/index.js';
import { BatonError } from '../core/errors.js';
import type { Transaction } from './engine.js';
import { json, num, numOrNull } from './occurrences-rows.js';

type Int = number | string;
type Item = NonNullable<EntryFacts['item']>;

/** The facts array, in FACTS order. */
type Facts = [
  vOrigin: string | null,
  vState: string | null,
  vSource: 'status' | 'signal' | null,
  vHash: string | null,
  vChecked: Int | null,
  vFresh: Int | null,
  vExpiry: Int | null,
  iId: string | null,
  iState: Item['state'] | null,
  iHold: Int | null,
  iExpires: Int | null,
  iSession: string | null,
  iClass: Item['actionClass'] | null,
  iBinding: string | null,
  iParent: string | null,
  iHandle: string | null,
  sTainted: Int | null,
];

const VIEW = [
  'origin',
  'state',
  'state_source',
  'authority_hash',
  'checked_at',
  'fresh_until',
  'mission_expiry',
];
const ITEM = [
  'id',
  'state',
  'hold',
  'expires_at',
  'session_id',
  'action_class',
  'binding',
  'parent_id',
  'handle',
];
const FACTS = [...VIEW.map((c) => `v.${c}`), ...ITEM.map((c) => `i.${c}`), 's.tainted'].join(', ');

// SQLite: the write transaction holds the one writer lock, so plain LEFT JOINs suffice.
const SQLITE = `SELECT json_array(${FACTS}) AS facts
  FROM msn_occurrence_gates g
  LEFT JOIN msn_views v ON v.origin = g.mission_origin AND v.mission_id = g.mission_id
  LEFT JOIN msn_items i ON i.id = g.work_item_id
  LEFT JOIN msn_sessions s ON s.id = i.session_id
  WHERE g.occurrence_id = ?`;

// PostgreSQL: each locked row from a LATERAL sub-select with its own FOR UPDATE, view first; the
// session is read, not locked, as the full check's getSession reads it (a taint moves the item,
// which this statement locks, so an entry that waited for a taint sees the item stopped).
const POSTGRES = `SELECT json_build_array(${FACTS})::text AS facts
  FROM msn_occurrence_gates g
  LEFT JOIN LATERAL (SELECT ${VIEW.join(', ')} FROM msn_views
    WHERE origin = g.mission_origin AND mission_id = g.mission_id FOR UPDATE) v ON true
  LEFT JOIN LATERAL (SELECT ${ITEM.join(', ')} FROM msn_items
    WHERE id = g.work_item_id AND v.origin IS NOT NULL FOR UPDATE) i ON true
  LEFT JOIN msn_sessions s ON s.id = i.session_id
  WHERE g.occurrence_id = ?`;

/**
 * Parsed bindings by their stored text: the items of one Mission share one binding text, and
 * parsing it again for every entry cost more than the rest of the facts (issue 11 §8). Bounded;
 * the objects are shared, so nothing may change them (their type is readonly throughout).
 */
const bindings = new Map<string, MissionBinding>();

function bindingOf(text: string): MissionBinding {
  let parsed = bindings.get(text);
  if (parsed === undefined) {
    if (bindings.size >= 256) bindings.clear();
    parsed = Object.freeze(json<MissionBinding>(text));
    bindings.set(text, parsed);
  }
  return parsed;
}

function factsOf(f: Facts): EntryFacts {
  // Indexed, not destructured: an array iterator per entry costs more than the rest of this function.
  const view =
    f[0] === null
      ? undefined
      : {
          state: f[1],
          stateSource: f[2],
          authorityHash: f[3],
          checkedAt: numOrNull(f[4]),
          freshUntil: numOrNull(f[5]),
          missionExpiry: numOrNull(f[6]),
        };
  const item =
    f[7] === null || f[8] === null || f[12] === null || f[9] === null
      ? undefined
      : {
          id: f[7],
          state: f[8],
          hold: num(f[9]) !== 0,
          expiresAt: numOrNull(f[10]),
          sessionId: f[11],
          actionClass: f[12],
          binding: f[13] === null ? null : bindingOf(f[13]),
          parentId: f[14],
          // Parsed only for a sub-agent handle, which the full check decides anyway (HAR-21).
          handle: f[15] === null ? null : json<SubagentHandle>(f[15]),
        };
  return { view, item, sessionTainted: f[16] !== null && num(f[16]) !== 0 };
}

/** The facts of `occurrenceId`'s Mission check (undefined: the occurrence is not governed). */
export async function lockEntryFacts(tx: Transaction, occurrenceId: string): Promise<EntryFacts | undefined> {
  const row = await tx.get<{ facts: string }>(tx.forUpdate === '' ? SQLITE : POSTGRES, [occurrenceId]);
  if (row === undefined) return undefined;
  const facts = json<unknown>(row.facts);
  if (!Array.isArray(facts) || facts.length !== 17)
    throw new BatonError('store_corrupt', 'the entry facts are not the array they were read as');
  return factsOf(facts as Facts);
}
