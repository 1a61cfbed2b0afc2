/**
 * The SDK workers use (DESIGN.md §8). `BatonClient` has two implementations with this one
 * interface: `HttpBatonClient` (the HTTP API) and `InProcessBatonClient` (an OccurrencesService in
 * the same process). test/client/contract.ts runs the same assertions against both.
 */
import type {
  AcknowledgementInput,
  CreateAndEnterResult,
  CreateInput,
  CreateResult,
  EntryTicket,
  ExpectedBinding,
  HeldWorkItem,
  MissingKnowledgeReason,
  ObserveResult,
  OccurrenceCounts,
  OccurrenceDetail,
  OccurrenceView,
  ReissueInput,
  RemedyInput,
} from '../occurrences/index.js';
import type { AcknowledgedSettled, OccurrenceReconciled } from '../providers/index.js';
import type { ProviderAdapter, ProviderCall } from './adapter.js';
import type { ExecutorHarness } from './harness.js';

/**
 * What a worker intends to do: the service's creation input minus the credential (the executor
 * adds its own). With the lineage, `creationKey` is the durable creation binding.
 */
export type Operation = Omit<CreateInput, 'credential'>;

export type RemedyOperation = Omit<RemedyInput, 'credential'>;

/** Reissue a released occurrence (AOC-REQ-008), minus the credential. */
export type ReissueOperation = Omit<ReissueInput, 'credential'>;

/**
 * What an executor may report about the provider's answer to the entry call. It carries no
 * authentication verdict: Baton records it as evidence with missing knowledge `unauthenticated`,
 * and only Baton's own status-source layer may move the outcome (AOC-REQ-009, docs/api.md).
 */
export type ExecutorAcknowledgement = Omit<AcknowledgementInput, 'authentication'>;

/**
 * Per call, on every method that talks to Baton (docs/client.md "Deadlines and cancellation"). The
 * HTTP client cuts a call off at `timeoutMs` (`client_timeout`) or when `signal` aborts
 * (`client_aborted`); either way the command may have applied, as after any lost answer. The
 * in-process client has no wire to wait on, and each of its calls is one transaction: it ignores both.
 */
export interface CallOptions {
  /** This call's deadline, overriding the client's `timeoutMs` (default 30 s). */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/**
 * A takeover's options: a call's, plus its optional compare-and-set. `expectedGeneration` is the
 * generation the caller means to retire (0: the lineage has none yet); when the lineage is at
 * another, the takeover is refused `generation_mismatch` (409, `details.expectedGeneration` and
 * `details.currentGeneration`) and nothing changes. Without it, takeover is unconditional.
 */
export interface TakeoverOptions extends CallOptions {
  readonly expectedGeneration?: number;
}

/** What a takeover said of the lineage's held harness items (A6); nothing for a resumed executor. */
export interface Held {
  readonly held: readonly HeldWorkItem[];
  readonly heldMore: boolean;
}

export const NOTHING_HELD: Held = { held: [], heldMore: false };

/** The lineage's open work, handed to the successor before it may act (AOC-REQ-005). */
export interface OpenWork {
  readonly reserved: readonly OccurrenceView[];
  readonly unresolved: readonly OccurrenceView[];
}

export const PERFORM_STATUSES = ['succeeded', 'failed', 'unresolved', 'refused'] as const;
export type PerformStatus = (typeof PERFORM_STATUSES)[number];

/** What `perform` did, and what is and is not known afterwards. */
export interface PerformResult {
  /**
   * `succeeded`: resolved, effect occurred. `failed`: resolved, no effect (profile-confirmed).
   * `unresolved`: anything in doubt — the occurrence may be entered with an open outcome, or a call's
   * outcome is unknown. `refused`: Baton refused a step (see `reason`); nothing was sent by this call.
   */
  readonly status: PerformStatus;
  /** Null only when create itself failed or its outcome is unknown. */
  readonly occurrenceId: string | null;
  /** The occurrence as last seen, when known. */
  readonly occurrence?: OccurrenceView;
  /** A BatonError code or a perform reason such as `already_entered_earlier` or `adapter_failed`. */
  readonly reason?: string;
  readonly missingKnowledge?: MissingKnowledgeReason;
  /** The BatonError code behind `reason`, when a call failed. */
  readonly errorCode?: string;
  /** How often this perform called the adapter: 0 or 1, never more. */
  readonly adapterCalls: 0 | 1;
  /**
   * Only with `reason: acknowledgement_not_recorded`: the provider's answer as the adapter reported
   * it, which Baton may not hold — the step was refused, or its answer was lost (then it may have
   * applied). `executor.acknowledge(result.acknowledgement)` records it later; after a lost answer
   * that may append it a second time, which is evidence only and never moves the outcome.
   */
  readonly acknowledgement?: ExecutorAcknowledgement;
}

/** An executor: one lineage, one generation, its credential. Every call is fenced by that generation. */
export interface Executor {
  readonly lineage: string;
  readonly generation: number;
  /** The open work the takeover returned (empty when this executor was resumed, not taken over). */
  readonly handover: OpenWork;
  /**
   * The lineage's held harness items (paused, suppressed, handed off) the takeover listed (Mission
   * build spec A6): not to be dispatched until a check or an operator allows. Empty when resumed.
   */
  readonly held: readonly HeldWorkItem[];
  /** The lineage holds more items than `held` lists (at most 1,000): the harness API lists them all. */
  readonly heldMore: boolean;
  /** This executor's governed sessions and work under their Missions (issue 11 §5; docs/harness.md). */
  readonly harness: ExecutorHarness;
  /** To hand this executor to the worker process that acts (`client.resume`). Holds the secret. */
  binding(): ExecutorBinding;
  /** Safe to retry with the same operation: the creation binding returns the original occurrence. */
  create(operation: Operation, options?: CallOptions): Promise<CreateResult>;
  /**
   * The occurrence this executor's lineage holds under `creationKey` (its creation binding,
   * AOC-REQ-002), or null: a read that creates nothing, safe to retry. The MCP gateway answers a
   * repeat from it before its Mission gate (docs/mcp.md "Missions").
   */
  findByCreationKey(creationKey: string, options?: CallOptions): Promise<OccurrenceView | null>;
  /** NOT safe to retry blindly: after a lost answer, query the occurrence instead (AOC-REQ-010). */
  enter(occurrenceId: string, expect?: ExpectedBinding, options?: CallOptions): Promise<EntryTicket>;
  /**
   * create then enter in ONE call and one transaction (issue 16 §4): `ticket` is what to send, or
   * null when the creation binding returned an occurrence past `reserved`. NOT safe to retry blindly:
   * after a lost answer it may have entered; a repeat returns the original with no ticket, never a
   * second entry. An entry refusal after a fresh create keeps the reservation (its id in `details`).
   */
  createAndEnter(
    operation: Operation,
    expect?: ExpectedBinding,
    options?: CallOptions,
  ): Promise<CreateAndEnterResult>;
  release(occurrenceId: string, requestDigest: string, options?: CallOptions): Promise<OccurrenceView>;
  reissue(operation: ReissueOperation, options?: CallOptions): Promise<CreateResult>;
  remedy(operation: RemedyOperation, options?: CallOptions): Promise<CreateResult>;
  /** Record the provider's answer to the entry call as (unauthenticated) evidence. Not idempotent. */
  acknowledge(acknowledgement: ExecutorAcknowledgement, options?: CallOptions): Promise<ObserveResult>;
  /**
   * Ask Baton's status sources, pinned by the occurrence's profile, about one of this lineage's
   * occurrences now: one pass, authenticated answers only move it (AOC-REQ-009). Safe to repeat:
   * it never enters; a repeat appends more evidence.
   */
  reconcile(occurrenceId: string, options?: CallOptions): Promise<OccurrenceReconciled>;
  /**
   * acknowledge then reconcile in ONE call, recorded in one transaction (issue 16 §4). Not
   * idempotent, like acknowledge: a repeat appends a second acknowledgement. Never enters.
   */
  acknowledgeAndSettle(
    acknowledgement: ExecutorAcknowledgement,
    options?: CallOptions,
  ): Promise<AcknowledgedSettled>;
  /**
   * createAndEnter → adapter.send → acknowledgeAndSettle (two calls to Baton); never retries an
   * entered occurrence.
   * `adapter` may be a plain async function that sends the ticket with the caller's own client.
   * `options` apply to each of its calls to Baton (each gets the whole `timeoutMs`), not to the adapter;
   * `signal` never cuts off acknowledge-and-settle once the adapter was called (docs/client.md
   * "Deadlines and cancellation").
   */
  perform(
    operation: Operation,
    adapter: ProviderAdapter | ProviderCall,
    options?: CallOptions,
  ): Promise<PerformResult>;
}

/** What identifies an executor: handed by whoever did the takeover to the worker that acts. */
export interface ExecutorBinding {
  readonly lineage: string;
  readonly generation: number;
  /** The secret takeover returned once. Never log it. */
  readonly credential: string;
}

export interface BatonClient {
  /**
   * Advance the lineage's generation, retire the predecessor, return the successor (AOC-REQ-006);
   * with `expectedGeneration`, only if that is the lineage's current generation.
   */
  takeover(lineage: string, options?: TakeoverOptions): Promise<Executor>;
  /** An executor for a credential issued earlier (its handover is empty: ask listOpen). No I/O. */
  resume(binding: ExecutorBinding): Executor;
  getOccurrence(occurrenceId: string, options?: CallOptions): Promise<OccurrenceDetail>;
  listOpen(lineage: string, options?: CallOptions): Promise<OpenWork>;
  listUnresolved(lineage: string, options?: CallOptions): Promise<readonly OccurrenceView[]>;
  counts(options?: CallOptions): Promise<OccurrenceCounts>;
}
