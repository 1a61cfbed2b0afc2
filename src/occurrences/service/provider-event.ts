/**
 * One provider webhook event in ONE transaction (issue 13 §2: one commit per delivery): the
 * occurrence its native key (or its bound provider reference) names is found and locked, the provider's event id is remembered (a
 * duplicate records nothing), and the observation the trusted status-source layer makes of it is
 * judged and recorded. A refusal anywhere rolls the whole delivery back, its event id included,
 * so the provider's retry is never taken for a duplicate.
 */
import type { ObservationInput } from '../inputs-observe.js';
import { readObservation } from '../inputs-observe.js';
import type { ProviderProfile } from '../profile-types.js';
import { BatonError } from '../../core/errors.js';
import { event as planned, occurrenceSubject } from '../machine/common.js';
import type { OccurrenceRecord } from '../model.js';
import type { OccurrencesRepository } from '../ports.js';
import type { ServiceContext } from './context.js';
import { observeIn, type ObserveResult } from './observe.js';

/** Where an occurrence is under a profile: its account and environment. */
interface Place {
  readonly account: string;
  readonly environment: string;
}

/**
 * How a delivery names its occurrence: by its native key, or — when the event names no key of
 * Baton's (Stripe's events after a cancel or a capture name that request's key, or none) — by
 * the provider reference bound to it (migration 034). The native key is asked first.
 */
export interface OccurrenceLocator {
  readonly nativeKey?: Place & { readonly key: string };
  readonly reference?: Place & { readonly reference: string };
}

export interface ProviderEventInput extends OccurrenceLocator {
  /** The profile whose receiver authenticated the delivery (the event ids' namespace). */
  readonly profileId: string;
  /** The provider's event id; absent for a refused delivery (evidence only, never remembered). */
  readonly eventId?: string;
  readonly receivedAt: number;
}

/** The occurrence the locator names, locked in `repo`'s transaction (undefined: none, or not one). */
async function lockNamed(
  repo: OccurrencesRepository,
  profileId: string,
  at: OccurrenceLocator,
): Promise<OccurrenceRecord | undefined> {
  const k = at.nativeKey;
  if (k !== undefined) return repo.lockByNativeKey(profileId, k.account, k.environment, k.key);
  const r = at.reference;
  if (r !== undefined) return repo.lockByReference(profileId, r.account, r.environment, r.reference);
  return undefined;
}

export type ProviderEventResult =
  | { readonly kind: 'duplicate' }
  | { readonly kind: 'unknown_occurrence' }
  | { readonly kind: 'recorded'; readonly occurrenceId: string; readonly result: ObserveResult };

/** What the status-source layer makes of the event for one occurrence, under its OWN bound profile. */
export type EventObservation = (bound: ProviderProfile, occurrenceId: string) => ObservationInput;

/** The event observed under the occurrence's OWN bound profile version (AOC-REQ-003), in `repo`'s transaction. */
async function observeBound(
  ctx: ServiceContext,
  repo: OccurrencesRepository,
  o: OccurrenceRecord,
  observe: EventObservation,
  actor: string,
): Promise<ObserveResult> {
  const bound = await repo.getProfile(o.provider.profileId, o.provider.profileVersion);
  if (bound === undefined) throw new BatonError('store_corrupt', 'the bound profile is missing');
  return observeIn(ctx, repo, readObservation(observe(bound.document, o.id), false), actor);
}

export function recordProviderEvent(
  ctx: ServiceContext,
  event: ProviderEventInput,
  observe: EventObservation,
  actor: string,
): Promise<ProviderEventResult> {
  return ctx.uow.run(async (repo): Promise<ProviderEventResult> => {
    const o = await lockNamed(repo, event.profileId, event);
    if (event.eventId !== undefined) {
      const fresh = await repo.rememberProviderEvent(
        event.profileId,
        event.eventId,
        o?.id ?? null,
        event.receivedAt,
      );
      if (!fresh) return { kind: 'duplicate' };
    }
    if (o === undefined) return { kind: 'unknown_occurrence' };
    return { kind: 'recorded', occurrenceId: o.id, result: await observeBound(ctx, repo, o, observe, actor) };
  });
}

/**
 * How many distinct refused deliveries one occurrence keeps as evidence (docs/providers.md
 * "Reconciliation in serve"). AOC-CASE-009 asks that unauthenticated observations be preserved;
 * without a bound anyone who knows a native key could grow the occurrence's chain forever.
 */
export const REFUSED_EVIDENCE_CAP = 32;

/**
 * A delivery the receiver refused (unauthenticated or stale), about the occurrence its native key
 * names. Only the key: a provider reference is far less secret than Baton's key, and whoever held
 * one could fill REFUSED_EVIDENCE_CAP so that later refusals went unrecorded (AOC-CASE-009).
 */
export interface RefusedDeliveryInput {
  readonly nativeKey: NonNullable<OccurrenceLocator['nativeKey']>;
  readonly profileId: string;
  readonly receivedAt: number;
  /** What makes two refused deliveries the same: the refusal reason and the body's digest. */
  readonly fingerprint: string;
  readonly reason: string;
}

export type RefusedDeliveryResult =
  | { readonly kind: 'unknown_occurrence' }
  /** The same refused delivery was kept already: nothing new. */
  | { readonly kind: 'repeat'; readonly occurrenceId: string }
  /** Past the cap: not kept (`marked`: this one appended the one `refused_evidence_capped`). */
  | { readonly kind: 'capped'; readonly occurrenceId: string; readonly marked: boolean }
  | { readonly kind: 'recorded'; readonly occurrenceId: string; readonly result: ObserveResult };

/**
 * AOC-CASE-009, bounded: a refused delivery is kept as an observation that changes nothing, once
 * per fingerprint and at most REFUSED_EVIDENCE_CAP per occurrence; the first one past the cap
 * appends `refused_evidence_capped` instead, later ones append nothing. Resolved occurrences keep
 * them too (AOC-REQ-004: a forged report after resolution is evidence of an attack); the cap
 * bounds them the same way. ONE transaction, the occurrence locked first.
 */
export function recordRefusedDelivery(
  ctx: ServiceContext,
  input: RefusedDeliveryInput,
  observe: EventObservation,
  actor: string,
): Promise<RefusedDeliveryResult> {
  return ctx.uow.run(async (repo): Promise<RefusedDeliveryResult> => {
    const k = input.nativeKey;
    const o = await repo.lockByNativeKey(input.profileId, k.account, k.environment, k.key);
    if (o === undefined) return { kind: 'unknown_occurrence' };
    const memory = await repo.rememberRefusedDelivery(
      o.id,
      input.fingerprint,
      input.receivedAt,
      REFUSED_EVIDENCE_CAP,
    );
    if (memory === 'seen') return { kind: 'repeat', occurrenceId: o.id };
    if (memory === 'over_cap') return { kind: 'capped', occurrenceId: o.id, marked: false };
    if (memory === 'cap_reached') {
      const body = { cap: REFUSED_EVIDENCE_CAP, profileId: input.profileId, reason: input.reason };
      await repo.appendEvents(
        [planned(occurrenceSubject(o.id), 'refused_evidence_capped', body)],
        ctx.clock.wallMs(),
        actor,
      );
      return { kind: 'capped', occurrenceId: o.id, marked: true };
    }
    return { kind: 'recorded', occurrenceId: o.id, result: await observeBound(ctx, repo, o, observe, actor) };
  });
}
