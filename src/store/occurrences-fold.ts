/**
 * One row version per new occurrence (PostgreSQL; docs/store.md "One row version per transition").
 *
 * Create-and-enter inserts an occurrence and, in the same transaction, updates it to `entered`.
 * With both deferred (one call per transition), the row was written twice: the INSERT's version,
 * then the UPDATE's — which changes `phase`, an indexed column, so it is never a HOT update and
 * writes a new entry in every index of `aoc_occurrences`, leaving a dead version for VACUUM. While
 * the INSERT has not left, the UPDATE's values are written into the INSERT instead: the same row
 * commits, with the same locks (the row is this transaction's own until COMMIT), the same unique
 * keys (an UPDATE changes none of them) and the same CHECKs, and the INSERT still expects its one
 * row (a taken key still re-runs the transaction statement by statement). Only where the UPDATE's
 * own guard would hold on the row as the INSERT writes it (its version; a provider reference only
 * from NULL); anything else sends the UPDATE as before, which then meets what it always met.
 */
import { deferred, type DeferredWrite, type SqlValue, type Transaction } from './engine.js';
import { OCCURRENCE_COLUMNS } from './occurrences-rows.js';

/** The columns the lifecycle UPDATE sets, in its SET order (occurrences-repository.ts). */
export const UPDATED_COLUMNS = [
  'phase',
  'outcome',
  'effect',
  'conflict',
  'entered_at',
  'entered_generation',
  'released_at',
  'resolved_at',
  'linked_ids',
  'provider_reference',
  'updated_at',
  'version',
  'open_stripe',
] as const;

/** The INSERT's columns: the occurrence's, then `request`, `open_stripe`. */
const INSERTED: readonly string[] = [...OCCURRENCE_COLUMNS, 'request', 'open_stripe'];
const AT = UPDATED_COLUMNS.map((c) => INSERTED.indexOf(c));
const VERSION = INSERTED.indexOf('version');
const REFERENCE = INSERTED.indexOf('provider_reference');

interface Pending {
  readonly write: DeferredWrite;
  params: SqlValue[];
}

export class PendingInserts {
  readonly #pending = new Map<string, Pending>();

  /** Defer the occurrence INSERT, kept amendable; false, having sent nothing, where `tx` does not defer. */
  defer(tx: Transaction, id: string, sql: string, params: readonly SqlValue[]): boolean {
    const write = deferred(tx, sql, params, { expect: 1 });
    if (write === undefined) return false;
    this.#pending.set(id, { write, params: [...params] });
    return true;
  }

  /**
   * Write `values` (UPDATED_COLUMNS' order) into occurrence `id`'s waiting INSERT; false, having
   * changed nothing, when there is none, it has left, or the UPDATE's guard would not hold on it.
   */
  fold(id: string, previousVersion: number, values: readonly SqlValue[], reference: SqlValue): boolean {
    const p = this.#pending.get(id);
    if (p === undefined) return false;
    const stored = p.params[REFERENCE] ?? null;
    if (p.params[VERSION] !== previousVersion || (stored !== null && stored !== reference)) return false;
    const next = [...p.params];
    AT.forEach((at, i) => {
      next[at] = values[i] ?? null;
    });
    if (!p.write.amend(next)) {
      this.#pending.delete(id);
      return false;
    }
    p.params = next;
    return true;
  }
}

/** The budget's compare-and-set (occurrences-repository.ts `updateAuthority`). */
export const AUTHORITY_UPDATE = `UPDATE aoc_authorities SET reserved = ?, consumed = ?, updated_at = ?, version = ?
       WHERE id = ? AND version = ? AND consumed <= ?`;

/** An authority row's values as AUTHORITY_UPDATE writes them. */
interface AuthorityValues {
  readonly id: string;
  readonly total: number;
  readonly reserved: number;
  readonly consumed: number;
  readonly updatedAt: number;
  readonly version: number;
}

/**
 * One row version per authority per transaction (PostgreSQL; docs/store.md "One row version per
 * transition"). Create-and-enter reserves the amount and then, in the same transaction, moves it
 * to consumed: two UPDATEs of the one authority row, both deferred into the one call, so two new
 * row versions (HOT, but each a dead tuple and a statement of `baton_batch_static`). While the
 * first has not left, the second's values are written into it instead, keeping the first's guard
 * (its version; consumed never decreasing, AOC-REQ-012): the same row commits, with the same lock.
 * Only where the second's own guard would hold on the row as the first writes it (its version,
 * consumed not above the new one) and where that row passes the table's CHECKs (no negative
 * amount, reserved + consumed within the total), so that the database's last line of defence sees
 * nothing less than before; anything else sends the UPDATE as before.
 */
export class PendingAuthorityUpdates {
  readonly #pending = new Map<
    string,
    { readonly write: DeferredWrite; values: AuthorityValues; guard: SqlValue[] }
  >();

  /** Defer `a`'s UPDATE from `previousVersion`, kept amendable; false, having sent nothing, where `tx` does not defer. */
  defer(tx: Transaction, a: AuthorityValues, previousVersion: number): boolean {
    const guard: SqlValue[] = [a.id, previousVersion, a.consumed];
    const write = deferred(tx, AUTHORITY_UPDATE, [...written(a), ...guard], { expect: 1 });
    if (write === undefined) return false;
    this.#pending.set(a.id, { write, values: a, guard });
    return true;
  }

  /** Write `a` into the authority's waiting UPDATE; false, having changed nothing, where it may not. */
  fold(a: AuthorityValues, previousVersion: number): boolean {
    const p = this.#pending.get(a.id);
    if (p === undefined) return false;
    const before = p.values;
    const passesChecks =
      before.reserved >= 0 && before.consumed >= 0 && before.reserved + before.consumed <= before.total;
    if (before.version !== previousVersion || before.consumed > a.consumed || !passesChecks) return false;
    if (!p.write.amend([...written(a), ...p.guard])) {
      this.#pending.delete(a.id);
      return false;
    }
    p.values = a;
    return true;
  }
}

function written(a: AuthorityValues): SqlValue[] {
  return [a.reserved, a.consumed, a.updatedAt, a.version];
}
