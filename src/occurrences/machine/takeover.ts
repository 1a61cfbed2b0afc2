/**
 * Takeover (AOC-REQ-005, AOC-REQ-006): advance the lineage's generation, retire the predecessor and
 * bind a new credential to (lineage, generation), all in one transaction. The successor's answer
 * carries the lineage's open occurrences, recorded as delivered.
 */
import type { Sha256Digest } from '../../core/digest.js';
import type { CredentialRecord, LineageRecord, PlannedEvent } from '../model.js';
import { event, lineageSubject } from './common.js';

export interface TakeoverState {
  readonly lineage: LineageRecord | undefined;
  /** Ids of the lineage's reserved and unresolved occurrences, delivered to the successor. */
  readonly open: { readonly reserved: readonly string[]; readonly unresolved: readonly string[] };
}

export interface TakeoverCommand {
  readonly lineageId: string;
  readonly secretDigest: Sha256Digest;
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
