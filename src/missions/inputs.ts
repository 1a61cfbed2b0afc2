/**
 * Strict readers for harness commands. A caller sets only `mission_id`, `mission_origin`,
 * `authority_hash`, `stop_policy`, `enforcement_scope` (A2.7): a body asserting `state` or a
 * `status_*` member is refused, as `verified:true` on acknowledgements is (C-A29).
 */
import { BatonError, type BatonErrorCode } from '../core/errors.js';
import { NAME as CORE_NAME } from '../core/names.js';
import { parseRfc3339 } from '../core/time.js';
import {
  ACTION_CLASSES,
  ITEM_KINDS,
  type ActionClass,
  type ItemKind,
  type MissionBinding,
  type MissionRef,
  type StopBehaviour,
  type SubagentHandle,
} from './model.js';

type Fields = Readonly<Record<string, unknown>>;
// The routes' grammar, from the one place both use (src/core/names.ts): a name refused over HTTP is
// refused in process too, so nothing made in process is unreachable over HTTP.
const NAME = CORE_NAME;
const MISSION_ID = /^[A-Za-z0-9_-]{1,256}$/;
// No white space and no control character (U+0000–U+001F, U+007F–U+009F): refused here with the
// member's JSON path, never left for the store to trip over (a NUL is no URL character).
const ORIGIN = /^https?:\/\/[^\s\p{Cc}]{1,500}$/u;

function fail(code: BatonErrorCode, path: string, why: string): never {
  throw new BatonError(code, `${path}: ${why}`, { path });
}

function object(
  v: unknown,
  path: string,
  req: readonly string[],
  opt: readonly string[] = [],
  code: BatonErrorCode = 'input_invalid',
): Fields {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(code, path, 'must be an object');
  const f = v as Fields;
  for (const k of Object.keys(f))
    if (!req.includes(k) && !opt.includes(k)) fail(code, `${path}.${k}`, 'is not allowed here');
  for (const k of req) if (f[k] === undefined) fail(code, `${path}.${k}`, 'is required');
  return f;
}

function str(v: unknown, path: string, re: RegExp, code: BatonErrorCode = 'input_invalid'): string {
  if (typeof v !== 'string' || !re.test(v)) fail(code, path, `must match ${re.source}`);
  return v;
}

const optStr = (v: unknown, path: string, re: RegExp, code?: BatonErrorCode): string | undefined =>
  v === undefined ? undefined : str(v, path, re, code);

function oneOf<T extends string>(
  v: unknown,
  path: string,
  values: readonly T[],
  code: BatonErrorCode = 'input_invalid',
): T {
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v))
    fail(code, path, `must be one of ${values.join('|')}`);
  return v as T;
}

function time(v: unknown, path: string): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') fail('input_invalid', path, 'must be an RFC 3339 date-time');
  return parseRfc3339(v, path);
}

const DIGEST = /^sha-256:[A-Za-z0-9_-]{43}$/;

export function readBinding(v: unknown, path = '$.mission_binding'): MissionBinding {
  const code = 'mission_binding_invalid';
  const f = object(
    v,
    path,
    ['mission_id', 'mission_origin', 'stop_policy'],
    ['authority_hash', 'enforcement_scope'],
    code,
  );
  const authorityHash = optStr(f['authority_hash'], `${path}.authority_hash`, DIGEST, code);
  const scope = optStr(
    f['enforcement_scope'],
    `${path}.enforcement_scope`,
    /^baton:[A-Za-z0-9._-]{1,128}#[a-z_]{1,64}$/,
    code,
  );
  return {
    mission_id: str(f['mission_id'], `${path}.mission_id`, MISSION_ID, code),
    mission_origin: str(f['mission_origin'], `${path}.mission_origin`, ORIGIN, code),
    ...(authorityHash !== undefined && { authority_hash: authorityHash }),
    stop_policy: str(
      f['stop_policy'],
      `${path}.stop_policy`,
      /^[a-z0-9][a-z0-9._-]{0,63}@[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/,
      code,
    ),
    ...(scope !== undefined && { enforcement_scope: scope }),
  };
}

function readRef(
  v: unknown,
  path: string,
  withParent: boolean,
): MissionRef & { parent?: { id: string; origin: string } } {
  const code = 'mission_binding_invalid';
  const f = object(
    v,
    path,
    ['id', 'origin'],
    withParent ? ['authority_hash', 'parent'] : ['authority_hash'],
    code,
  );
  const h = optStr(f['authority_hash'], `${path}.authority_hash`, DIGEST, code);
  const parent = f['parent'] === undefined ? undefined : readRef(f['parent'], `${path}.parent`, false);
  return {
    id: str(f['id'], `${path}.id`, MISSION_ID, code),
    origin: str(f['origin'], `${path}.origin`, ORIGIN, code),
    ...(h !== undefined && { authority_hash: h }),
    ...(parent !== undefined && { parent: { id: parent.id, origin: parent.origin } }),
  };
}

export function readHandle(v: unknown, path = '$.handle'): SubagentHandle {
  const code = 'mission_binding_invalid';
  const f = object(v, path, ['actor', 'parent_mission', 'governed_by'], [], code);
  const a = object(f['actor'], `${path}.actor`, ['client_id'], ['sub_profile'], code);
  const g = object(f['governed_by'], `${path}.governed_by`, ['kind'], ['mission', 'delegation_id'], code);
  const kind = oneOf(
    g['kind'],
    `${path}.governed_by.kind`,
    ['parent_mission', 'delegation', 'child_mission', 'independent_mission'] as const,
    code,
  );
  const mission =
    g['mission'] === undefined ? undefined : readRef(g['mission'], `${path}.governed_by.mission`, true);
  if ((kind === 'child_mission' || kind === 'independent_mission') && mission === undefined) {
    fail(code, `${path}.governed_by.mission`, 'is required for a child or independent Mission (HAR-20)');
  }
  const delegation = optStr(g['delegation_id'], `${path}.governed_by.delegation_id`, NAME, code);
  if (kind === 'delegation' && delegation === undefined)
    fail(code, `${path}.governed_by.delegation_id`, 'is required');
  const sub = optStr(a['sub_profile'], `${path}.actor.sub_profile`, NAME, code);
  return {
    actor: {
      client_id: str(a['client_id'], `${path}.actor.client_id`, NAME, code),
      ...(sub !== undefined && { sub_profile: sub }),
    },
    parent_mission: readRef(f['parent_mission'], `${path}.parent_mission`, false),
    governed_by: {
      kind,
      ...(mission !== undefined && { mission }),
      ...(delegation !== undefined && { delegation_id: delegation }),
    },
  };
}

export interface SessionInput {
  readonly sessionId?: string;
  readonly lineage: string | null;
  readonly binding: MissionBinding;
}

export function readSession(v: unknown): SessionInput {
  const f = object(v, '$', ['mission_binding'], ['session_id', 'lineage']);
  const id = optStr(f['session_id'], '$.session_id', NAME);
  return {
    ...(id !== undefined && { sessionId: id }),
    lineage: optStr(f['lineage'], '$.lineage', NAME) ?? null,
    binding: readBinding(f['mission_binding']),
  };
}

export interface ItemInput {
  readonly itemId?: string;
  readonly kind: ItemKind;
  readonly sessionId: string | null;
  readonly lineage: string | null;
  readonly parentId: string | null;
  readonly binding: MissionBinding | undefined;
  readonly actionClass: ActionClass;
  readonly notBefore: number | null;
  readonly expiresAt: number | null;
  readonly idempotencyKey: string | null;
  readonly handle: SubagentHandle | null;
}

/** HAR-14 queue item members (camelCase envelope keeps the draft names for draft objects). */
export function readItem(v: unknown): ItemInput {
  const f = object(
    v,
    '$',
    ['kind', 'action_class'],
    [
      'queue_item_id',
      'session_id',
      'lineage',
      'parent_item',
      'mission_binding',
      'not_before',
      'expires_at',
      'idempotency_key',
      'handle',
    ],
  );
  const id = optStr(f['queue_item_id'], '$.queue_item_id', NAME);
  const kind = oneOf(f['kind'], '$.kind', ITEM_KINDS);
  // HAR-20 / seed §9: a sub-agent handle MUST bind the parent Mission reference, the actor and the
  // governing authority or child Mission; session ancestry alone MUST NOT authorize it, so a
  // handle item without its `handle` is refused (nothing written), never run on the session's binding.
  if (kind === 'subagent_handle' && f['handle'] === undefined)
    fail('mission_binding_invalid', '$.handle', 'a subagent_handle needs its handle (HAR-20)');
  return {
    ...(id !== undefined && { itemId: id }),
    kind,
    sessionId: optStr(f['session_id'], '$.session_id', NAME) ?? null,
    lineage: optStr(f['lineage'], '$.lineage', NAME) ?? null,
    parentId: optStr(f['parent_item'], '$.parent_item', NAME) ?? null,
    binding: f['mission_binding'] === undefined ? undefined : readBinding(f['mission_binding']),
    actionClass: oneOf(f['action_class'], '$.action_class', ACTION_CLASSES),
    notBefore: time(f['not_before'], '$.not_before'),
    expiresAt: time(f['expires_at'], '$.expires_at'),
    idempotencyKey: optStr(f['idempotency_key'], '$.idempotency_key', NAME) ?? null,
    handle: f['handle'] === undefined ? null : readHandle(f['handle']),
  };
}

export function readStopBehaviour(v: unknown): StopBehaviour {
  return oneOf(v, '$.decision', ['suppress', 'pause', 'terminate', 'handoff'] as const);
}

/** `POST /v1/harness/items/{id}/rebind`: only the successor binding (A7#24). */
export function readRebind(v: unknown): MissionBinding {
  const f = object(v, '$', ['mission_binding']);
  return readBinding(f['mission_binding']);
}

/** `POST /v1/harness/sessions/{id}/taint`: what untrusted content entered (HAR-29). */
export function readTaint(v: unknown): { readonly source: string } {
  const f = object(v, '$', ['source']);
  return { source: str(f['source'], '$.source', NAME) };
}
