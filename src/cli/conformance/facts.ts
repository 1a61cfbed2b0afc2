/**
 * The facts the AOC Conformance section asks a report to show for each occurrence: its identifier,
 * executor generation, provider-binding digest, terminal or unresolved state, provider-entry and
 * authority-accounting state, entry attempt count, and evidence-source and missing-knowledge flags
 * — plus the provider's own effect count for its key (the synthetic oracle).
 */
import { digestJcs } from '../../core/digest.js';
import type { EvidenceEvent } from '../../occurrences/index.js';
import type { Env } from './env.js';

export interface OccurrenceFacts {
  readonly role: string;
  readonly occurrenceId: string;
  readonly lineage: string;
  readonly executorGeneration: { readonly captured: number; readonly entered: number | null };
  readonly profile: { readonly id: string; readonly version: string };
  readonly providerBindingDigest: string;
  readonly nativeKey: string | null;
  readonly providerReference: string | null;
  readonly state: {
    readonly phase: string;
    readonly outcome: string;
    readonly effect: string;
    readonly conflict: boolean;
    readonly unresolved: boolean;
    /** `resolved` or `released` when terminal, null while open. */
    readonly terminal: string | null;
  };
  readonly entry: { readonly entered: boolean; readonly attempts: number };
  readonly authority: {
    readonly id: string;
    readonly amount: number;
    readonly total: number;
    readonly reserved: number;
    readonly consumed: number;
  };
  readonly evidence: {
    readonly events: number;
    readonly sources: readonly string[];
    readonly effectiveObservations: number;
    readonly missingKnowledge: readonly string[];
    readonly hasMissingKnowledge: boolean;
  };
  readonly remedyOf: string | null;
  readonly reissueOf: string | null;
  readonly providerEffects: number;
}

interface Interpreted {
  observation?: { source?: string };
  interpretation?: { effective?: boolean; missingKnowledge?: string | null };
}

function observations(evidence: readonly EvidenceEvent[]): Interpreted[] {
  return evidence.filter((e) => e.type === 'observation_recorded').map((e) => e.body as Interpreted);
}

export async function occurrenceFacts(env: Env, role: string, id: string): Promise<OccurrenceFacts> {
  const { occurrence: o, evidence } = await env.svc.getOccurrence(id);
  const a = await env.svc.getAuthority(o.authority.id);
  const seen = observations(evidence);
  const reasons = seen
    .map((s) => s.interpretation?.missingKnowledge)
    .filter((r): r is string => typeof r === 'string');
  const terminal = o.phase === 'resolved' || o.phase === 'released' ? o.phase : null;
  return {
    role,
    occurrenceId: o.id,
    lineage: o.lineage,
    executorGeneration: { captured: o.capturedGeneration, entered: o.enteredGeneration },
    profile: { id: o.provider.profileId, version: o.provider.profileVersion },
    providerBindingDigest: digestJcs(o.provider),
    nativeKey: o.provider.nativeKey,
    providerReference: o.provider.providerReference,
    state: {
      phase: o.phase,
      outcome: o.outcome,
      effect: o.effect,
      conflict: o.conflict,
      unresolved: o.unresolved,
      terminal,
    },
    entry: {
      entered: o.enteredAt !== null,
      attempts: evidence.filter((e) => e.type === 'provider_entered').length,
    },
    authority: {
      id: a.id,
      amount: o.authority.amount,
      total: a.total,
      reserved: a.reserved,
      consumed: a.consumed,
    },
    evidence: {
      events: evidence.length,
      sources: [...new Set(seen.map((s) => s.observation?.source ?? 'unknown'))],
      effectiveObservations: seen.filter((s) => s.interpretation?.effective === true).length,
      missingKnowledge: [...new Set(reasons)],
      hasMissingKnowledge: reasons.length > 0,
    },
    remedyOf: o.remedyOf,
    reissueOf: o.reissueOf,
    providerEffects: o.provider.nativeKey === null ? 0 : env.sandbox.effectCount(o.provider.nativeKey),
  };
}
