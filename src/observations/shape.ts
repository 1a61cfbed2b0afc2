/**
 * Pass 2 of the validation order (B3.1): closed members and JSON types at every level (C-B3).
 * Enum values, semantics, times and digests are later passes, so a record with an unknown member
 * and a bad status is refused for the unknown member: one rule, one code, one path.
 */
import { MAX_PRODUCER_ID, MAX_RECORD_ID } from './model.js';
import { refuse } from './refusal.js';

type Kind =
  | 'string'
  | 'string?'
  | 'epoch'
  | 'count?'
  | 'boolean'
  | 'strings'
  | 'any-object'
  | { readonly object: Spec; readonly nullable?: boolean }
  | { readonly array: Spec | 'string'; readonly min?: number };

interface Member {
  readonly kind: Kind;
  readonly required: boolean;
}
type Spec = Readonly<Record<string, Member>>;

const req = (kind: Kind): Member => ({ kind, required: true });
const opt = (kind: Kind): Member => ({ kind, required: false });

const BYTE_DIGEST: Spec = {
  algorithm: req('string'),
  representation: req('string'),
  artifact: req('string'),
  value: req('string'),
};

const RECORD: Spec = {
  version: req('string'),
  profile: opt('string'),
  producer: opt('string'),
  record_id: req('string'),
  run_id: req('string?'),
  event_type: req('string'),
  scope_id: req('string'),
  authority_epoch: req('epoch'),
  source_runtime: req('string?'),
  destination_runtime: req('string?'),
  observed_at: req('string'),
  order: req({ object: { domain: req('string'), sequence: req('string?'), uncertainty_ms: req('count?') } }),
  invariants: req({
    array: {
      dimension: req('string'),
      status: req('string'),
      reference: req('string?'),
      reason: req('string?'),
    },
    min: 1,
  }),
  evidence: req({
    array: {
      locator: req('string'),
      method: req('string'),
      verification: req('string'),
      byte_digest: req({ object: BYTE_DIGEST, nullable: true }),
    },
  }),
  outcome: req({
    object: {
      proposal: req('string?'),
      admission: req('string?'),
      effect: req('string?'),
      attempt: opt('string?'),
      decision: opt('string?'),
      commitment: opt('string?'),
      settlement: opt('string?'),
      operation_ref: opt('string?'),
      decision_ref: opt('string?'),
    },
  }),
  limitations: req('strings'),
  supersedes: opt('string?'),
  analysis_revision: opt('string'),
  classification: opt('string'),
  lineage: opt({ object: { parents: req('strings'), actions: req('strings'), coverage: req('string?') } }),
  references: opt({ array: { type: req('string'), digest: req('string'), locator: req('string') } }),
  colocated_roles: opt('strings'),
  independence_claimed: opt('boolean'),
  audience: opt('string'),
  issued_at: opt('string'),
  expires_at: opt('string'),
  extensions: opt('any-object'),
  crit: opt({ array: 'string', min: 1 }),
  evidence_envelope: opt({ object: { format: req('string'), value: req('string') } }),
};

/** The longest string member Baton stores; `record_id` (B2) and `producer` have their own limits. */
const MAX_STRING = 4096;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

// Paths are built only on refusal or when descending: a record has ~60 members and the reader
// runs on every stored, signed or verified record (bench/observations.bench.ts).
type Key = string | number;
const join = (parent: string, key: Key): string =>
  typeof key === 'number' ? `${parent}[${key}]` : `${parent}.${key}`;

function checkString(value: unknown, parent: string, key: Key, nullable: boolean): void {
  if (value === null && nullable) return;
  if (typeof value !== 'string')
    refuse('type', join(parent, key), nullable ? 'must be a string or null' : 'must be a string');
  if (value.length === 0 || value.length > MAX_STRING)
    refuse('string_length', join(parent, key), 'must be 1 to 4096 characters');
}

const isCount = (v: unknown): boolean =>
  v === null || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0);

function checkKind(kind: Kind, value: unknown, parent: string, key: Key): void {
  if (kind === 'string' || kind === 'string?') return checkString(value, parent, key, kind === 'string?');
  if (kind === 'boolean') {
    if (typeof value !== 'boolean') refuse('type', join(parent, key), 'must be true or false');
    return;
  }
  if (kind === 'epoch') {
    if (isCount(value)) return;
    if (typeof value !== 'string')
      refuse('type', join(parent, key), 'must be a non-negative integer, a non-empty string or null');
    return checkString(value, parent, key, false);
  }
  if (kind === 'count?') {
    if (isCount(value)) return;
    refuse('type', join(parent, key), 'must be a non-negative integer or null');
  }
  if (kind === 'strings') return checkKind(STRINGS, value, parent, key);
  if (kind === 'any-object') {
    if (!isObject(value)) refuse('type', join(parent, key), 'must be an object');
    return;
  }
  const path = join(parent, key);
  if ('object' in kind) {
    if (value === null && kind.nullable === true) return;
    return checkObject(kind.object, value, path);
  }
  if (!Array.isArray(value)) refuse('type', path, 'must be an array');
  if (value.length < (kind.min ?? 0))
    refuse('array_length', path, `must hold at least ${kind.min ?? 0} item(s)`);
  for (let i = 0; i < value.length; i++) {
    if (kind.array === 'string') checkString(value[i], path, i, false);
    else checkObject(kind.array, value[i], join(path, i));
  }
}

const STRINGS: Kind = { array: 'string' };
const entriesOf = new WeakMap<Spec, readonly (readonly [string, Member])[]>();

function checkObject(spec: Spec, value: unknown, path: string): void {
  if (!isObject(value)) refuse('type', path, 'must be an object');
  for (const name in value) {
    if (Object.hasOwn(value, name) && !Object.hasOwn(spec, name))
      refuse('unknown_member', `${path}.${name}`, 'is not a member of this object');
  }
  let entries = entriesOf.get(spec);
  if (entries === undefined) {
    entries = Object.entries(spec);
    entriesOf.set(spec, entries);
  }
  for (const [name, member] of entries) {
    if (!Object.hasOwn(value, name)) {
      if (member.required) refuse('missing_member', `${path}.${name}`, 'is required');
      continue;
    }
    checkKind(member.kind, value[name], path, name);
  }
}

/** Closed members and types of the whole record. */
export function checkShape(value: unknown): void {
  checkObject(RECORD, value, '$');
  const { record_id: id, producer } = value as { record_id: string; producer?: string };
  if (id.length > MAX_RECORD_ID)
    refuse('string_length', '$.record_id', `must be 1 to ${MAX_RECORD_ID} characters`);
  // The pin limit too: a longer producer could never be pinned, so never verified (OBS-12 ¶25).
  if (producer !== undefined && producer.length > MAX_PRODUCER_ID)
    refuse('string_length', '$.producer', `must be 1 to ${MAX_PRODUCER_ID} characters`);
}
