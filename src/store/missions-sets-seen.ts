/**
 * The SET replay table `msn_sets_seen` (C-A18: a `jti` is one-time while its SET can be accepted),
 * written in the transaction that applies the SET, and kept bounded. A3.4 refuses a SET whose
 * `exp` passed by more than 30 s (`JWT_SKEW_MS`), so a row whose SET's `exp` lies well before now
 * can never again decide a replay: the same bytes would be refused as expired first. Every
 * `PRUNE_EVERY`-th new row a process records, the same transaction deletes at most `PRUNE_BATCH`
 * such rows, oldest first, through migration 030's index — no timer, no scan, and a table that
 * stops growing once SETs expire as fast as they arrive. A row is kept `SETS_SEEN_RETAIN_MS` past
 * `exp`, not only the 30 s skew: the prune runs on one server's clock and the acceptance check on
 * any server's (several share one PostgreSQL), so their clocks may disagree by minutes without a
 * replay getting through. Rows from before migration 030 have no `expires_at` and are kept.
 */
import type { SetSeen } from '../missions/index.js';
import type { Transaction } from './engine.js';

/** How long past its SET's `exp` a row is kept: the 30 s skew and room for servers' clocks. */
export const SETS_SEEN_RETAIN_MS = 10 * 60_000;
/** One prune per this many new rows recorded by a process. */
export const SETS_SEEN_PRUNE_EVERY = 256;
/** At most this many rows per prune: more than PRUNE_EVERY, so a backlog shrinks. */
export const SETS_SEEN_PRUNE_BATCH = 512;

const INSERT =
  'INSERT INTO msn_sets_seen (iss, jti, digest, received_at, expires_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING';
const DIGEST = 'SELECT digest FROM msn_sets_seen WHERE iss = ? AND jti = ?';
/** Row values and a LIMIT in the subquery: both engines take it (SQLite has no DELETE … LIMIT). */
const PRUNE =
  'DELETE FROM msn_sets_seen WHERE (iss, jti) IN (SELECT iss, jti FROM msn_sets_seen WHERE expires_at IS NOT NULL AND expires_at < ? ORDER BY expires_at LIMIT ?)';

/** New rows recorded by this process since its last prune (every engine alike). */
let sincePrune = 0;

/** One SET's replay verdict in `tx`: first sight, identical redelivery, or other bytes. */
export async function recordSetSeen(
  tx: Transaction,
  iss: string,
  jti: string,
  digest: string,
  at: number,
  expiresAtMs: number,
): Promise<SetSeen> {
  const { changes } = await tx.run(INSERT, [iss, jti, digest, at, expiresAtMs]);
  if (changes === 1) {
    if (++sincePrune >= SETS_SEEN_PRUNE_EVERY) {
      sincePrune = 0;
      await pruneSetsSeen(tx, at);
    }
    return 'new';
  }
  const r = await tx.get<{ digest: string }>(DIGEST, [iss, jti]);
  return r?.digest === digest ? 'same' : 'different';
}

/** Deletes up to `SETS_SEEN_PRUNE_BATCH` rows past their retention at `now`; how many went. */
export async function pruneSetsSeen(tx: Transaction, now: number): Promise<number> {
  const { changes } = await tx.run(PRUNE, [now - SETS_SEEN_RETAIN_MS, SETS_SEEN_PRUNE_BATCH]);
  return changes;
}
