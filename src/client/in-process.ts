/**
 * The in-process twin of HttpBatonClient: the same interface over an OccurrencesService in this
 * process (tests, the demo, embedded use). Each call is one service command, so the guarantees are
 * the service's own; test/client/contract.ts checks both clients behave alike.
 */
import { BatonError } from '../core/errors.js';
import type { MissionsService } from '../missions/index.js';
import type {
  CreateAndEnterResult,
  CreateResult,
  EntryTicket,
  ExpectedBinding,
  HeldWorkItem,
  ObserveResult,
  OccurrenceCounts,
  OccurrenceDetail,
  OccurrencesService,
  OccurrenceView,
} from '../occurrences/index.js';
import {
  acknowledgeAndSettle,
  reconcileOccurrence,
  type AcknowledgedSettled,
  type OccurrenceReconciled,
  type StatusSources,
} from '../providers/index.js';
import { evidenceOnly, type ProviderAdapter, type ProviderCall } from './adapter.js';
import type { ExecutorHarness } from './harness.js';
import { InProcessHarness } from './in-process-harness.js';
import { perform } from './perform.js';
import type {
  BatonClient,
  Executor,
  ExecutorAcknowledgement,
  ExecutorBinding,
  Held,
  OpenWork,
  Operation,
  PerformResult,
  ReissueOperation,
  RemedyOperation,
  TakeoverOptions,
} from './types.js';
import { NOTHING_HELD } from './types.js';

export interface InProcessBatonClientOptions {
  readonly service: OccurrencesService;
  /**
   * Baton's status-source layer (src/providers), with the keys that verify the providers' signed
   * answers, as `baton serve` has it. Without it `executor.reconcile` is refused `unavailable`,
   * and `perform` leaves what it sent unresolved (`awaiting_status`).
   */
  readonly statusSources?: StatusSources;
  /** The actor recorded for takeovers (the operator principal the HTTP API would authenticate). */
  readonly actor?: string;
  /**
   * The Mission harness on the same store (`openHarnessOn`), for `executor.harness`; without it
   * those calls are refused `unavailable`.
   */
  readonly harness?: MissionsService;
}

/** How many entered occurrences an executor keeps for acknowledge-and-settle (a bound, not a cache policy). */
const ENTERED_KEPT = 1024;

class InProcessExecutor implements Executor {
  readonly lineage: string;
  readonly generation: number;
  readonly handover: OpenWork;
  readonly held: readonly HeldWorkItem[];
  readonly heldMore: boolean;
  readonly harness: ExecutorHarness;
  readonly #service: OccurrencesService;
  readonly #sources: StatusSources | undefined;
  readonly #credential: string;
  /**
   * Occurrences this executor entered, as its entry left them, until it next touches them: the
   * start acknowledge-and-settle reads the status source from (issue 15 §7: no read between the
   * upstream's answer and its recording). Only this executor's own entries are here, so the lineage
   * rule holds; a generation retired since is refused by the recording transaction itself.
   */
  readonly #entered = new Map<string, OccurrenceView>();

  constructor(
    service: OccurrencesService,
    sources: StatusSources | undefined,
    missions: MissionsService | undefined,
    b: ExecutorBinding,
    handover: OpenWork,
    held: Held = NOTHING_HELD,
  ) {
    this.harness = new InProcessHarness(missions, service, b);
    this.#service = service;
    this.#sources = sources;
    this.#credential = b.credential;
    this.lineage = b.lineage;
    this.generation = b.generation;
    this.handover = handover;
    this.held = held.held;
    this.heldMore = held.heldMore;
  }

  binding(): ExecutorBinding {
    return { lineage: this.lineage, generation: this.generation, credential: this.#credential };
  }

  create(operation: Operation): Promise<CreateResult> {
    return this.#service.create({ ...operation, credential: this.#credential });
  }

  /** This lineage's occurrence under `creationKey`, as the HTTP route lists it for an executor. */
  async findByCreationKey(creationKey: string): Promise<OccurrenceView | null> {
    const page = await this.#service.listOccurrences({ lineage: this.lineage, creationKey, limit: 1 });
    return page.occurrences[0] ?? null;
  }

  async enter(occurrenceId: string, expect?: ExpectedBinding): Promise<EntryTicket> {
    await this.#own(occurrenceId);
    const input = { credential: this.#credential, occurrenceId };
    const ticket = await this.#service.enter(expect === undefined ? input : { ...input, expect });
    this.#remember(ticket.occurrence);
    return ticket;
  }

  /** The create's own checks stand in for #own: a creation binding is scoped to this lineage. */
  async createAndEnter(operation: Operation, expect?: ExpectedBinding): Promise<CreateAndEnterResult> {
    const input = { ...operation, credential: this.#credential };
    const r = await this.#service.createAndEnter(expect === undefined ? input : { ...input, expect });
    if (r.ticket !== null) this.#remember(r.ticket.occurrence);
    return r;
  }

  #remember(o: OccurrenceView): void {
    this.#entered.set(o.id, o);
    if (this.#entered.size > ENTERED_KEPT) {
      const oldest = this.#entered.keys().next();
      if (oldest.done !== true) this.#entered.delete(oldest.value);
    }
  }

  async release(occurrenceId: string, requestDigest: string): Promise<OccurrenceView> {
    await this.#own(occurrenceId);
    return this.#service.release({ credential: this.#credential, occurrenceId, requestDigest });
  }

  async reissue(operation: ReissueOperation): Promise<CreateResult> {
    await this.#own(operation.occurrenceId);
    return this.#service.reissue({ ...operation, credential: this.#credential });
  }

  async remedy(operation: RemedyOperation): Promise<CreateResult> {
    await this.#own(operation.remedyOf);
    return this.#service.remedy({ ...operation, credential: this.#credential });
  }

  /** Always unauthenticated evidence: the in-process twin is no more trusted than a remote worker. */
  async acknowledge(acknowledgement: ExecutorAcknowledgement): Promise<ObserveResult> {
    const input = evidenceOnly(acknowledgement);
    await this.#own(input.occurrenceId);
    const actor = `executor:${this.lineage}#${this.generation}`;
    return this.#service.recordAcknowledgement({ ...input, authentication: { verified: false } }, actor);
  }

  /** Without status sources it records the acknowledgement alone and says no source was asked. */
  async acknowledgeAndSettle(acknowledgement: ExecutorAcknowledgement): Promise<AcknowledgedSettled> {
    const input = evidenceOnly(acknowledgement);
    const entered = this.#entered.get(input.occurrenceId);
    this.#entered.delete(input.occurrenceId);
    const known = entered ?? (await this.#own(input.occurrenceId));
    const actor = `executor:${this.lineage}#${this.generation}`;
    const ack = { ...input, authentication: { verified: false } };
    // As the HTTP route does: the occurrence already read is not read again, and the recording
    // transaction authenticates this generation again (one retired in between is refused there).
    const reporter = { credential: this.#credential };
    const options = { ackActor: actor, requestedBy: actor, known, reporter };
    return acknowledgeAndSettle(this.#service, this.#sources, ack, options);
  }

  async reconcile(occurrenceId: string): Promise<OccurrenceReconciled> {
    await this.#own(occurrenceId);
    if (this.#sources === undefined) {
      throw new BatonError('unavailable', 'this in-process client has no status sources to ask');
    }
    return reconcileOccurrence(this.#service, this.#sources, occurrenceId);
  }

  /**
   * The HTTP server's refusals, in its order (docs/api.md "Authentication"): an unknown or retired
   * credential first, then another lineage's occurrence answers exactly like a missing one. The
   * service checks again inside its transaction; these only refuse earlier, never admit.
   * One snapshot read by this generation's credential, as the HTTP route does (issue 16 §1) — not
   * the lineage's whole takeover history, which grows with every generation (issue 15 §7).
   */
  async #own(occurrenceId: string): Promise<OccurrenceView> {
    this.#entered.delete(occurrenceId);
    const seen = await this.#service.getOccurrenceViewAs(occurrenceId, this.#credential);
    return seen.occurrence;
  }

  perform(operation: Operation, adapter: ProviderAdapter | ProviderCall): Promise<PerformResult> {
    return perform(this, operation, adapter);
  }
}

export class InProcessBatonClient implements BatonClient {
  readonly #service: OccurrencesService;
  readonly #sources: StatusSources | undefined;
  readonly #missions: MissionsService | undefined;
  readonly #actor: string;

  constructor(options: InProcessBatonClientOptions) {
    this.#service = options.service;
    this.#sources = options.statusSources;
    this.#missions = options.harness;
    this.#actor = options.actor ?? 'operator';
  }

  async takeover(lineage: string, options?: TakeoverOptions): Promise<Executor> {
    const expectedGeneration = options?.expectedGeneration;
    const input = expectedGeneration === undefined ? { lineage } : { lineage, expectedGeneration };
    const t = await this.#service.takeover(input, this.#actor);
    const open = { reserved: t.reserved, unresolved: t.unresolved };
    return new InProcessExecutor(this.#service, this.#sources, this.#missions, t, open, t);
  }

  resume(binding: ExecutorBinding): Executor {
    return new InProcessExecutor(this.#service, this.#sources, this.#missions, binding, {
      reserved: [],
      unresolved: [],
    });
  }

  getOccurrence(occurrenceId: string): Promise<OccurrenceDetail> {
    return this.#service.getOccurrence(occurrenceId);
  }

  listOpen(lineage: string): Promise<OpenWork> {
    return this.#service.listOpen(lineage);
  }

  listUnresolved(lineage: string): Promise<readonly OccurrenceView[]> {
    return this.#service.listUnresolved(lineage);
  }

  counts(): Promise<OccurrenceCounts> {
    return this.#service.counts();
  }
}
