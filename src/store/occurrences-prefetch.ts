/**
 * Provider entry's reads in one round trip on PostgreSQL (issue 16 §2, docs/store.md "One round
 * trip per transition"): migration 012's `baton_lock_entry` loads and locks, in the service's own
 * order, the rows the entry reads next; the repository then answers each of those reads once from
 * what it returned. The rows are whole table rows as JSON, decoded by the same row functions as a
 * SELECT's (occurrences-rows.ts).
 */
import { BatonError } from '../core/errors.js';
import type { Sha256Digest } from '../core/digest.js';
import type { JsonObject } from '../core/json.js';
import type { Transaction } from './engine.js';
import { holdsHead } from './evidence-log.js';
import { OPEN_STRIPES, type StripeCounts } from './occurrences-limits.js';
import * as rows from './occurrences-rows.js';

/** What a prefetch found, by what the repository will ask for (`undefined`: looked up, absent). */
export type Prefetched = Map<string, unknown>;

export const key = {
  domain: 'domain',
  credential: (digest: string) => `credential:${digest}`,
  lineage: (id: string) => `lineage:${id}`,
  occurrence: (id: string) => `occurrence:${id}`,
  authority: (id: string) => `authority:${id}`,
  counts: (lineage: string) => `counts:${lineage}`,
  stripes: 'stripes',
  binding: (scope: string, creationKey: string) => `binding:${scope}\u0000${creationKey}`,
} as const;

type OccurrenceJson = rows.OccurrenceRow & { open_stripe: number | null; request: string };

interface EntryRows {
  existing?: OccurrenceJson | null;
  domain?: rows.DomainRow | null;
  credential?: rows.CredentialRow | null;
  lineage?: rows.LineageRow | null;
  occurrence?: OccurrenceJson | null;
  authority?: rows.AuthorityRow | null;
  counts?:
    | (Record<'lp' | 'lf' | 'dp' | 'df', number | null> & {
        sp?: readonly unknown[] | null;
        sf?: readonly unknown[] | null;
      })
    | null;
  head?: { head: string | null; count: number } | null;
}

/**
 * Integers beyond 2^53 would lose precision in JSON: refused, never rounded (fail closed). A walk
 * of the parsed value, not a `JSON.parse` reviver: a reviver is called for every value with its
 * key and made the parse 3–4 times as slow (issue 16, session 11). It sees the same numbers a reviver
 * would (a reviver too is handed the parsed, already rounded double; any integer literal beyond
 * 2^53 parses to a double that is not a safe integer).
 */
function refuseInexact(value: unknown): void {
  if (typeof value === 'number') {
    if (Number.isInteger(value) && !Number.isSafeInteger(value))
      throw new BatonError('store_corrupt', 'a prefetched row holds an integer beyond 2^53');
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    for (const member of value) refuseInexact(member);
    return;
  }
  for (const key in value) refuseInexact((value as Record<string, unknown>)[key]);
}

export interface PrefetchedOccurrence {
  readonly record: ReturnType<typeof rows.occurrenceFromRow>;
  readonly stripe: number | null;
  readonly request: JsonObject;
}

function occurrenceOf(o: OccurrenceJson): PrefetchedOccurrence {
  return {
    record: rows.occurrenceFromRow(o),
    stripe: rows.numOrNull(o.open_stripe),
    request: rows.json<JsonObject>(o.request),
  };
}

/** The domain, and the credential if it is current (else the function stopped there). */
function authenticated(into: Prefetched, got: EntryRows, digest: string): rows.CredentialRow | undefined {
  into.set(key.domain, got.domain ? rows.domainFromRow(got.domain) : undefined);
  const credential = got.credential ? rows.credentialFromRow(got.credential) : undefined;
  into.set(key.credential(digest), credential);
  if (credential === undefined || credential.retiredAt !== null || !('lineage' in got)) return undefined;
  into.set(key.lineage(credential.lineage), got.lineage ? rows.lineageFromRow(got.lineage) : undefined);
  return got.lineage && got.credential ? got.credential : undefined;
}

async function call(tx: Transaction, sql: string, params: readonly string[]): Promise<EntryRows> {
  const row = await tx.get<{ loaded: string }>(sql, params);
  const got = JSON.parse(row?.loaded ?? '{}') as unknown;
  refuseInexact(got);
  return got as EntryRows;
}

const counts = (v: readonly unknown[] | null | undefined): number[] | undefined =>
  Array.isArray(v) && v.every((n) => Number.isSafeInteger(n) && (n as number) >= 0)
    ? (v as number[])
    : undefined;

/**
 * The stripes' counts, where the lock call answered them for every stripe (a database before
 * migration 025 answers none): absent, a claim goes where it went before.
 */
function stripesSeen(c: EntryRows['counts']): StripeCounts | undefined {
  const pending = counts(c?.sp);
  const inFlight = counts(c?.sf);
  if (pending?.length !== OPEN_STRIPES || inFlight?.length !== OPEN_STRIPES) return undefined;
  return { pending, in_flight: inFlight };
}

/**
 * Each domain stripe's committed counts as the last lock call read them (migration 025), by stripe
 * number: where a claim should go first, never what decides it (occurrences-limits.ts). Not taken:
 * every claim of the transaction may use them.
 */
export function stripesSeenIn(from: Prefetched): StripeCounts | undefined {
  return from.get(key.stripes) as StripeCounts | undefined;
}

/** The lineage's counts, and what the stripes held, as the lock call read them. */
function setCounts(into: Prefetched, lineage: string, c: EntryRows['counts']): void {
  if (!c) return;
  into.set(key.counts(lineage), c);
  const seen = stripesSeen(c);
  if (seen !== undefined) into.set(key.stripes, seen);
}

/** Run `baton_lock_create` (a plain create) and fill `into` as `prefetchEntry` does. */
export async function prefetchCreate(
  tx: Transaction,
  into: Prefetched,
  credentialDigest: Sha256Digest,
  creationKey: string,
  authorityId: string,
): Promise<void> {
  const sql = 'SELECT baton_lock_create(?, ?, ?)::text AS loaded';
  const got = await call(tx, sql, [credentialDigest, creationKey, authorityId]);
  const credential = authenticated(into, got, credentialDigest);
  if (credential === undefined) return;
  const existing = got.existing ? occurrenceOf(got.existing) : undefined;
  into.set(key.binding(credential.lineage, creationKey), existing);
  into.set(key.authority(authorityId), got.authority ? rows.authorityFromRow(got.authority) : undefined);
  setCounts(into, credential.lineage, got.counts);
}

/** Run `baton_lock_entry` and fill `into` with what each later read will be answered with. */
export async function prefetchEntry(
  tx: Transaction,
  into: Prefetched,
  credentialDigest: Sha256Digest,
  occurrenceId: string,
): Promise<void> {
  const sql = 'SELECT baton_lock_entry(?, ?)::text AS loaded';
  const got = await call(tx, sql, [credentialDigest, occurrenceId]);
  // Beyond the first refusal the function stopped: those reads go to the database as before.
  const credential = authenticated(into, got, credentialDigest);
  if (credential === undefined || !('occurrence' in got)) return;
  const found = got.occurrence ? occurrenceOf(got.occurrence) : undefined;
  into.set(key.occurrence(occurrenceId), found);
  if (found === undefined) return;
  const authority = got.authority ? rows.authorityFromRow(got.authority) : undefined;
  into.set(key.authority(found.record.authority.id), authority);
  setCounts(into, credential.lineage, got.counts);
}

/**
 * Run migration 014's `baton_lock_observe_head` (an executor-reported observation: its
 * credential, then the occurrence FOR UPDATE, then its evidence head FOR UPDATE) and fill `into`
 * as `prefetchEntry` does.
 */
export async function prefetchObserve(
  tx: Transaction,
  into: Prefetched,
  credentialDigest: Sha256Digest,
  occurrenceId: string,
): Promise<void> {
  const sql = 'SELECT baton_lock_observe_head(?, ?)::text AS loaded';
  const got = await call(tx, sql, [credentialDigest, occurrenceId]);
  const credential = got.credential ? rows.credentialFromRow(got.credential) : undefined;
  into.set(key.credential(credentialDigest), credential);
  // Beyond a refused credential the function stopped: the occurrence is read as before, if ever.
  if (credential === undefined || credential.retiredAt !== null || !('occurrence' in got)) return;
  into.set(key.occurrence(occurrenceId), got.occurrence ? occurrenceOf(got.occurrence) : undefined);
  // The occurrence's chain head, locked after it (migration 014): its appends need no lookup.
  if (got.head) {
    const head = got.head.head;
    holdsHead(
      tx,
      `occurrence:${occurrenceId}`,
      typeof head === 'string' ? head : null,
      rows.num(got.head.count),
    );
  }
}

/** Take a prefetched answer once: `found` false when nothing was prefetched for `k`. */
export function take<T>(
  from: Prefetched,
  k: string,
): { found: false } | { found: true; value: T | undefined } {
  if (!from.has(k)) return { found: false };
  const value = from.get(k) as T | undefined;
  from.delete(k);
  return { found: true, value };
}
