/**
 * The public input shapes of the service commands and their strict readers. Inputs arrive as
 * parsed JSON (from parseStrictJson in the HTTP layer) or as objects an in-process caller built;
 * both are checked the same way: unknown members, wrong types and out-of-range values are refused
 * with `input_invalid` before any transaction opens.
 */
import type { JsonObject } from '../core/json.js';
import type { ExpectedBinding } from './machine/binding.js';
import { EXPECTED_BINDING_FIELDS } from './machine/binding.js';
import type { BypassPath, DomainLimits, LinkedIdentifier, RemedyKind } from './model.js';
import { BYPASS_PATH_KINDS, BYPASS_PATH_STATUSES, CALLER_LINKED_ID_TYPES, REMEDY_KINDS } from './model.js';
import { NAME, Reader } from './validate.js';

const r: Reader = new Reader('input_invalid');
const CREDENTIAL = /^[A-Za-z0-9_-]{16,256}$/;
const DIGEST = /^sha-256:[A-Za-z0-9_-]{43}$/;
const MAX_COUNT = 1_000_000;

export interface DomainConfigInput {
  readonly id: string;
  readonly limits: DomainLimits;
  readonly bypassPaths: readonly BypassPath[];
}

export interface AuthorityInput {
  readonly id: string;
  readonly unit: string;
  readonly total: number;
}

export interface TakeoverInput {
  readonly lineage: string;
  /**
   * Compare-and-set: the generation this takeover is meant to retire (0: the lineage has none
   * yet). Another current generation refuses it with `generation_mismatch`; absent, it is
   * unconditional.
   */
  readonly expectedGeneration?: number;
}

export interface ProviderSelection {
  readonly profileId: string;
  readonly profileVersion: string;
  readonly account?: string;
  readonly environment?: string;
}

export interface CreateInput {
  /** The executor credential returned by takeover (bound to lineage + generation). */
  readonly credential: string;
  /** The creation key: with the caller's lineage, the durable occurrence-creation binding. */
  readonly creationKey: string;
  readonly provider: ProviderSelection;
  readonly request: JsonObject;
  readonly authority: { readonly id: string; readonly amount: number };
  readonly linkedIds?: readonly LinkedIdentifier[];
  /**
   * The harness work item this governed occurrence belongs to (Mission build spec A3.6): its
   * binding and action class gate provider entry.
   */
  readonly workItemId?: string;
}

export interface RemedyInput extends CreateInput {
  readonly remedyOf: string;
  readonly kind: RemedyKind;
}

export interface ReissueInput {
  readonly credential: string;
  /** The released occurrence to reissue. */
  readonly occurrenceId: string;
  readonly creationKey: string;
  readonly linkedIds?: readonly LinkedIdentifier[];
  /**
   * The harness work item that governs the successor (Mission build spec A3.6), as on create: the
   * successor is linked to it, so its entry checks the item's Mission in its own transaction.
   */
  readonly workItemId?: string;
}

export interface EnterInput {
  readonly credential: string;
  readonly occurrenceId: string;
  /** Binding fields the caller expects; any difference refuses entry (AOC-CASE-007). */
  readonly expect?: ExpectedBinding;
}

export interface ReleaseInput {
  readonly credential: string;
  readonly occurrenceId: string;
  /** AOC-REQ-008: a release names the exact request binding it releases. */
  readonly requestDigest: string;
}

export function readDomainConfig(input: unknown): DomainConfigInput {
  const f = r.object(input, '$', ['id', 'limits', 'bypassPaths']);
  const l = r.object(f['limits'], '$.limits', [
    'maxPendingPerLineage',
    'maxInFlightPerLineage',
    'maxPendingPerDomain',
    'maxInFlightPerDomain',
    'entryWindowSeconds',
  ]);
  const count = (name: string): number => r.integer(l[name], `$.limits.${name}`, 1, MAX_COUNT);
  const limits: DomainLimits = {
    maxPendingPerLineage: count('maxPendingPerLineage'),
    maxInFlightPerLineage: count('maxInFlightPerLineage'),
    maxPendingPerDomain: count('maxPendingPerDomain'),
    maxInFlightPerDomain: count('maxInFlightPerDomain'),
    entryWindowSeconds: r.integer(l['entryWindowSeconds'], '$.limits.entryWindowSeconds', 1, 30 * 86_400),
  };
  refuseContradictoryLimits(limits);
  return { id: readDomainId(f['id']), limits, bypassPaths: readBypassPaths(f['bypassPaths']) };
}

/**
 * AOC-REQ-006 / AOC-CASE-012: a per-lineage limit above its per-domain one could never be reached
 * — the domain's refuses first — so the configuration says something it does not do; it is refused,
 * naming the per-lineage member. A limit below the current count is no contradiction (it is how an
 * operator stops new work; existing occurrences stay as they are), so it is not checked here.
 */
function refuseContradictoryLimits(l: DomainLimits): void {
  const pairs = [
    ['maxPendingPerLineage', 'maxPendingPerDomain'],
    ['maxInFlightPerLineage', 'maxInFlightPerDomain'],
  ] as const;
  for (const [lineage, domain] of pairs) {
    if (l[lineage] > l[domain])
      r.fail(
        `$.limits.${lineage}`,
        `${l[lineage]} is above ${domain} (${l[domain]}): it could never be reached`,
      );
  }
}

/**
 * Domain ids that are refused: a domain's records stand under the producer `urn:baton:<id>`
 * (docs/observations.md), and `urn:baton:local` is the unsigned local producer operators submit
 * under. A domain named `local` (in any case: producer namespaces compare without case) would put
 * Baton's signed records and operators' unsigned ones in one namespace, so it is never configured.
 */
export const RESERVED_DOMAIN_IDS: readonly string[] = ['local'];

function readDomainId(value: unknown): string {
  const id = r.string(value, '$.id', NAME);
  if (RESERVED_DOMAIN_IDS.includes(id.toLowerCase()))
    r.fail('$.id', 'is reserved: urn:baton:local is the unsigned local producer of continuity records');
  return id;
}

/** AOC-REQ-001 / Scope: each of the six bypass kinds is disclosed exactly once. */
function readBypassPaths(value: unknown): BypassPath[] {
  const items = r.array(value, '$.bypassPaths', BYPASS_PATH_KINDS.length, BYPASS_PATH_KINDS.length);
  const paths = items.map((item, i): BypassPath => {
    const f = r.object(item, `$.bypassPaths[${i}]`, ['kind', 'status', 'description']);
    return {
      kind: r.oneOf(f['kind'], `$.bypassPaths[${i}].kind`, BYPASS_PATH_KINDS),
      status: r.oneOf(f['status'], `$.bypassPaths[${i}].status`, BYPASS_PATH_STATUSES),
      description: r.string(f['description'], `$.bypassPaths[${i}].description`, undefined, 1000),
    };
  });
  for (const kind of BYPASS_PATH_KINDS) {
    if (!paths.some((p) => p.kind === kind)) r.fail('$.bypassPaths', `must disclose the ${kind} path`);
  }
  return paths;
}

export function readAuthorityInput(input: unknown): AuthorityInput {
  const f = r.object(input, '$', ['id', 'unit', 'total']);
  return {
    id: r.string(f['id'], '$.id', NAME),
    unit: r.string(f['unit'], '$.unit', NAME, 64),
    total: r.integer(f['total'], '$.total', 1),
  };
}

export function readTakeover(input: unknown): TakeoverInput {
  const f = r.object(input, '$', ['lineage'], ['expectedGeneration']);
  const lineage = r.string(f['lineage'], '$.lineage', NAME);
  const expected = f['expectedGeneration'];
  if (expected === undefined) return { lineage };
  return { lineage, expectedGeneration: r.integer(expected, '$.expectedGeneration', 0) };
}

export function readCredential(value: unknown): string {
  return r.string(value, '$.credential', CREDENTIAL);
}

function readLinkedIds(value: unknown): LinkedIdentifier[] {
  if (value === undefined) return [];
  const list = r.array(value, '$.linkedIds', 0, 32).map((item, i): LinkedIdentifier => {
    const f = r.object(item, `$.linkedIds[${i}]`, ['type', 'value']);
    // provider_key / provider_reference are the domain's to write (AOC-CASE-006).
    const type = r.oneOf(f['type'], `$.linkedIds[${i}].type`, CALLER_LINKED_ID_TYPES);
    return { type, value: r.string(f['value'], `$.linkedIds[${i}].value`, undefined, 256) };
  });
  const keys = list.map((l) => `${l.type}\u0000${l.value}`);
  if (new Set(keys).size !== keys.length) r.fail('$.linkedIds', 'has duplicate entries');
  return list.sort((a, b) => (a.type === b.type ? (a.value < b.value ? -1 : 1) : a.type < b.type ? -1 : 1));
}

export interface CreateFields {
  readonly credential: string;
  readonly creationKey: string;
  readonly provider: {
    readonly profileId: string;
    readonly profileVersion: string;
    readonly account: string | undefined;
    readonly environment: string | undefined;
  };
  readonly request: JsonObject;
  readonly authority: { readonly id: string; readonly amount: number };
  readonly linkedIds: LinkedIdentifier[];
  readonly workItemId: string | null;
  readonly remedy: { readonly of: string; readonly kind: RemedyKind } | null;
}

export function readCreate(input: unknown, remedy = false): CreateFields {
  const base = ['credential', 'creationKey', 'provider', 'request', 'authority'];
  const f = r.object(input, '$', remedy ? [...base, 'remedyOf', 'kind'] : base, ['linkedIds', 'workItemId']);
  const p = r.object(
    f['provider'],
    '$.provider',
    ['profileId', 'profileVersion'],
    ['account', 'environment'],
  );
  const a = r.object(f['authority'], '$.authority', ['id', 'amount']);
  return {
    credential: readCredential(f['credential']),
    creationKey: r.string(f['creationKey'], '$.creationKey', NAME),
    provider: {
      profileId: r.string(p['profileId'], '$.provider.profileId', NAME),
      profileVersion: r.string(p['profileVersion'], '$.provider.profileVersion', NAME),
      account: r.optionalString(p['account'], '$.provider.account'),
      environment: r.optionalString(p['environment'], '$.provider.environment'),
    },
    request: r.anyObject(f['request'], '$.request') as JsonObject,
    authority: {
      id: r.string(a['id'], '$.authority.id', NAME),
      amount: r.integer(a['amount'], '$.authority.amount', 1),
    },
    linkedIds: readLinkedIds(f['linkedIds']),
    workItemId: r.optionalString(f['workItemId'], '$.workItemId', NAME) ?? null,
    remedy: remedy
      ? {
          of: r.string(f['remedyOf'], '$.remedyOf', NAME),
          kind: r.oneOf(f['kind'], '$.kind', REMEDY_KINDS),
        }
      : null,
  };
}

export function readReissue(
  input: unknown,
): Omit<ReissueInput, 'workItemId'> & { linkedIds: LinkedIdentifier[]; workItemId: string | null } {
  const f = r.object(input, '$', ['credential', 'occurrenceId', 'creationKey'], ['linkedIds', 'workItemId']);
  return {
    credential: readCredential(f['credential']),
    occurrenceId: r.string(f['occurrenceId'], '$.occurrenceId', NAME),
    creationKey: r.string(f['creationKey'], '$.creationKey', NAME),
    linkedIds: readLinkedIds(f['linkedIds']),
    workItemId: r.optionalString(f['workItemId'], '$.workItemId', NAME) ?? null,
  };
}

export function readEnter(input: unknown): Required<EnterInput> {
  const f = r.object(input, '$', ['credential', 'occurrenceId'], ['expect']);
  const expect: Record<string, string> = {};
  if (f['expect'] !== undefined) {
    const e = r.object(f['expect'], '$.expect', [], EXPECTED_BINDING_FIELDS);
    for (const field of EXPECTED_BINDING_FIELDS) {
      const value = r.optionalString(e[field], `$.expect.${field}`);
      if (value !== undefined) expect[field] = value;
    }
  }
  return {
    credential: readCredential(f['credential']),
    occurrenceId: r.string(f['occurrenceId'], '$.occurrenceId', NAME),
    expect,
  };
}

export function readRelease(input: unknown): ReleaseInput {
  const f = r.object(input, '$', ['credential', 'occurrenceId', 'requestDigest']);
  return {
    credential: readCredential(f['credential']),
    occurrenceId: r.string(f['occurrenceId'], '$.occurrenceId', NAME),
    requestDigest: r.string(f['requestDigest'], '$.requestDigest', DIGEST),
  };
}

export function readOccurrenceId(value: unknown): string {
  return r.string(value, '$.occurrenceId', NAME);
}

export function readName(value: unknown, path: string): string {
  return r.string(value, path, NAME);
}
