/**
 * The reference Mission issuer's records and its pure lifecycle table (status draft "Legal
 * Transitions", A2.3): revoke from active|suspended, suspend from active, resume from suspended,
 * complete from active; the companions' supersede from active; expiry from active|suspended when
 * `mission_expiry` passes. Terminal states accept nothing. Re-requesting the operation that made
 * the current state is idempotent (200, no change, C-A23); every other illegal operation is a
 * conflict (409). DEVELOPMENT AND TESTS ONLY.
 */
import type { JsonObject, JsonValue } from '../core/json.js';

export const LIFECYCLE_OPERATIONS = ['revoke', 'suspend', 'resume', 'complete'] as const;
export const ADMIN_OPERATIONS = [...LIFECYCLE_OPERATIONS, 'supersede', 'expire'] as const;
export type LifecycleOperation = (typeof ADMIN_OPERATIONS)[number];
/** What a client may request at the Mission Lifecycle endpoint (A2.3). */
export type RequestedOperation = (typeof LIFECYCLE_OPERATIONS)[number];

export type IssuedState = 'active' | 'suspended' | 'revoked' | 'completed' | 'expired' | 'superseded';

export interface Transition {
  readonly version: number;
  readonly state: IssuedState;
  readonly priorState: IssuedState | null;
  /** The operation that caused it; `approve` for version 1. */
  readonly operation: LifecycleOperation | 'approve';
  readonly committedAtMs: number;
  readonly reason: string | null;
}

export interface IssuedMission {
  readonly id: string;
  state: IssuedState;
  /** Strictly monotonic from 1 (the approval), one step per committed transition (MSG-03). */
  version: number;
  readonly intent: JsonObject;
  readonly intentHash: string;
  authoritySet: JsonValue[];
  authorityHash: string;
  readonly missionExpiryMs: number;
  /** The agent clients it is for: they see its status and may `complete` it. */
  readonly clients: readonly string[];
  /**
   * The client_id the Subject, and the one the Approver, authenticates with at the lifecycle
   * endpoint (the reference issuer knows principals only as private_key_jwt clients); null: none.
   */
  readonly subjectClient: string | null;
  readonly approverClient: string | null;
  /** Audiences it is disclosed to (status `audience`, SET receivers, token `resource`). */
  readonly audiences: readonly string[];
  readonly history: Transition[];
}

const RESULT: Readonly<Record<LifecycleOperation, IssuedState>> = {
  revoke: 'revoked',
  suspend: 'suspended',
  resume: 'active',
  complete: 'completed',
  supersede: 'superseded',
  expire: 'expired',
};

const LEGAL_FROM: Readonly<Record<LifecycleOperation, readonly IssuedState[]>> = {
  revoke: ['active', 'suspended'],
  suspend: ['active'],
  resume: ['suspended'],
  complete: ['active'],
  supersede: ['active'],
  expire: ['active', 'suspended'],
};

export type OperationVerdict =
  | { readonly kind: 'apply'; readonly to: IssuedState }
  | { readonly kind: 'same' }
  | { readonly kind: 'conflict' };

/** What `operation` does to `mission` now: apply, already done (idempotent), or a conflict. */
export function judgeOperation(mission: IssuedMission, operation: LifecycleOperation): OperationVerdict {
  if (LEGAL_FROM[operation].includes(mission.state)) return { kind: 'apply', to: RESULT[operation] };
  const last = mission.history[mission.history.length - 1];
  // "Already reached its resulting state": the last committed transition was this operation.
  if (mission.state === RESULT[operation] && last?.operation === operation) return { kind: 'same' };
  return { kind: 'conflict' };
}

/** Commit `to` on `mission` (caller judged it legal): the next version and its history entry. */
export function commitTransition(
  mission: IssuedMission,
  operation: LifecycleOperation,
  to: IssuedState,
  nowMs: number,
  reason: string | null,
): Transition {
  const transition: Transition = {
    version: mission.version + 1,
    state: to,
    priorState: mission.state,
    operation,
    committedAtMs: nowMs,
    reason,
  };
  mission.version = transition.version;
  mission.state = to;
  mission.history.push(transition);
  return transition;
}

/** A requester's part in one Mission at the lifecycle endpoint. */
export type LifecycleRole = 'client' | 'subject' | 'approver' | 'administrator';

/**
 * Who may request which lifecycle operation: the status draft's "Authorization" section, its
 * typical deployment policy — `revoke` by the Subject, the Approver or an administrator; `suspend`
 * and `resume` by an administrator; `complete` by the requesting client or an administrator.
 */
const MAY_REQUEST: Readonly<Record<RequestedOperation, readonly LifecycleRole[]>> = {
  revoke: ['subject', 'approver', 'administrator'],
  suspend: ['administrator'],
  resume: ['administrator'],
  complete: ['client', 'administrator'],
};

/** The roles `clientId` holds in `mission` (an administrator holds that one in every Mission). */
export function rolesIn(mission: IssuedMission, clientId: string, administrator: boolean): LifecycleRole[] {
  const roles: LifecycleRole[] = [];
  if (mission.clients.includes(clientId)) roles.push('client');
  if (mission.subjectClient === clientId) roles.push('subject');
  if (mission.approverClient === clientId) roles.push('approver');
  if (administrator) roles.push('administrator');
  return roles;
}

/** Whether one of `roles` may request `operation` (status draft "Authorization"). */
export function mayRequest(roles: readonly LifecycleRole[], operation: RequestedOperation): boolean {
  return MAY_REQUEST[operation].some((role) => roles.includes(role));
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Narrowing (the issuer's own admin operation; no lifecycle transition): every new entry is an old
 * entry with the same type, resource and constraints and a subset of its actions.
 */
export function isNarrowing(from: readonly JsonValue[], to: readonly JsonValue[]): boolean {
  if (to.length === 0) return false;
  return to.every((entry) => {
    if (!isObject(entry) || !Array.isArray(entry['actions'])) return false;
    const actions = entry['actions'];
    return from.some((old) => {
      if (!isObject(old) || !Array.isArray(old['actions'])) return false;
      const sameShape =
        old['type'] === entry['type'] &&
        old['resource'] === entry['resource'] &&
        JSON.stringify(old['constraints'] ?? null) === JSON.stringify(entry['constraints'] ?? null);
      const oldActions = old['actions'];
      return sameShape && actions.every((a) => oldActions.includes(a));
    });
  });
}

/** The entries disclosed to `audience` (status draft: other audiences' entries MUST NOT be). */
export function entriesFor(authoritySet: readonly JsonValue[], audience: string): JsonValue[] {
  return authoritySet.filter((entry) => isObject(entry) && entry['resource'] === audience);
}
