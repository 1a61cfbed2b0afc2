import type { Migration } from '../migrations.js';
import { LOCK_CREATE, LOCK_ENTRY } from './012_transition_functions.js';

/**
 * The lock calls also answer each domain stripe's committed counts (PostgreSQL; docs/store.md
 * "Domain-wide limits"). Nothing on SQLite.
 *
 * A claim on PostgreSQL is deferred into the transition's one write call and assumed to succeed;
 * when its stripe is at its share, the whole transaction runs again statement by statement to
 * find another (occurrences-limits.ts). Under small limits that is common — at a limit of 100,
 * 28 of the 64 stripes have a share of one — and it costs about five times the statements. With
 * the stripes' committed counts in hand, the claim goes to a stripe that had room when the lock
 * call read it; the claim's compare-and-set guard still decides, so a stale count costs a re-run,
 * never a unit beyond the limit.
 *
 * `baton_lock_create` and `baton_lock_entry` (migration 012) are replaced with the same arguments,
 * the same reads, locks and order; their `counts` gain `sp` and `sf`, the pending and in-flight
 * counts by stripe number, read in the same scan as the totals `dp` and `df` (one scan of the
 * stripes instead of two).
 */
const TOTALS = `    (SELECT SUM(pending) FROM aoc_open_stripes) AS dp,
    (SELECT SUM(in_flight) FROM aoc_open_stripes) AS df) k;`;
const BY_STRIPE = `    s.dp, s.df, s.sp, s.sf FROM (SELECT SUM(pending) AS dp, SUM(in_flight) AS df,
      array_agg(pending ORDER BY stripe) AS sp, array_agg(in_flight ORDER BY stripe) AS sf
      FROM aoc_open_stripes) s) k;`;

function withStripeCounts(fn: string): string {
  if (fn.split(TOTALS).length !== 2 || fn.split('CREATE FUNCTION ').length !== 2)
    throw new Error('migration 025: migration 012 no longer has the function text it replaces');
  return fn.replace('CREATE FUNCTION ', 'CREATE OR REPLACE FUNCTION ').replace(TOTALS, BY_STRIPE);
}

export const migration: Migration = {
  id: 25,
  name: 'stripe_counts',
  up: '-- nothing on SQLite: its claims are not deferred, so a full stripe costs a scan there, not a re-run',
  postgres: `${withStripeCounts(LOCK_ENTRY)};\n${withStripeCounts(LOCK_CREATE)}`,
};
