/**
 * The imperative shell of the occurrences context (DESIGN.md §1, §3). Each command validates its
 * input strictly, opens ONE transaction through the unit of work, loads and locks what it decides
 * on, applies the pure machine, writes the records and appends the evidence. A refusal is a typed
 * BatonError thrown inside that transaction, so it changes no state.
 */
import type { Clock } from '../core/clock.js';
import { systemClock } from '../core/clock.js';
import { CursorCodec } from '../core/cursor.js';
import type { IdSource } from '../core/ids.js';
import { randomIdSource } from '../core/ids.js';
import type { Caller } from './machine/common.js';
import type { AuthorityRecord, DomainRecord } from './model.js';
import type { AcknowledgementInput, ObservationInput } from './inputs-observe.js';
import type {
  AuthorityInput,
  CreateInput,
  DomainConfigInput,
  EnterInput,
  ReissueInput,
  ReleaseInput,
  RemedyInput,
  TakeoverInput,
} from './inputs.js';
import type { OccurrencesUnitOfWork } from './ports.js';
import type { RegisteredProfile } from './profile-types.js';
import type { DomainPublicKey, OccurrenceView, ServiceContext } from './service/context.js';
import { create, reissue, remedy, type CreateResult } from './service/create.js';
import {
  createAndEnter,
  type CreateAndEnterInput,
  type CreateAndEnterResult,
} from './service/create-enter.js';
import { enter, release, type EntryTicket } from './service/entry.js';
import { listOccurrences, type ListInput, type OccurrencePage } from './service/listing.js';
import {
  acknowledgeAndObserve,
  observe,
  observeAll,
  type AcknowledgedObserved,
  type ObserveResult,
} from './service/observe.js';
import {
  recordProviderEvent,
  recordRefusedDelivery,
  type RefusedDeliveryInput,
  type RefusedDeliveryResult,
  type EventObservation,
  type ProviderEventInput,
  type ProviderEventResult,
} from './service/provider-event.js';
import * as admin from './service/admin-reads.js';
import * as q from './service/queries.js';
import * as setup from './service/setup.js';

export interface OccurrencesServiceOptions {
  readonly uow: OccurrencesUnitOfWork;
  readonly domainKey: DomainPublicKey;
  readonly clock?: Clock;
  readonly ids?: IdSource;
  /**
   * The cursor codec (src/core/cursor.ts). Servers that share a store pass one derived from the
   * domain key (`CursorCodec.fromDomainKey`, as src/store/occurrences.ts does), so a cursor one
   * issued pages on another; without it, a random key: cursors page on this service only.
   */
  readonly cursors?: CursorCodec;
}

export class OccurrencesService {
  readonly #ctx: ServiceContext;

  constructor(options: OccurrencesServiceOptions) {
    this.#ctx = {
      uow: options.uow,
      domainKey: options.domainKey,
      clock: options.clock ?? systemClock,
      ids: options.ids ?? randomIdSource,
      cursors: options.cursors ?? CursorCodec.ephemeral(),
    };
  }

  /** The codec of this service's cursors; the HTTP server issues every route's cursors with it. */
  get cursors(): CursorCodec {
    return this.#ctx.cursors;
  }

  // --- domain setup (operator) -----------------------------------------------------------------

  configureDomain(input: DomainConfigInput, actor = 'operator'): Promise<DomainRecord> {
    return setup.configureDomain(this.#ctx, input, actor);
  }

  /** Register a provider profile document (parsed with parseStrictJson); immutable once registered. */
  registerProfile(document: unknown, actor = 'operator'): Promise<RegisteredProfile> {
    return setup.registerProfile(this.#ctx, document, actor);
  }

  createAuthority(input: AuthorityInput, actor = 'operator'): Promise<AuthorityRecord> {
    return setup.createAuthority(this.#ctx, input, actor);
  }

  /** Advance the lineage's generation, retire the predecessor, issue the successor's credential. */
  takeover(input: TakeoverInput, actor = 'operator'): Promise<setup.TakeoverResult> {
    return setup.takeover(this.#ctx, input, actor);
  }

  // --- executor commands -----------------------------------------------------------------------

  create(input: CreateInput): Promise<CreateResult> {
    return create(this.#ctx, input);
  }

  enter(input: EnterInput): Promise<EntryTicket> {
    return enter(this.#ctx, input);
  }

  /** create then enter in ONE transaction, one answer with the ticket (issue 16 §4; same refusals). */
  createAndEnter(input: CreateAndEnterInput): Promise<CreateAndEnterResult> {
    return createAndEnter(this.#ctx, input);
  }

  release(input: ReleaseInput): Promise<OccurrenceView> {
    return release(this.#ctx, input);
  }

  reissue(input: ReissueInput): Promise<CreateResult> {
    return reissue(this.#ctx, input);
  }

  remedy(input: RemedyInput): Promise<CreateResult> {
    return remedy(this.#ctx, input);
  }

  // --- trusted status-source layer only (never an executor: see inputs-observe.ts) -------------

  /**
   * `actor`: who reported it, for the evidence (default `status-source:<source>`). An executor's
   * or operator's report is recorded under its own name, never as a status source's.
   */
  recordAcknowledgement(input: AcknowledgementInput, actor?: string): Promise<ObserveResult> {
    return observe(this.#ctx, input, true, actor);
  }

  /**
   * The acknowledgement and the status observations read for it, in ONE transaction (issue 16 §4,
   * acknowledge-and-settle): the same evidence as recordAcknowledgement then observe each.
   */
  acknowledgeAndObserve(
    ack: AcknowledgementInput,
    observations: readonly ObservationInput[],
    ackActor?: string,
    requestedBy?: string,
    reporter?: { readonly credential: string },
  ): Promise<AcknowledgedObserved> {
    return acknowledgeAndObserve(this.#ctx, ack, observations, ackActor, requestedBy, reporter);
  }

  /**
   * An executor's acknowledgement (evidence only, AOC-REQ-009): the credential is authenticated,
   * and the occurrence checked to be its lineage's, inside the command's own transaction; it is
   * recorded under `executor:<lineage>#<generation>` (issue 16 §1).
   */
  acknowledgeAs(input: AcknowledgementInput, credential: string): Promise<ObserveResult> {
    return observe(this.#ctx, input, true, undefined, undefined, { credential });
  }

  /** `requestedBy`: the principal that asked for the reconcile, recorded in the evidence. */
  observe(input: ObservationInput, actor?: string, requestedBy?: string): Promise<ObserveResult> {
    return observe(this.#ctx, input, false, actor, requestedBy);
  }

  /**
   * A reading a caller asked for (the reconcile route, `executor.reconcile`): recorded as `observe`
   * records it, except that an unanswered one that moves nothing, once its source has shown that
   * reason, is kept once per identical reading and at most ACKNOWLEDGEMENT_EVIDENCE_CAP per
   * occurrence (`notRecorded` says when it was not; service/ack-bound.ts).
   */
  observeAsked(input: ObservationInput, actor?: string, requestedBy?: string): Promise<ObserveResult> {
    return observe(this.#ctx, input, false, actor, requestedBy, undefined, true);
  }

  /**
   * Observations in ONE transaction, in order, each judged as `observe` would (issue 13 §8: a
   * reconciler stage shares one COMMIT); a refusal of any rolls back all of them.
   */
  observeAll(inputs: readonly ObservationInput[], requestedBy?: string): Promise<ObserveResult[]> {
    return observeAll(this.#ctx, inputs, requestedBy);
  }

  /**
   * A provider's webhook event (issue 13 §2): find the occurrence its native key names, remember
   * its event id and record `observe`'s observation, in ONE transaction; a duplicate id records nothing.
   */
  recordProviderEvent(
    event: ProviderEventInput,
    observe: EventObservation,
    actor: string,
  ): Promise<ProviderEventResult> {
    return recordProviderEvent(this.#ctx, event, observe, actor);
  }

  /**
   * A refused webhook delivery (unauthenticated or stale) about the occurrence its native key
   * names, kept as evidence that changes nothing: once per fingerprint, at most
   * REFUSED_EVIDENCE_CAP per occurrence (AOC-CASE-009), in ONE transaction.
   */
  recordRefusedDelivery(
    input: RefusedDeliveryInput,
    observe: EventObservation,
    actor: string,
  ): Promise<RefusedDeliveryResult> {
    return recordRefusedDelivery(this.#ctx, input, observe, actor);
  }

  // --- queries ---------------------------------------------------------------------------------

  getOccurrenceView(id: string): Promise<OccurrenceView> {
    return q.getOccurrenceView(this.#ctx, id);
  }

  /** The occurrence if this executor credential may see it, and who it is, in one snapshot. */
  getOccurrenceViewAs(
    id: string,
    credential: string,
  ): Promise<{ readonly occurrence: OccurrenceView; readonly caller: Caller }> {
    return q.getOccurrenceViewAs(this.#ctx, id, credential);
  }

  getOccurrence(id: string): Promise<q.OccurrenceDetail> {
    return q.getOccurrence(this.#ctx, id);
  }

  listOpen(lineage: string): Promise<{ reserved: OccurrenceView[]; unresolved: OccurrenceView[] }> {
    return q.listOpen(this.#ctx, lineage);
  }

  async listUnresolved(lineage: string): Promise<OccurrenceView[]> {
    return (await q.listOpen(this.#ctx, lineage)).unresolved;
  }

  /** One page of occurrences, newest first (docs/api.md, "Listing occurrences"). */
  listOccurrences(input: ListInput): Promise<OccurrencePage> {
    return listOccurrences(this.#ctx, input);
  }

  /**
   * A page of the lineage's history: its generations and takeover events after position
   * `page.after` (default 0), at most `page.limit` (default 50, at most 500) of each; `nextAfter`
   * is null only on the last page (`q.LineageView`).
   */
  getLineage(lineage: string, page?: q.LineagePage): Promise<q.LineageView> {
    return q.getLineage(this.#ctx, lineage, page);
  }

  /** The lineage's current executor generation (its one row; `lineage_not_found` if none). */
  currentGeneration(lineage: string): Promise<number> {
    return q.currentGeneration(this.#ctx, lineage);
  }

  counts(): Promise<q.OccurrenceCounts> {
    return q.counts(this.#ctx);
  }

  getDomain(): Promise<DomainRecord> {
    return q.getDomain(this.#ctx);
  }

  getAuthority(id: string): Promise<AuthorityRecord> {
    return q.getAuthority(this.#ctx, id);
  }

  getProfile(id: string, version: string): Promise<RegisteredProfile> {
    return q.getProfile(this.#ctx, id, version);
  }

  listProfiles(limit?: number): Promise<admin.Listed<admin.ProfileSummary>> {
    return admin.listProfiles(this.#ctx, limit);
  }

  listAuthorities(limit?: number, after?: string): Promise<admin.Listed<AuthorityRecord>> {
    return admin.listAuthorities(this.#ctx, limit, after);
  }
}
