/**
 * One provider webhook event in ONE transaction (issue 13 §2: one commit per delivery): the
 * occurrence its native key names is found and locked, the provider's event id is remembered (a
 * duplicate records nothing), and the observation the trusted status-source layer makes of it is
 * judged and recorded. A refusal anywhere rolls the whole delivery back, its event id included,
 * so the provider's retry is never taken for a duplicate.
 */
import type { ObservationInput } from '../inputs-observe.js';
import { readObservation } from '../inputs-observe.js';
import type { ProviderProfile } from '../profile-types.js';
import { BatonError } from '../../core/errors.js';
import type { ServiceContext } from './context.js';
import { observeIn, type ObserveResult } from './observe.js';

export interface ProviderEventInput {
  /** The profile whose receiver authenticated the delivery (the event ids' namespace). */
  readonly profileId: string;
  /** The provider's event id; absent for a refused delivery (evidence only, never remembered). */
  readonly eventId?: string;
  readonly receivedAt: number;
  /** The occurrence the event names: its native key under this profile, account and environment. */
  readonly nativeKey?: { readonly account: string; readonly environment: string; readonly key: string };
}

export type ProviderEventResult =
  | { readonly kind: 'duplicate' }
  | { readonly kind: 'unknown_occurrence' }
  | { readonly kind: 'recorded'; readonly occurrenceId: string; readonly result: ObserveResult };

/** What the status-source layer makes of the event for one occurrence, under its OWN bound profile. */
export type EventObservation = (bound: ProviderProfile, occurrenceId: string) => ObservationInput;

export function recordProviderEvent(
  ctx: ServiceContext,
  event: ProviderEventInput,
  observe: EventObservation,
  actor: string,
): Promise<ProviderEventResult> {
  return ctx.uow.run(async (repo): Promise<ProviderEventResult> => {
    const k = event.nativeKey;
    const o = k && (await repo.lockByNativeKey(event.profileId, k.account, k.environment, k.key));
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
    const bound = await repo.getProfile(o.provider.profileId, o.provider.profileVersion);
    if (bound === undefined) throw new BatonError('store_corrupt', 'the bound profile is missing');
    const cmd = readObservation(observe(bound.document, o.id), false);
    return { kind: 'recorded', occurrenceId: o.id, result: await observeIn(ctx, repo, cmd, actor) };
  });
}
