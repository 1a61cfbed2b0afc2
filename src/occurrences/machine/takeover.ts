/**
 * Takeover (AOC-REQ-005, AOC-REQ-006): advance the lineage's generation, retire the predecessor and
 * bind a new credential to (lineage, generation), all in one transaction. The successor's answer
 * carries the lineage's open occurrences, recorded as delivered.
 */
import type { Sha256Digest } from '../../core/digest.js';
import type { CredentialRecord, LineageRecord, PlannedEvent } from '../model.js';
import { event, lineageSubject, reject, type Rejection } from './common.js';

export interface TakeoverState {
  readonly lineage: LineageRecord | undefined;
  /** Ids of the lineage's reserved and unresolved occurrences, delivered to the successor. */
  readonly open: { readonly reserved: readonly string[]; readonly unresolved: readonly string[] };
}

export interface TakeoverCommand {
  readonly lineageId: string;
  readonly secretDigest: Sha256Digest;
}

/**
 * The optional compare-and-set of a takeover: the generation the caller means to retire (0: the
 * lineage has none yet). Checked against the lineage as the takeover's transaction locked it, so
 * of racing takeovers that read the same generation exactly one succeeds; the others learn it here
 * instead of holding a credential the winner already retired (AOC-REQ-006 fences them either way).
 */
export function checkExpectedGeneration(
  lineageId: string,
  current: LineageRecord | undefined,
  expectedGeneration: number | undefined,
): Rejection | undefined {
  const currentGeneration = current?.generation ?? 0;
  if (expectedGeneration === undefined || expectedGeneration === currentGeneration) return undefined;
  return reject(
    'generation_mismatch',
    'the lineage is not at the generation the takeover expected to retire',
    {
      lineage: lineageId,
      expectedGeneration,
      currentGeneration,
    },
  );
}

export interface TakeoverDecision {
  readonly lineage: LineageRecord;
  readonly credential: CredentialRecord;
  /** The generation this takeover retired, or null for the lineage's first executor. */
  readonly retiredGeneration: number | null;
  readonly events: readonly PlannedEvent[];
}

export function decideTakeover(state: TakeoverState, cmd: TakeoverCommand, now: number): TakeoverDecision {
  const previous = state.lineage;
  // Integers only grow: the successor's generation is strictly above every earlier one.
  const generation = (previous?.generation ?? 0) + 1;
  const lineage: LineageRecord = {
    id: cmd.lineageId,
    generation,
    createdAt: previous?.createdAt ?? now,
    updatedAt: now,
    version: (previous?.version ?? 0) + 1,
  };
  const credential: CredentialRecord = {
    secretDigest: cmd.secretDigest,
    lineage: cmd.lineageId,
    generation,
    issuedAt: now,
    retiredAt: null,
  };
  const retiredGeneration = previous?.generation ?? null;
  const body = {
    lineage: cmd.lineageId,
    generation,
    retiredGeneration,
    delivered: { reserved: [...state.open.reserved], unresolved: [...state.open.unresolved] },
  };
  return {
    lineage,
    credential,
    retiredGeneration,
    events: [event(lineageSubject(cmd.lineageId), 'generation_advanced', body)],
  };
}
