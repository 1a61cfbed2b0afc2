/**
 * A bare occurrence row written straight into `aoc_occurrences`, for migration tests that build a
 * store as an older version left it (no service, no evidence): only the columns those tests need.
 */
import type { Transaction } from '../../src/store/engine.js';
import { OCCURRENCE_COLUMNS } from '../../src/store/occurrences-rows.js';

export interface BareOccurrence {
  readonly id: string;
  readonly creationKey: string;
  readonly phase: string;
  readonly at: number;
}

/** The lineage, authority and profile rows a bare occurrence refers to. */
export async function insertBareParents(tx: Transaction): Promise<void> {
  await tx.run(
    "INSERT INTO aoc_lineages (id, generation, created_at, updated_at, version) VALUES ('agent', 1, 0, 0, 1)",
  );
  await tx.run(
    "INSERT INTO aoc_authorities (id, unit, total, reserved, consumed, created_at, updated_at, version) VALUES ('budget', 'u', 100, 0, 0, 0, 0, 1)",
  );
  await tx.run(
    "INSERT INTO aoc_profiles (id, version, digest, document, registered_at) VALUES ('p', '1', 'd', '{}', 0)",
  );
}

export async function insertBareOccurrence(tx: Transaction, o: BareOccurrence): Promise<void> {
  const values: Record<string, string | number | null> = Object.fromEntries(
    OCCURRENCE_COLUMNS.map((c) => [c, null]),
  );
  Object.assign(values, {
    id: o.id,
    lineage: 'agent',
    creation_scope: 'agent',
    creation_key: o.creationKey,
    creation_digest: 'd',
    linked_ids: '[]',
    profile_id: 'p',
    profile_version: '1',
    profile_digest: 'd',
    account: 'acct',
    environment: 'env',
    request_digest: 'd',
    native_key_rule: 'none',
    captured_generation: 1,
    entry_deadline: 0,
    authority_id: 'budget',
    authority_amount: 1,
    authority_unit: 'u',
    phase: o.phase,
    outcome: 'unknown',
    effect: 'unresolved',
    conflict: 0,
    created_at: o.at,
    updated_at: o.at,
    version: 1,
  });
  await tx.run(
    `INSERT INTO aoc_occurrences (${OCCURRENCE_COLUMNS.join(', ')}, request) VALUES (${OCCURRENCE_COLUMNS.map(() => '?').join(', ')}, '{}')`,
    OCCURRENCE_COLUMNS.map((c) => values[c] ?? null),
  );
}
