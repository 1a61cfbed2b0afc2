/**
 * The store side of reconciliation in `baton serve` (migration 010, docs/providers.md
 * "Reconciliation in serve"): reconciler claims with expiry, and the few reads the receiver and
 * the background reconciler need (seen webhook event ids are written with the observation, in the
 * occurrences repository: one commit per delivery). One SQL text per query for both engines.
 *
 * The single-asker rule (issue 13 §4): a server asks about an occurrence only after claiming it
 * with ONE atomic conditional upsert — the row is taken only when no live claim holds it and its
 * backoff has passed. On PostgreSQL concurrent upserts of one row serialize on its row lock (a
 * serialization failure re-runs the transaction, which then finds the claim taken); on SQLite the
 * one writer lock does the same. No read-then-write decides anything.
 */
import type { SqlValue, StoreEngine } from './engine.js';

const num = (v: number | string | bigint | null | undefined): number => Number(v ?? 0);

export interface ClaimTaken {
  readonly occurrenceId: string;
  /** Unanswered asks so far (0 for an occurrence never asked). */
  readonly attempts: number;
}

export type ClaimRelease =
  | { readonly kind: 'resolved'; readonly occurrenceId: string }
  | { readonly kind: 'unvisited'; readonly occurrenceId: string }
  | {
      readonly kind: 'asked';
      readonly occurrenceId: string;
      readonly attempts: number;
      readonly nextAt: number;
    };

// Only an occurrence STILL entered is claimed: the due list is read before the claim, and in
// between another server may have asked, recorded the resolution and dropped its claim — a claim
// taken then would ask a resolved occurrence again (found by the three-server test under load).
// The WHERE also keeps SQLite's parser from reading ON CONFLICT as part of the SELECT.
const CLAIM_SQL = `INSERT INTO prv_reconcile_claims (occurrence_id, holder, claimed_until, attempts, next_at)
  SELECT ?, ?, ?, 0, 0 WHERE EXISTS (SELECT 1 FROM aoc_occurrences WHERE id = ? AND phase = 'entered')
  ON CONFLICT (occurrence_id) DO UPDATE SET holder = excluded.holder, claimed_until = excluded.claimed_until
  WHERE prv_reconcile_claims.claimed_until <= ? AND prv_reconcile_claims.next_at <= ?
  RETURNING attempts`;

export class ReconciliationStore {
  constructor(private readonly engine: StoreEngine) {}

  /** Every registered version of a profile, newest first (the webhook route reads their pins). */
  async profileVersions(profileId: string): Promise<string[]> {
    const rows = await this.engine.read((ex) =>
      ex.all<{ version: string }>(
        'SELECT version FROM aoc_profiles WHERE id = ? ORDER BY registered_at DESC, version DESC',
        [profileId],
      ),
    );
    return rows.map((r) => r.version);
  }

  /**
   * The profile version the occurrence with this native key is bound to, through the unique
   * native-key index. Read outside the delivery's transaction: the binding never changes
   * (AOC-REQ-003), so what the signature is checked against cannot move before the commit.
   */
  async boundVersion(
    profileId: string,
    account: string,
    environment: string,
    nativeKey: string,
  ): Promise<string | undefined> {
    const row = await this.engine.read((ex) =>
      ex.get<{ v: string }>(
        'SELECT profile_version AS v FROM aoc_occurrences WHERE profile_id = ? AND account = ? AND environment = ? AND native_key = ?',
        [profileId, account, environment, nativeKey],
      ),
    );
    return row?.v;
  }

  /**
   * The profile version the ONE occurrence whose bound provider reference is this one is bound to
   * (migration 034's index), for a delivery that names no native key of Baton's. Two such
   * occurrences (never written: the observe path refuses a reference bound elsewhere) locate
   * nothing — the delivery is not guessed onto either (fail closed). Read outside the delivery's
   * transaction for the same reason as boundVersion: a bound reference is written once.
   */
  async boundVersionByReference(
    profileId: string,
    account: string,
    environment: string,
    reference: string,
  ): Promise<string | undefined> {
    const rows = await this.engine.read((ex) =>
      ex.all<{ v: string }>(
        'SELECT profile_version AS v FROM aoc_occurrences WHERE profile_id = ? AND account = ? AND environment = ? AND provider_reference = ? LIMIT 2',
        [profileId, account, environment, reference],
      ),
    );
    return rows.length === 1 ? rows[0]?.v : undefined;
  }

  /** Unresolved occurrences whose claim (if any) is free and due, oldest entry first. */
  async dueOccurrences(now: number, limit: number): Promise<string[]> {
    const rows = await this.engine.read((ex) =>
      ex.all<{ id: string }>(
        `SELECT o.id FROM aoc_occurrences o LEFT JOIN prv_reconcile_claims c ON c.occurrence_id = o.id
         WHERE o.phase = 'entered' AND (c.occurrence_id IS NULL OR (c.next_at <= ? AND c.claimed_until <= ?))
         ORDER BY o.entered_at, o.id LIMIT ?`,
        [now, now, limit],
      ),
    );
    return rows.map((r) => r.id);
  }

  /**
   * Take the claims on these occurrences until `until`, in ONE transaction (one commit per tick,
   * not one per occurrence); returns the ones taken — not those another holder has or not due.
   */
  async claim(ids: readonly string[], holder: string, now: number, until: number): Promise<ClaimTaken[]> {
    if (ids.length === 0) return [];
    return this.engine.transaction(async (tx) => {
      const taken: ClaimTaken[] = [];
      for (const occurrenceId of ids) {
        const params: SqlValue[] = [occurrenceId, holder, until, occurrenceId, now, now];
        const row = await tx.get<{ attempts: number | string }>(CLAIM_SQL, params);
        if (row !== undefined) taken.push({ occurrenceId, attempts: num(row.attempts) });
      }
      return taken;
    });
  }

  /**
   * Give claims back in ONE transaction: a resolved occurrence's claim is dropped, an asked one
   * gets its next ask's earliest time, an unvisited one (stopped before its turn) is freed as it was.
   */
  async release(holder: string, releases: readonly ClaimRelease[]): Promise<void> {
    if (releases.length === 0) return;
    await this.engine.transaction(async (tx) => {
      for (const r of releases) {
        if (r.kind === 'resolved') {
          await tx.run('DELETE FROM prv_reconcile_claims WHERE occurrence_id = ? AND holder = ?', [
            r.occurrenceId,
            holder,
          ]);
        } else if (r.kind === 'unvisited') {
          await tx.run(
            'UPDATE prv_reconcile_claims SET holder = NULL, claimed_until = 0 WHERE occurrence_id = ? AND holder = ?',
            [r.occurrenceId, holder],
          );
        } else {
          await tx.run(
            'UPDATE prv_reconcile_claims SET holder = NULL, claimed_until = 0, attempts = ?, next_at = ? WHERE occurrence_id = ? AND holder = ?',
            [r.attempts, r.nextAt, r.occurrenceId, holder],
          );
        }
      }
    });
  }

  /** When the oldest unresolved occurrence was entered (ms), or undefined when none is. */
  async oldestUnresolvedEnteredAt(): Promise<number | undefined> {
    const row = await this.engine.read((ex) =>
      ex.get<{ at: number | string | null }>(
        "SELECT MIN(entered_at) AS at FROM aoc_occurrences WHERE phase = 'entered'",
      ),
    );
    return row?.at === null || row?.at === undefined ? undefined : num(row.at);
  }
}
