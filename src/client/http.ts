/**
 * HttpBatonClient: the BatonClient over the HTTP API, route for route as docs/api.md lists them.
 * The client's `token` is an operator (or admin) principal token: takeover and the queries use it.
 * An executor's calls carry that executor's credential as its bearer, never in a body.
 */
import type { JsonObject } from '../core/json.js';
import type {
  CreateResult,
  EntryTicket,
  ExpectedBinding,
  ObserveResult,
  OccurrenceCounts,
  OccurrenceDetail,
  OccurrenceView,
  TakeoverResult,
} from '../occurrences/index.js';
import type { OccurrenceReconciled } from '../providers/index.js';
import { evidenceOnly, type ProviderAdapter, type ProviderCall } from './adapter.js';
import { exchange, expectMembers, type Exchange, type Fetch } from './http-transport.js';
import { perform } from './perform.js';
import type {
  BatonClient,
  Executor,
  ExecutorAcknowledgement,
  ExecutorBinding,
  OpenWork,
  Operation,
  PerformResult,
  ReissueOperation,
  RemedyOperation,
} from './types.js';

export interface HttpBatonClientOptions {
  /** E.g. `http://127.0.0.1:8080`; routes are resolved under it (`/v1/…`). */
  readonly baseUrl: string;
  /** An operator or admin principal token (`btk.…`). */
  readonly token: string;
  readonly fetch?: Fetch;
}

const CREATED = ['occurrence', 'created'];
const TICKET = ['occurrence', 'request', 'requestDigest', 'nativeKey', 'nativeKeyHeader', 'profile'];
const OBSERVED = ['occurrence', 'effective', 'interpretation', 'missingKnowledge', 'changed'];
const OPEN = ['reserved', 'unresolved'];

const seg = encodeURIComponent;
const json = (value: object): JsonObject => value as JsonObject;

type Call = <T>(x: Omit<Exchange, 'bearer'>, members: readonly string[]) => Promise<T>;

class HttpExecutor implements Executor {
  readonly lineage: string;
  readonly generation: number;
  readonly handover: OpenWork;
  readonly #call: Call;
  readonly #credential: string;

  constructor(call: (bearer: string) => Call, b: ExecutorBinding, handover: OpenWork) {
    this.lineage = b.lineage;
    this.generation = b.generation;
    this.handover = handover;
    this.#credential = b.credential;
    this.#call = call(b.credential);
  }

  binding(): ExecutorBinding {
    return { lineage: this.lineage, generation: this.generation, credential: this.#credential };
  }

  /** Safe to retry: the creation binding returns the original occurrence (AOC-REQ-002). */
  create(operation: Operation): Promise<CreateResult> {
    return this.#call(
      { method: 'POST', path: '/v1/occurrences', body: json(operation), safeToRetry: true },
      CREATED,
    );
  }

  /** NOT safe to retry: a lost answer may be a lost ticket; query the occurrence instead. */
  enter(occurrenceId: string, expect?: ExpectedBinding): Promise<EntryTicket> {
    const body: JsonObject = expect === undefined ? {} : { expect: json(expect) };
    const path = `/v1/occurrences/${seg(occurrenceId)}/enter`;
    return this.#call({ method: 'POST', path, body, safeToRetry: false }, TICKET);
  }

  /** Safe in effect (a repeat is refused `not_reserved`), though the repeat's answer differs. */
  async release(occurrenceId: string, requestDigest: string): Promise<OccurrenceView> {
    const path = `/v1/occurrences/${seg(occurrenceId)}/release`;
    const x = { method: 'POST', path, body: { requestDigest }, safeToRetry: false } as const;
    return (await this.#call<{ occurrence: OccurrenceView }>(x, ['occurrence'])).occurrence;
  }

  reissue({ occurrenceId, ...body }: ReissueOperation): Promise<CreateResult> {
    const path = `/v1/occurrences/${seg(occurrenceId)}/reissue`;
    return this.#call({ method: 'POST', path, body: json(body), safeToRetry: true }, CREATED);
  }

  remedy({ remedyOf, ...body }: RemedyOperation): Promise<CreateResult> {
    const path = `/v1/occurrences/${seg(remedyOf)}/remedies`;
    return this.#call({ method: 'POST', path, body: json(body), safeToRetry: true }, CREATED);
  }

  /** Not idempotent: a repeat appends a second piece of evidence. */
  acknowledge(acknowledgement: ExecutorAcknowledgement): Promise<ObserveResult> {
    const { occurrenceId, ...body } = evidenceOnly(acknowledgement);
    const path = `/v1/occurrences/${seg(occurrenceId)}/acknowledgements`;
    return this.#call({ method: 'POST', path, body: json(body), safeToRetry: false }, OBSERVED);
  }

  /** Evidence only, never an entry: safe to retry (a repeat asks the status sources again). */
  reconcile(occurrenceId: string): Promise<OccurrenceReconciled> {
    const path = `/v1/occurrences/${seg(occurrenceId)}/reconcile`;
    const members = ['occurrence', 'report', 'missingKnowledge'];
    return this.#call({ method: 'POST', path, body: {}, safeToRetry: true }, members);
  }

  perform(operation: Operation, adapter: ProviderAdapter | ProviderCall): Promise<PerformResult> {
    return perform(this, operation, adapter);
  }
}

export class HttpBatonClient implements BatonClient {
  readonly #baseUrl: string;
  readonly #token: string;
  readonly #fetch: Fetch;

  constructor(options: HttpBatonClientOptions) {
    this.#baseUrl = options.baseUrl;
    this.#token = options.token;
    this.#fetch = options.fetch ?? fetch;
  }

  #caller(bearer: string): Call {
    return async <T>(x: Omit<Exchange, 'bearer'>, members: readonly string[]): Promise<T> => {
      const full = { ...x, bearer };
      return expectMembers<T>(full, await exchange(this.#fetch, this.#baseUrl, full), members);
    };
  }

  #get<T>(path: string, members: readonly string[]): Promise<T> {
    return this.#caller(this.#token)<T>({ method: 'GET', path, safeToRetry: true }, members);
  }

  /** NOT safe to retry: each takeover retires the generation the previous one issued. */
  async takeover(lineage: string): Promise<Executor> {
    const x = { method: 'POST', path: `/v1/lineages/${seg(lineage)}/takeover`, safeToRetry: false } as const;
    const t = await this.#caller(this.#token)<TakeoverResult>(x, [
      'lineage',
      'generation',
      'credential',
      ...OPEN,
    ]);
    return new HttpExecutor((b) => this.#caller(b), t, { reserved: t.reserved, unresolved: t.unresolved });
  }

  resume(binding: ExecutorBinding): Executor {
    return new HttpExecutor((b) => this.#caller(b), binding, { reserved: [], unresolved: [] });
  }

  getOccurrence(occurrenceId: string): Promise<OccurrenceDetail> {
    return this.#get(`/v1/occurrences/${seg(occurrenceId)}`, ['occurrence', 'evidence']);
  }

  listOpen(lineage: string): Promise<OpenWork> {
    return this.#get(`/v1/lineages/${seg(lineage)}/open`, OPEN);
  }

  async listUnresolved(lineage: string): Promise<readonly OccurrenceView[]> {
    return (await this.listOpen(lineage)).unresolved;
  }

  counts(): Promise<OccurrenceCounts> {
    return this.#get('/v1/counts', ['total', 'byPhase', 'byOutcome', 'unresolved', 'conflicts']);
  }
}
