/**
 * Row ↔ record mapping for the occurrences tables (migration 002). JSON columns hold JCS text;
 * BIGINT columns may come back as strings from PostgreSQL, so every integer goes through num().
 */
import { BatonError } from '../core/errors.js';
import type { Sha256Digest } from '../core/digest.js';
import { canonicalize } from '../core/jcs.js';
import type {
  AuthorityRecord,
  CredentialRecord,
  DomainRecord,
  LineageRecord,
  LinkedIdentifier,
  OccurrenceRecord,
  Effect,
  Outcome,
  Phase,
  RemedyKind,
  ProviderProfile,
  RegisteredProfile,
} from '../occurrences/index.js';
import { assertProfileMatches } from '../occurrences/index.js';
import type { SqlValue } from './engine.js';

type Int = number | string;

export function num(value: Int): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n))
    throw new BatonError('store_corrupt', 'an integer column holds a non-integer');
  return n;
}

export function numOrNull(value: Int | null): number | null {
  return value === null ? null : num(value);
}

export function json<T>(text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (cause) {
    throw new BatonError('store_corrupt', 'a JSON column does not hold JSON', {}, { cause });
  }
}

export const jcs = (value: unknown): string => canonicalize(value);

export interface DomainRow {
  id: string;
  kid: string;
  public_key: string;
  limits: string;
  bypass_paths: string;
  created_at: Int;
  updated_at: Int;
  version: Int;
}

let lastDomain: { key: string; record: DomainRecord } | undefined;

/** The domain row is read by every command and changes rarely: reuse the last decoded record. */
export function domainFromRow(r: DomainRow): DomainRecord {
  const key = `${r.id}\u0000${String(r.version)}\u0000${r.limits}\u0000${r.bypass_paths}\u0000${r.public_key}\u0000${String(r.updated_at)}`;
  if (lastDomain?.key === key) return lastDomain.record;
  const record = decodeDomain(r);
  lastDomain = { key, record };
  return record;
}

function decodeDomain(r: DomainRow): DomainRecord {
  return {
    id: r.id,
    kid: r.kid,
    publicKey: r.public_key,
    limits: json(r.limits),
    bypassPaths: json(r.bypass_paths),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
    version: num(r.version),
  };
}

export interface ProfileRow {
  id: string;
  version: string;
  digest: string;
  document: string;
  registered_at: Int;
}

/**
 * A stored profile is re-checked against the digest it was pinned under whenever it is read (the
 * reader caches what passed): a document edited in the database behind Baton's back is
 * `store_corrupt`, never served or used as if it were the pinned one.
 */
export function profileFromRow(r: ProfileRow): RegisteredProfile {
  const digest = r.digest as Sha256Digest;
  const document = json<ProviderProfile>(r.document);
  assertProfileMatches(digest, document);
  return { id: r.id, version: r.version, digest, document, registeredAt: num(r.registered_at) };
}

export interface LineageRow {
  id: string;
  generation: Int;
  created_at: Int;
  updated_at: Int;
  version: Int;
}

export function lineageFromRow(r: LineageRow): LineageRecord {
  return {
    id: r.id,
    generation: num(r.generation),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
    version: num(r.version),
  };
}

export interface CredentialRow {
  secret_digest: string;
  lineage: string;
  generation: Int;
  issued_at: Int;
  retired_at: Int | null;
}

export function credentialFromRow(r: CredentialRow): CredentialRecord {
  return {
    secretDigest: r.secret_digest as Sha256Digest,
    lineage: r.lineage,
    generation: num(r.generation),
    issuedAt: num(r.issued_at),
    retiredAt: numOrNull(r.retired_at),
  };
}

export interface AuthorityRow {
  id: string;
  unit: string;
  total: Int;
  reserved: Int;
  consumed: Int;
  created_at: Int;
  updated_at: Int;
  version: Int;
}

export function authorityFromRow(r: AuthorityRow): AuthorityRecord {
  return {
    id: r.id,
    unit: r.unit,
    total: num(r.total),
    reserved: num(r.reserved),
    consumed: num(r.consumed),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
    version: num(r.version),
  };
}

/** Every column but `request`, which only entry and reissue read (privacy: docs/occurrences.md). */
export const OCCURRENCE_COLUMNS = [
  'id',
  'lineage',
  'creation_scope',
  'creation_key',
  'creation_digest',
  'linked_ids',
  'profile_id',
  'profile_version',
  'profile_digest',
  'account',
  'environment',
  'request_digest',
  'native_key_rule',
  'native_key',
  'provider_reference',
  'captured_generation',
  'entry_deadline',
  'authority_id',
  'authority_amount',
  'authority_unit',
  'phase',
  'outcome',
  'effect',
  'conflict',
  'entered_at',
  'entered_generation',
  'released_at',
  'resolved_at',
  'remedy_of',
  'remedy_kind',
  'reissue_of',
  'created_at',
  'updated_at',
  'version',
] as const;

export type OccurrenceRow = Record<(typeof OCCURRENCE_COLUMNS)[number], string | number | null>;

const s = (v: string | number | null): string => String(v);
const sn = (v: string | number | null): string | null => (v === null ? null : String(v));
const n = (v: string | number | null): number => num(v ?? Number.NaN);

export function occurrenceFromRow(r: OccurrenceRow): OccurrenceRecord {
  return {
    id: s(r.id),
    lineage: s(r.lineage),
    creationBinding: {
      scope: s(r.creation_scope),
      key: s(r.creation_key),
      requestDigest: s(r.creation_digest) as Sha256Digest,
    },
    linkedIds: json<LinkedIdentifier[]>(s(r.linked_ids)),
    provider: {
      profileId: s(r.profile_id),
      profileVersion: s(r.profile_version),
      profileDigest: s(r.profile_digest) as Sha256Digest,
      account: s(r.account),
      environment: s(r.environment),
      requestDigest: s(r.request_digest) as Sha256Digest,
      nativeKeyRule: s(r.native_key_rule),
      nativeKey: sn(r.native_key),
      providerReference: sn(r.provider_reference),
    },
    capturedGeneration: n(r.captured_generation),
    entryDeadline: n(r.entry_deadline),
    authority: { id: s(r.authority_id), amount: n(r.authority_amount), unit: s(r.authority_unit) },
    phase: s(r.phase) as Phase,
    outcome: s(r.outcome) as Outcome,
    effect: s(r.effect) as Effect,
    conflict: n(r.conflict) === 1,
    enteredAt: r.entered_at === null ? null : n(r.entered_at),
    enteredGeneration: r.entered_generation === null ? null : n(r.entered_generation),
    releasedAt: r.released_at === null ? null : n(r.released_at),
    resolvedAt: r.resolved_at === null ? null : n(r.resolved_at),
    remedyOf: sn(r.remedy_of),
    remedyKind: sn(r.remedy_kind) as RemedyKind | null,
    reissueOf: sn(r.reissue_of),
    createdAt: n(r.created_at),
    updatedAt: n(r.updated_at),
    version: n(r.version),
  };
}

/**
 * Column values in OCCURRENCE_COLUMNS order. `linkedIdsJcs`: `jcs(o.linkedIds)` where the caller
 * has just made it (the same text; not serialized twice).
 */
export function occurrenceValues(o: OccurrenceRecord, linkedIdsJcs?: string): SqlValue[] {
  const p = o.provider;
  return [
    o.id,
    o.lineage,
    o.creationBinding.scope,
    o.creationBinding.key,
    o.creationBinding.requestDigest,
    linkedIdsJcs ?? jcs(o.linkedIds),
    p.profileId,
    p.profileVersion,
    p.profileDigest,
    p.account,
    p.environment,
    p.requestDigest,
    p.nativeKeyRule,
    p.nativeKey,
    p.providerReference,
    o.capturedGeneration,
    o.entryDeadline,
    o.authority.id,
    o.authority.amount,
    o.authority.unit,
    o.phase,
    o.outcome,
    o.effect,
    o.conflict ? 1 : 0,
    o.enteredAt,
    o.enteredGeneration,
    o.releasedAt,
    o.resolvedAt,
    o.remedyOf,
    o.remedyKind,
    o.reissueOf,
    o.createdAt,
    o.updatedAt,
    o.version,
  ];
}
