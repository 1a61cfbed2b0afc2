/**
 * Pass 2 of the validation order (B3.1): closed members and JSON types at every level (C-B3).
 * Enum values, semantics, times and digests are later passes, so a record with an unknown member
 * and a bad status is refused for the unknown member: one rule, one code, one path.
 */
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

/** The longest string member Baton stores; `record_id` has its own 1–512 rule (B2). */
const MAX_STRING = 4096;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function checkString(value: unknown, path: string, nullable: boolean): void {
  if (value === null && nullable) return;
  if (typeof value !== 'string')
    refuse('type', path, nullable ? 'must be a string or null' : 'must be a string');
  if (value.length === 0 || value.length > MAX_STRING)
    refuse('string_length', path, 'must be 1 to 4096 characters');
}

function checkKind(kind: Kind, value: unknown, path: string): void {
  if (kind === 'string' || kind === 'string?') return checkString(value, path, kind === 'string?');
  if (kind === 'boolean') {
    if (typeof value !== 'boolean') refuse('type', path, 'must be true or false');
    return;
  }
  if (kind === 'epoch') {
    if (value === null || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0)) return;
    return checkString(value, path, false);
  }
  if (kind === 'count?') {
    if (value === null || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0)) return;
    refuse('type', path, 'must be a non-negative integer or null');
  }
  if (kind === 'strings') return checkKind({ array: 'string' }, value, path);
  if (kind === 'any-object') {
    if (!isObject(value)) refuse('type', path, 'must be an object');
    return;
  }
  if ('object' in kind) {
    if (value === null && kind.nullable === true) return;
    return checkObject(kind.object, value, path);
  }
  if (!Array.isArray(value)) refuse('type', path, 'must be an array');
  if (value.length < (kind.min ?? 0))
    refuse('array_length', path, `must hold at least ${kind.min ?? 0} item(s)`);
  value.forEach((item, i) => {
    if (kind.array === 'string') checkString(item, `${path}[${i}]`, false);
    else checkObject(kind.array, item, `${path}[${i}]`);
  });
}

function checkObject(spec: Spec, value: unknown, path: string): void {
  if (!isObject(value)) refuse('type', path, 'must be an object');
  for (const name of Object.keys(value)) {
    if (!Object.hasOwn(spec, name))
      refuse('unknown_member', `${path}.${name}`, 'is not a member of this object');
  }
  for (const [name, member] of Object.entries(spec)) {
    if (!Object.hasOwn(value, name)) {
      if (member.required) refuse('missing_member', `${path}.${name}`, 'is required');
      continue;
    }
    checkKind(member.kind, value[name], `${path}.${name}`);
  }
}

/** Closed members and types of the whole record. */
export function checkShape(value: unknown): void {
  checkObject(RECORD, value, '$');
  const id = (value as { record_id: string }).record_id;
  if (id.length > 512) refuse('string_length', '$.record_id', 'must be 1 to 512 characters');
}
