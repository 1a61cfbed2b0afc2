/**
 * The trusted status-source layer (DESIGN.md §4, AOC-REQ-009): it asks a profile's pinned sources
 * about one occurrence, authenticates each answer against the source's pin, and hands the service
 * an ObservationInput. It never decides an outcome itself — the service judges binding, freshness,
 * completeness and the status map — and it never enters a provider.
 */
import type { Clock } from '../../core/clock.js';
import { systemClock } from '../../core/clock.js';
import { digestEquals, type Sha256Digest } from '../../core/digest.js';
import { BatonError } from '../../core/errors.js';
import type {
  ObserveResult,
  OccurrencesService,
  OccurrenceView,
  ProviderProfile,
  StatusSource,
  StatusSourceKind,
} from '../../occurrences/index.js';
import { findStatusSource, profileDigest } from '../../occurrences/index.js';
import type { KeyResolver } from '../key-resolver.js';
import type { SourceContext } from './context.js';
import { declaredListing, declaredLookup } from '../declared/sources.js';
import { listing } from './listing.js';
import { lookup } from './lookup.js';
import type { SourceReading } from './reading.js';

export type { SourceReading } from './reading.js';
export {
  webhookReceiver,
  occurrenceIdFromKey,
  type WebhookReceiverOptions,
  type WebhookRecorded,
} from './webhook.js';

export interface StatusSourcesOptions {
  readonly keys: KeyResolver;
  readonly clock?: Clock;
  readonly timeoutMs?: number;
  readonly pageSize?: number;
  readonly maxPages?: number;
}

/**
 * The most items a listing page may be asked for — and so may hold: a page holding more than was
 * asked for is refused as unavailable (docs/providers.md "Status sources").
 */
export const MAX_PAGE_SIZE = 100;

/** The order in which the active sources are asked; a webhook is passive (it comes to us). */
export const ACTIVE_KINDS: readonly StatusSourceKind[] = ['lookup_by_key', 'lookup_by_reference', 'listing'];

export class StatusSources {
  readonly #ctx: SourceContext;
  /**
   * Digests of the profile documents asked under, by object: a registered profile is immutable
   * (AOC-REQ-003) and the service hands out one cached object per version, so its JCS + SHA-256
   * (≈ 0.2 ms) is computed once, not once per lookup (issue 13 §8, measured in the reconciler bench).
   */
  readonly #digests = new WeakMap<ProviderProfile, Sha256Digest>();

  constructor(options: StatusSourcesOptions) {
    const pageSize = options.pageSize ?? 50;
    // A page's other matching items travel with the observation: the page size bounds them.
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE)
      throw new BatonError('input_invalid', `pageSize must be an integer from 1 to ${MAX_PAGE_SIZE}`);
    this.#ctx = {
      keys: options.keys,
      clock: options.clock ?? systemClock,
      timeoutMs: options.timeoutMs ?? 10_000,
      pageSize,
      maxPages: options.maxPages ?? 20,
    };
  }

  /** The active sources that can answer for this occurrence now, in `kinds` order. */
  applicable(profile: ProviderProfile, o: OccurrenceView, kinds = ACTIVE_KINDS): StatusSource[] {
    const usable = (s: StatusSource): boolean =>
      (s.kind === 'lookup_by_key' && o.provider.nativeKey !== null) ||
      (s.kind === 'lookup_by_reference' && o.provider.providerReference !== null) ||
      (s.kind === 'listing' && (o.provider.nativeKey !== null || o.provider.providerReference !== null));
    return kinds.flatMap((kind) => profile.statusSources.filter((s) => s.kind === kind && usable(s)));
  }

  /** Ask one pinned source of the occurrence's own profile. */
  async query(profile: ProviderProfile, o: OccurrenceView, sourceId: string): Promise<SourceReading> {
    // AOC-REQ-003: a source is asked only under the exact profile the occurrence is bound to.
    let digest = this.#digests.get(profile);
    if (digest === undefined) this.#digests.set(profile, (digest = profileDigest(profile)));
    if (!digestEquals(digest, o.provider.profileDigest)) {
      throw new BatonError('provider_binding_conflict', 'this is not the occurrence’s pinned profile');
    }
    const source = findStatusSource(profile, sourceId);
    if (source === undefined || source.kind === 'webhook') {
      throw new BatonError('status_source_invalid', 'the profile pins no active source with this id', {
        source: sourceId,
      });
    }
    // Format 2 sources carry their own read rules; format 1 ones speak the sandbox's wire format.
    if (source.read !== undefined) {
      const declared = { ...source, read: source.read };
      return source.kind === 'listing'
        ? declaredListing(this.#ctx, profile, o, declared)
        : declaredLookup(this.#ctx, profile, o, declared);
    }
    return source.kind === 'listing' ? listing(this.#ctx, o, source) : lookup(this.#ctx, o, source);
  }
}

/** Append a reading as an observation; the service says whether it was effective and why not. */
export function recordReading(
  service: Pick<OccurrencesService, 'observe'>,
  reading: SourceReading,
  requestedBy?: string,
): Promise<ObserveResult> {
  return requestedBy === undefined
    ? service.observe(reading.observation)
    : service.observe(reading.observation, undefined, requestedBy);
}
