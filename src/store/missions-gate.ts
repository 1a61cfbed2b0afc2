/**
 * The Mission gate the occurrences repository calls inside its own `create` and `enter`
 * transactions (build spec A3.6), and the fail-closed gate used when no harness is wired.
 */
import { BatonError } from '../core/errors.js';
import type { JsonObject } from '../core/json.js';
import type { HeldWorkItem, HeldWorkItems, MissionGateView } from '../occurrences/index.js';
import type { Transaction } from './engine.js';
import { MissionsReaderSql } from './missions-repository.js';

/** What the occurrences repository calls inside its own transaction. */
export interface MissionGate {
  check(tx: Transaction, occurrenceId: string, actor: string): Promise<MissionGateView | undefined>;
  link(tx: Transaction, occurrenceId: string, workItemId: string, lineage: string): Promise<void>;
  /** The lineage's paused, suppressed and handed-off items (the takeover answer's `held`, A6). */
  held(tx: Transaction, lineage: string): Promise<HeldWorkItems>;
}

const HELD_STATES = ['paused', 'suppressed', 'handed_off'] as const;
/** The takeover answer lists at most this many held items (`heldMore` says there are more). */
export const HELD_PAGE = 1000;

/**
 * Read straight from the harness tables: held items exist whether or not a harness is wired now.
 * At most HELD_PAGE, oldest first; one row more says whether the answer is complete (`more`), so a
 * successor is never silently told less than there is.
 */
export async function heldWorkItems(tx: Transaction, lineage: string): Promise<HeldWorkItems> {
  const rows = await new MissionsReaderSql(tx).listItems({
    lineage,
    states: HELD_STATES,
    limit: HELD_PAGE + 1,
  });
  const items: HeldWorkItem[] = rows.slice(0, HELD_PAGE).map((i) => ({
    id: i.id,
    kind: i.kind,
    state: i.state as (typeof HELD_STATES)[number],
    actionClass: i.actionClass,
    binding: i.binding as unknown as JsonObject | null,
    version: i.version,
  }));
  return { items, more: rows.length > HELD_PAGE };
}

/**
 * Without a harness, a governed occurrence still never enters: fail closed with a recorded
 * `mission_status_unavailable` (A3.6), and governed creation is refused.
 */
export const NO_HARNESS: MissionGate = {
  async check(tx, occurrenceId) {
    const gate = await new MissionsReaderSql(tx).getGate(occurrenceId);
    if (gate === undefined) return undefined;
    return {
      decision: 'stop',
      code: 'mission_status_unavailable',
      release: false,
      checked: { work_item: gate.workItemId, decision: 'pause', reason: 'harness_not_configured' },
    };
  },
  held: heldWorkItems,
  link() {
    return Promise.reject(
      new BatonError('mission_status_unavailable', 'this Baton runs no harness: governed work is refused'),
    );
  },
};
