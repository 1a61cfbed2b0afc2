/**
 * What one write transaction of the occurrences repository already holds (issue 16 §1: "no
 * statement reads a row the transaction already holds"; §2: one round trip per transition). A
 * second transition in the same transaction — create-and-enter's entry, acknowledge-and-settle's
 * status observation — reads these from here instead of from the database:
 * - rows it locked or wrote (lineage, occurrence, authority): no other transaction can change them
 *   before this one ends (FOR UPDATE on PostgreSQL, the one writer lock on SQLite), so what this
 *   transaction last read or wrote is what a SELECT would return;
 * - the domain and a credential, as first read: neither is locked (docs/store.md), a command
 *   decides on one reading of each, and a takeover is fenced by the locked lineage's generation
 *   (machine/common.ts checkCurrent), not by a second read of the credential;
 * - the open counts of a lineage whose row is locked: the lineage's are exact (only this
 *   transaction can move them), the domain's are the committed totals as first read plus this
 *   transaction's own moves — the stripe claim at write time enforces the domain limit
 *   (occurrences-limits.ts), as with a fresh read.
 */
import type {
  AuthorityRecord,
  CredentialRecord,
  LineageRecord,
  OccurrenceRecord,
  OpenCounts,
  Phase,
} from '../occurrences/index.js';
import * as rows from './occurrences-rows.js';

/** Open counts as the SQL returns them (lineage pending/in flight, domain pending/in flight). */
export type RawCounts = Record<'lp' | 'lf' | 'dp' | 'df', number | string | null>;

/**
 * The record exactly as a SELECT of the row just written would decode it. `values`: the row's
 * `occurrenceValues(o)` where the caller has just made them for the statement (not made twice).
 */
export function asStored(o: OccurrenceRecord, values = rows.occurrenceValues(o)): OccurrenceRecord {
  const row: Record<string, unknown> = {};
  const columns = rows.OCCURRENCE_COLUMNS;
  for (let i = 0; i < columns.length; i++) row[columns[i] as string] = values[i] ?? null;
  return rows.occurrenceFromRow(row as rows.OccurrenceRow);
}

const BUCKETS: Partial<Record<Phase, { lineage: 'lp' | 'lf'; domain: 'dp' | 'df' }>> = {
  reserved: { lineage: 'lp', domain: 'dp' },
  entered: { lineage: 'lf', domain: 'df' },
};

export class Held {
  readonly credentials = new Map<string, CredentialRecord | undefined>();
  readonly lineages = new Map<string, LineageRecord>();
  readonly occurrences = new Map<string, OccurrenceRecord>();
  readonly authorities = new Map<string, AuthorityRecord>();
  readonly #counts = new Map<string, { lp: number; lf: number; dp: number; df: number }>();

  /** Counts read for a lineage this transaction holds; later moves are applied by `moved`. */
  countsRead(lineage: string, r: RawCounts | undefined): void {
    if (!this.lineages.has(lineage)) return;
    const n = (k: keyof RawCounts): number => rows.num(r?.[k] ?? 0);
    this.#counts.set(lineage, { lp: n('lp'), lf: n('lf'), dp: n('dp'), df: n('df') });
  }

  counts(lineage: string): OpenCounts | undefined {
    const c = this.lineages.has(lineage) ? this.#counts.get(lineage) : undefined;
    if (c === undefined) return undefined;
    return { lineage: { pending: c.lp, inFlight: c.lf }, domain: { pending: c.dp, inFlight: c.df } };
  }

  /**
   * An occurrence of `lineage` moved from `from` (null: new; undefined: not known here, so the
   * counts are read again) to `to` in this transaction.
   */
  moved(lineage: string, from: Phase | null | undefined, to: Phase): void {
    if (from === undefined) this.#counts.delete(lineage);
    const c = this.#counts.get(lineage);
    if (c === undefined || from === to) return;
    const before = from === null || from === undefined ? undefined : BUCKETS[from];
    const after = BUCKETS[to];
    if (before !== undefined) {
      c[before.lineage] -= 1;
      c[before.domain] -= 1;
    }
    if (after !== undefined) {
      c[after.lineage] += 1;
      c[after.domain] += 1;
    }
  }
}
