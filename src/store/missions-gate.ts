/**
 * The Mission gate the occurrences repository calls inside its own `create` and `enter`
 * transactions (build spec A3.6), and the fail-closed gate used when no harness is wired.
 */
import { BatonError } from '../core/errors.js';
import type { MissionGateView } from '../occurrences/index.js';
import type { Transaction } from './engine.js';
import { MissionsReaderSql } from './missions-repository.js';

/** What the occurrences repository calls inside its own transaction. */
export interface MissionGate {
  check(tx: Transaction, occurrenceId: string, actor: string): Promise<MissionGateView | undefined>;
  link(tx: Transaction, occurrenceId: string, workItemId: string, lineage: string): Promise<void>;
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
  link() {
    return Promise.reject(
      new BatonError('mission_status_unavailable', 'this Baton runs no harness: governed work is refused'),
    );
  },
};
