/**
 * HttpBatonClient: the BatonClient over the HTTP API, route for route as docs/api.md lists them.
 * The client's `token` is an operator (or admin) principal token: takeover and the queries use it.
 * An executor's calls carry that executor's credential as its bearer, never in a body.
 */
import type { JsonObject } from '../core/json.js';
import type {
  CreateAndEnterResult,
  CreateResult,
  EntryTicket,
  ExpectedBinding,
  HeldWorkItem,
  ObserveResult,
  OccurrenceCounts,
  OccurrenceDetail,
  OccurrenceView,
  TakeoverResult,
} from '../occurrences/index.js';
import type { AcknowledgedSettled, OccurrenceReconciled } from '../providers/index.js';
import { evidenceOnly, type ProviderAdapter, type ProviderCall } from './adapter.js';
import { createAndEnterFault, settledFault, ticketFault } from './answer-shape.js';
import {
  checkBearer,
  endpoint,
  exchange,
  expectMembers,
  type AnswerFault,
  type Endpoint,
  type Exchange,
  type Fetch,
} from './http-transport.js';
import { HarnessClient, type ExecutorHarness } from './harness.js';
import { perform } from './perform.js';
import type {
  BatonClient,
  CallOptions,
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

export interface HttpBatonClientOptions {
  /**
   * E.g. `http://127.0.0.1:4000`, or behind a gateway `https://host/baton/`: routes resolve under
   * its path (`https://host/baton/v1/…`), with or without the trailing slash.
   */
  readonly baseUrl: string;
  /** An operator or admin principal token (`btk.…`). */
  readonly token: string;
  readonly fetch?: Fetch;
  /** Every call's deadline unless the call gives its own (default 30 000 ms): then `client_timeout`. */
  readonly timeoutMs?: number;
}

const CREATED = ['occurrence', 'created'];
const TICKET = ['occurrence', 'request', 'requestDigest', 'nativeKey', 'nativeKeyHeader', 'profile'];
const OBSERVED = ['occurrence', 'effective', 'interpretation', 'missingKnowledge', 'changed'];
const OPEN = ['reserved', 'unresolved'];
const CREATED_ENTERED = [...CREATED, 'ticket'];
const SETTLED = ['occurrence', 'report', 'missingKnowledge'];

const seg = encodeURIComponent;
const json = (value: object): JsonObject => value as JsonObject;

type Call = <T>(
  x: Omit<Exchange, 'bearer'>,
  members: readonly string[],
  options?: CallOptions,
  fault?: AnswerFault,
) => Promise<T>;

class HttpExecutor implements Executor {
  readonly lineage: string;
  readonly generation: number;
  readonly handover: OpenWork;
  readonly held: readonly HeldWorkItem[];
  readonly heldMore: boolean;
  readonly harness: ExecutorHarness;
  readonly #call: Call;
  readonly #credential: string;

  constructor(
    call: (bearer: string) => Call,
    e: Endpoint,
    b: ExecutorBinding,
    handover: OpenWork,
    held: Held = NOTHING_HELD,
  ) {
    this.harness = new HarnessClient({ baseUrl: e.base.href, credential: b.credential }, e);
    this.lineage = b.lineage;
    this.generation = b.generation;
    this.handover = handover;
    this.held = held.held;
    this.heldMore = held.heldMore;
    this.#credential = b.credential;
    this.#call = call(b.credential);
  }

  binding(): ExecutorBinding {
    return { lineage: this.lineage, generation: this.generation, credential: this.#credential };
  }

  /** Safe to retry: the creation binding returns the original occurrence (AOC-REQ-002). */
  create(operation: Operation, options?: CallOptions): Promise<CreateResult> {
    return this.#call(
      { method: 'POST', path: '/v1/occurrences', body: json(operation), safeToRetry: true },
      CREATED,
      options,
    );
  }

  /** A read (`GET /v1/occurrences?creationKey=`, the executor's own lineage only): safe to retry. */
  async findByCreationKey(creationKey: string, options?: CallOptions): Promise<OccurrenceView | null> {
    const path = `/v1/occurrences?creationKey=${seg(creationKey)}&limit=1`;
    const x = { method: 'GET', path, safeToRetry: true } as const;
    const page = await this.#call<{ occurrences: OccurrenceView[] }>(x, ['occurrences'], options);
    return page.occurrences[0] ?? null;
  }

  /** NOT safe to retry: a lost answer may be a lost ticket; query the occurrence instead. */
  enter(occurrenceId: string, expect?: ExpectedBinding, options?: CallOptions): Promise<EntryTicket> {
    const body: JsonObject = expect === undefined ? {} : { expect: json(expect) };
    const path = `/v1/occurrences/${seg(occurrenceId)}/enter`;
    return this.#call({ method: 'POST', path, body, safeToRetry: false }, TICKET, options, ticketFault);
  }

  /** NOT safe to retry blindly: a lost answer may be a lost ticket (a repeat answers `ticket: null`). */
  createAndEnter(
    operation: Operation,
    expect?: ExpectedBinding,
    options?: CallOptions,
  ): Promise<CreateAndEnterResult> {
    const body = json(expect === undefined ? operation : { ...operation, expect });
    const x = { method: 'POST', path: '/v1/occurrences/create-and-enter', body, safeToRetry: false } as const;
    // The ticket is checked inside, not only named: perform hands it to the provider (AOC-REQ-010).
    return this.#call(x, CREATED_ENTERED, options, createAndEnterFault);
  }

  /** Safe in effect (a repeat is refused `not_reserved`), though the repeat's answer differs. */
  async release(occurrenceId: string, requestDigest: string, options?: CallOptions): Promise<OccurrenceView> {
    const path = `/v1/occurrences/${seg(occurrenceId)}/release`;
    const x = { method: 'POST', path, body: { requestDigest }, safeToRetry: false } as const;
    return (await this.#call<{ occurrence: OccurrenceView }>(x, ['occurrence'], options)).occurrence;
  }

  reissue({ occurrenceId, ...body }: ReissueOperation, options?: CallOptions): Promise<CreateResult> {
    const path = `/v1/occurrences/${seg(occurrenceId)}/reissue`;
    return this.#call({ method: 'POST', path, body: json(body), safeToRetry: true }, CREATED, options);
  }

  remedy({ remedyOf, ...body }: RemedyOperation, options?: CallOptions): Promise<CreateResult> {
    const path = `/v1/occurrences/${seg(remedyOf)}/remedies`;
    return this.#call({ method: 'POST', path, body: json(body), safeToRetry: true }, CREATED, options);
  }

  /**
   * The same report again is answered without being appended (`notRecorded: "repeat"`); past the
   * per-occurrence cap a distinct one is not appended either (`"capped"`). Not retried on its own.
   */
  acknowledge(acknowledgement: ExecutorAcknowledgement, options?: CallOptions): Promise<ObserveResult> {
    const { occurrenceId, ...body } = evidenceOnly(acknowledgement);
    const path = `/v1/occurrences/${seg(occurrenceId)}/acknowledgements`;
    return this.#call({ method: 'POST', path, body: json(body), safeToRetry: false }, OBSERVED, options);
  }

  /** Its acknowledgement is bounded as `acknowledge`'s is; never an entry. Not retried on its own. */
  acknowledgeAndSettle(
    acknowledgement: ExecutorAcknowledgement,
    options?: CallOptions,
  ): Promise<AcknowledgedSettled> {
    const { occurrenceId, ...body } = evidenceOnly(acknowledgement);
    const path = `/v1/occurrences/${seg(occurrenceId)}/acknowledge-and-settle`;
    const x = { method: 'POST', path, body: json(body), safeToRetry: false } as const;
    return this.#call(x, [...SETTLED, 'acknowledgement'], options, settledFault);
  }

  /** Evidence only, never an entry: safe to retry (a repeat asks the status sources again). */
  reconcile(occurrenceId: string, options?: CallOptions): Promise<OccurrenceReconciled> {
    const path = `/v1/occurrences/${seg(occurrenceId)}/reconcile`;
    return this.#call({ method: 'POST', path, body: {}, safeToRetry: true }, SETTLED, options);
  }

  perform(
    operation: Operation,
    adapter: ProviderAdapter | ProviderCall,
    options?: CallOptions,
  ): Promise<PerformResult> {
    return perform(this, operation, adapter, options);
  }
}

export class HttpBatonClient implements BatonClient {
  readonly #endpoint: Endpoint;
  readonly #token: string;

  /**
   * Refuses (`input_invalid`) a base URL that is not absolute http(s), or carries user info, a query
   * or a fragment, and a token that is not visible ASCII (a trailing newline from a file, say).
   */
  constructor(options: HttpBatonClientOptions) {
    this.#endpoint = endpoint(options.baseUrl, { fetch: options.fetch, timeoutMs: options.timeoutMs });
    this.#token = checkBearer(options.token, 'token');
  }

  #caller(bearer: string): Call {
    return async <T>(
      x: Omit<Exchange, 'bearer'>,
      members: readonly string[],
      options?: CallOptions,
      fault?: AnswerFault,
    ) => {
      const full = { ...x, bearer };
      return expectMembers<T>(full, await exchange(this.#endpoint, full, options), members, fault);
    };
  }

  #get<T>(path: string, members: readonly string[], options?: CallOptions): Promise<T> {
    return this.#caller(this.#token)<T>({ method: 'GET', path, safeToRetry: true }, members, options);
  }

  /**
   * NOT safe to retry: each takeover retires the generation the previous one issued. With
   * `expectedGeneration`, a repeat after a lost answer is refused `generation_mismatch` if the
   * first one applied.
   */
  async takeover(lineage: string, options?: TakeoverOptions): Promise<Executor> {
    const { expectedGeneration, ...call } = options ?? {};
    const path = `/v1/lineages/${seg(lineage)}/takeover`;
    // No body without the option: the unconditional takeover, exactly as before it existed.
    const body = expectedGeneration === undefined ? undefined : { expectedGeneration };
    const x = { method: 'POST', path, ...(body !== undefined && { body }), safeToRetry: false } as const;
    const members = ['lineage', 'generation', 'credential', 'held', 'heldMore', ...OPEN];
    const t = await this.#caller(this.#token)<TakeoverResult>(x, members, call);
    const open = { reserved: t.reserved, unresolved: t.unresolved };
    return new HttpExecutor((b) => this.#caller(b), this.#endpoint, t, open, t);
  }

  /** Refuses (`input_invalid`) a credential that is not visible ASCII, as the constructor does a token. */
  resume(binding: ExecutorBinding): Executor {
    checkBearer(binding.credential, 'credential');
    return new HttpExecutor((b) => this.#caller(b), this.#endpoint, binding, {
      reserved: [],
      unresolved: [],
    });
  }

  getOccurrence(occurrenceId: string, options?: CallOptions): Promise<OccurrenceDetail> {
    return this.#get(`/v1/occurrences/${seg(occurrenceId)}`, ['occurrence', 'evidence'], options);
  }

  listOpen(lineage: string, options?: CallOptions): Promise<OpenWork> {
    return this.#get(`/v1/lineages/${seg(lineage)}/open`, OPEN, options);
  }

  async listUnresolved(lineage: string, options?: CallOptions): Promise<readonly OccurrenceView[]> {
    return (await this.listOpen(lineage, options)).unresolved;
  }

  counts(options?: CallOptions): Promise<OccurrenceCounts> {
    return this.#get('/v1/counts', ['total', 'byPhase', 'byOutcome', 'unresolved', 'conflicts'], options);
  }
}
