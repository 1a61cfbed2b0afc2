import type { Migration } from '../migrations.js';
import { BATCH, STATIC_STATEMENTS, type StaticStatement } from './022_static_transition_writes.js';

/**
 * Create-and-enter writes its domain stripe once (PostgreSQL; docs/store.md "One row version per
 * transition"). Nothing on SQLite.
 *
 * A new occurrence takes a pending unit in its stripe (`claim_pending`: pending + 1 while below its
 * share) and its entry, in the same transaction, moves it to in flight (`move_to_in_flight`:
 * pending − 1, in_flight + 1 while in flight is below its share): two UPDATEs of one row, two row
 * versions. Their net effect is one statement, in flight + 1 where pending was below its share and
 * in flight below its own — the two guards on the same row version, since the first changes no
 * in-flight count. `baton_batch_static` gets that statement as one more static branch,
 * `claim_pending_to_in_flight`; every other branch is migration 022's, unchanged (its function
 * text, from that migration, with this branch added before the unknown-key refusal).
 */
export const CLAIM_PENDING_TO_IN_FLIGHT =
  'UPDATE aoc_open_stripes SET in_flight = in_flight + 1 WHERE stripe = ? AND pending < ? AND in_flight < ?';

const BRANCH = `    ELSIF v_k = 'claim_pending_to_in_flight' THEN
      UPDATE aoc_open_stripes SET in_flight = in_flight + 1
        WHERE stripe = (v_p->>0)::bigint AND pending < (v_p->>1)::bigint AND in_flight < (v_p->>2)::bigint;
      GET DIAGNOSTICS v_n = ROW_COUNT;
`;
const CREATE = 'CREATE FUNCTION baton_batch_static(';
const UNKNOWN = "    ELSE\n      RAISE EXCEPTION 'baton_batch_static: unknown statement key %'";

function withBranch(fn: string): string {
  if (fn.split(CREATE).length !== 2 || fn.split(UNKNOWN).length !== 2)
    throw new Error('migration 024: migration 022 no longer has the function text it extends');
  return fn
    .replace(CREATE, 'CREATE OR REPLACE FUNCTION baton_batch_static(')
    .replace(UNKNOWN, `${BRANCH}${UNKNOWN}`);
}

/** Migration 022's statements and this one's, by exact portable text (postgres-batch.ts). */
export const STATIC_STATEMENTS_024: ReadonlyMap<string, StaticStatement> = new Map([
  ...STATIC_STATEMENTS,
  [CLAIM_PENDING_TO_IN_FLIGHT, { key: 'claim_pending_to_in_flight', rows: false, params: 3 }],
]);

export const migration: Migration = {
  id: 24,
  name: 'one_stripe_write',
  up: '-- nothing on SQLite: statements there are in-process calls',
  postgres: withBranch(BATCH),
};
