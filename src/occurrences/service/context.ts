/** What every service command shares: its collaborators, authentication, refusals and writes. */
import type { Clock } from '../../core/clock.js';
import type { CursorCodec } from '../../core/cursor.js';
import { digestBytes } from '../../core/digest.js';
import { BatonError } from '../../core/errors.js';
import type { IdSource } from '../../core/ids.js';
import type { Caller, Rejection } from '../machine/common.js';
import { isRejection } from '../machine/common.js';
import type { DomainRecord, OccurrenceRecord, PlannedEvent } from '../model.js';
import { isUnresolved } from '../model.js';
import type { OccurrencesReader, OccurrencesRepository, OccurrencesUnitOfWork } from '../ports.js';

/** The domain's public signing key; the private key stays in a file the store wiring owns. */
export interface DomainPublicKey {
  readonly kid: string;
  /** Raw 32-byte Ed25519 public key, base64url. */
  readonly publicKey: string;
}

export interface ServiceContext {
  readonly uow: OccurrencesUnitOfWork;
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly domainKey: DomainPublicKey;
  /** Issues and reads the list's cursors (src/core/cursor.ts). */
  readonly cursors: CursorCodec;
}

/** An occurrence as the service returns it: the record plus whether it is unresolved. */
export type OccurrenceView = OccurrenceRecord & { readonly unresolved: boolean };

/**
 * Written out member by member: `{ ...o, unresolved }` (a spread plus a member the source lacks)
 * takes V8's slow path, about a microsecond per call, and every command returns a view.
 */
export function view(o: OccurrenceRecord): OccurrenceView {
  return {
    id: o.id,
    lineage: o.lineage,
    creationBinding: o.creationBinding,
    linkedIds: o.linkedIds,
    provider: o.provider,
    capturedGeneration: o.capturedGeneration,
    entryDeadline: o.entryDeadline,
    authority: o.authority,
    phase: o.phase,
    outcome: o.outcome,
    effect: o.effect,
    conflict: o.conflict,
    enteredAt: o.enteredAt,
    enteredGeneration: o.enteredGeneration,
    releasedAt: o.releasedAt,
    resolvedAt: o.resolvedAt,
    remedyOf: o.remedyOf,
    remedyKind: o.remedyKind,
    reissueOf: o.reissueOf,
    createdAt: o.createdAt,
    updatedAt: o.updatedAt,
    version: o.version,
    unresolved: isUnresolved(o),
  };
}

export function fail(rejection: Rejection): never {
  throw new BatonError(rejection.code, rejection.message, rejection.details);
}

/** Unwrap a machine decision; a Rejection becomes a thrown BatonError, which rolls back. */
export function decided<T extends object>(result: T | Rejection): T {
  if (isRejection(result)) fail(result);
  return result;
}

/**
 * The domain as executor commands see it. Read, not locked: every executor command locking the one
 * domain row would serialize all of them through each commit. Domain-wide limits do not need it:
 * the store enforces them where it writes the occurrence (OccurrencesRepository, AOC-REQ-006).
 */
export async function requireDomain(repo: OccurrencesRepository): Promise<DomainRecord> {
  const domain = await repo.getDomain();
  if (domain === undefined)
    throw new BatonError('domain_not_found', 'the coordination domain is not configured');
  return domain;
}

/**
 * Authenticate an executor credential: only its digest is stored. A retired generation's
 * credential is refused everywhere (AOC-REQ-006).
 */
export async function authenticate(repo: OccurrencesReader, credential: string): Promise<Caller> {
  const found = await repo.findCredential(digestBytes(credential));
  if (found === undefined) throw new BatonError('unauthenticated', 'unknown executor credential');
  if (found.retiredAt !== null) {
    throw new BatonError('generation_retired', 'this executor generation was retired by a takeover', {
      generation: found.generation,
    });
  }
  return { lineage: found.lineage, generation: found.generation };
}

/**
 * What an executor may see: its own lineage's occurrences only. Another lineage's answers exactly
 * like a missing one (the HTTP API's visibility rule, decided here inside the command's own
 * transaction: issue 16 §1).
 */
export function refuseUnlessOwn(caller: Caller, o: OccurrenceRecord | undefined): OccurrenceRecord {
  if (o === undefined || o.lineage !== caller.lineage)
    throw new BatonError('occurrence_not_found', 'no such occurrence');
  return o;
}

export function executorActor(caller: Caller): string {
  return `executor:${caller.lineage}#${caller.generation}`;
}

export async function appendAll(
  repo: OccurrencesRepository,
  events: readonly PlannedEvent[],
  at: number,
  actor: string,
): Promise<void> {
  await repo.appendEvents(events, at, actor);
}
