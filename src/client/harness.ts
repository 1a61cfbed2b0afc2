/**
 * The harness SDK over HTTP (build spec A6; docs/harness.md): an executor's sessions and governed
 * work. Every dispatch/resume/retry goes through Baton's check (A3.1); a committed Mission stop
 * comes back as the BatonError the server answered (403 `mission_not_active`, 503
 * `mission_status_unavailable`, 409 `mission_binding_missing`). Pass the item id as `workItemId`
 * in the occurrence operation so provider entry is gated too (A3.6).
 */
import type { JsonObject } from '../core/json.js';
import type { CallOptions } from './types.js';
import type { MissionBinding, SessionRecord, WorkItemRecord } from '../missions/index.js';
import { isObject, readEveryPage, type ChainPage } from './chain-pages.js';
import {
  checkBearer,
  endpoint,
  exchange,
  expectMembers,
  invalid,
  type Endpoint,
  type Exchange,
  type AnswerFault,
  type Fetch,
} from './http-transport.js';
import {
  completedFault,
  dispatchFault,
  retryFault,
  sessionFault,
  taintedFault,
  workItemFault,
} from './harness-answers.js';

export interface HarnessClientOptions {
  readonly baseUrl: string;
  /** The executor credential from takeover (items belong to its lineage). */
  readonly credential: string;
  readonly fetch?: Fetch;
  /** Every call's deadline in ms (default 30 000), as `HttpBatonClient`'s; a call's own overrides it. */
  readonly timeoutMs?: number;
}

export interface EnqueueInput {
  readonly kind?: WorkItemRecord['kind'];
  readonly action_class: WorkItemRecord['actionClass'];
  readonly mission_binding?: Pick<
    MissionBinding,
    'mission_id' | 'mission_origin' | 'stop_policy' | 'authority_hash' | 'enforcement_scope'
  >;
  readonly session_id?: string;
  readonly parent_item?: string;
  readonly not_before?: string;
  readonly expires_at?: string;
  readonly idempotency_key?: string;
  readonly queue_item_id?: string;
}

const seg = encodeURIComponent;

/** A dispatch or resume that passed the A3.1 check: the item, and when to check again. */
export interface HarnessDispatch {
  readonly item: WorkItemRecord;
  readonly recheckAt: number | null;
}

/**
 * `executor.harness` (issue 11 §5; build spec A6): the executor's governed sessions and work, each
 * call under that executor's credential, so in its lineage and fenced by its generation. Every
 * dispatch, resume and retry goes through Baton's check (A3.1): a committed Mission stop comes back
 * as the BatonError the harness answered (403 `mission_not_active`, 503
 * `mission_status_unavailable`, 409 `mission_binding_missing`). Pass the item id as `workItemId` in
 * the occurrence operation so provider entry is gated too (A3.6).
 */
export interface ExecutorHarness {
  /** A governed session bound to a Mission (HAR-01/02). */
  session(
    binding: EnqueueInput['mission_binding'],
    sessionId?: string,
    options?: CallOptions,
  ): Promise<SessionRecord>;
  /** HAR-29: untrusted content entered the session; its egress items are suppressed from now on. */
  taint(sessionId: string, source: string, options?: CallOptions): Promise<SessionRecord>;
  /** The session and its whole chain (over HTTP, every page; `options` bound the whole read). */
  getSession(
    sessionId: string,
    options?: CallOptions,
  ): Promise<{ session: SessionRecord; evidence: JsonObject[] }>;
  /** Governed work (a queue item unless `kind` says otherwise), bound to its Mission. */
  enqueue(input: EnqueueInput, options?: CallOptions): Promise<WorkItemRecord>;
  /** HAR-20: a sub-agent handle records its actor and how it is governed; no authority by descent. */
  spawn(
    parentItem: string,
    handle: JsonObject,
    input: Omit<EnqueueInput, 'kind' | 'parent_item'>,
    options?: CallOptions,
  ): Promise<WorkItemRecord>;
  dispatch(itemId: string, options?: CallOptions): Promise<HarnessDispatch>;
  resume(itemId: string, options?: CallOptions): Promise<HarnessDispatch>;
  /** A3.8: a new item with `retry_of` and the same idempotency key (= the occurrence creationKey). */
  retry(itemId: string, options?: CallOptions): Promise<WorkItemRecord>;
  complete(itemId: string, options?: CallOptions): Promise<WorkItemRecord>;
  /** The item and its whole chain (over HTTP, every page; `options` bound the whole read). */
  get(itemId: string, options?: CallOptions): Promise<{ item: WorkItemRecord; evidence: JsonObject[] }>;
}

export class HarnessClient implements ExecutorHarness {
  readonly #o: HarnessClientOptions;
  readonly #endpoint: Endpoint;

  /** `over`: an endpoint already made (the HttpBatonClient's, for `executor.harness`). */
  constructor(o: HarnessClientOptions, over?: Endpoint) {
    // Made by a worker, the credential is checked here (`input_invalid`); made by the executor, its
    // binding's is checked at each call, so a takeover that applied is never reported refused.
    if (over === undefined) checkBearer(o.credential, 'credential');
    this.#o = o;
    this.#endpoint = over ?? endpoint(o.baseUrl, { fetch: o.fetch, timeoutMs: o.timeoutMs });
  }

  /**
   * `fault`: what the call promises beyond member names (src/client/harness-answers.ts), so a
   * malformed or contradictory answer is refused as `baton_response_invalid`, never a success.
   */
  async #call<T>(
    x: Omit<Exchange, 'bearer'>,
    members: readonly string[],
    fault: AnswerFault,
    options?: CallOptions,
  ): Promise<T> {
    const full = { ...x, bearer: this.#o.credential };
    return expectMembers<T>(full, await exchange(this.#endpoint, full, options), members, fault);
  }

  session(
    binding: EnqueueInput['mission_binding'],
    sessionId?: string,
    options?: CallOptions,
  ): Promise<SessionRecord> {
    const body = {
      mission_binding: binding,
      ...(sessionId !== undefined && { session_id: sessionId }),
    } as JsonObject;
    return this.#call(
      { method: 'POST', path: '/v1/harness/sessions', body, safeToRetry: false },
      ['id'],
      (b) => sessionFault(b, 'session', sessionId),
      options,
    );
  }

  /**
   * HAR-29: untrusted content (`source`, e.g. `tool_result`) entered the session; its egress items
   * are suppressed from now on. Safe to retry: the taint is sticky, so a repeat leaves the session
   * tainted and its items suppressed as before, but each call appends another `session_tainted`
   * event (its `source`) to the session's chain (docs/harness.md). An answer that is not this
   * session tainted is refused (`baton_response_invalid`).
   */
  taint(sessionId: string, source: string, options?: CallOptions): Promise<SessionRecord> {
    return this.#call(
      {
        method: 'POST',
        path: `/v1/harness/sessions/${seg(sessionId)}/taint`,
        body: { source },
        safeToRetry: true,
      },
      ['id', 'tainted'],
      (b) => taintedFault(b, sessionId),
      options,
    );
  }

  /** The session and its whole chain, read a page at a time (`#chain`). */
  async getSession(
    sessionId: string,
    options?: CallOptions,
  ): Promise<{ session: SessionRecord; evidence: JsonObject[] }> {
    const path = `/v1/harness/sessions/${seg(sessionId)}`;
    const { head, evidence } = await this.#chain(
      path,
      'session',
      (v) => sessionFault(v, 'session', sessionId),
      options,
    );
    return { session: head as unknown as SessionRecord, evidence };
  }

  /** Not safe to retry without `queue_item_id` (a repeat with one answers `work_item_conflict`). */
  enqueue(input: EnqueueInput, options?: CallOptions): Promise<WorkItemRecord> {
    const body = { kind: 'queue_item', ...input } as JsonObject;
    const kind = input.kind ?? 'queue_item';
    return this.#call(
      { method: 'POST', path: '/v1/harness/items', body, safeToRetry: input.queue_item_id !== undefined },
      ['id', 'state'],
      (b) =>
        workItemFault(b, 'item', input.queue_item_id) ??
        (b['kind'] === kind ? undefined : 'an item of another kind'),
      options,
    );
  }

  /** HAR-20: a sub-agent handle records its actor and how it is governed; no authority by descent. */
  spawn(
    parentItem: string,
    handle: JsonObject,
    input: Omit<EnqueueInput, 'kind' | 'parent_item'>,
    options?: CallOptions,
  ): Promise<WorkItemRecord> {
    const body = { ...input, kind: 'subagent_handle', parent_item: parentItem, handle } as JsonObject;
    const x = { method: 'POST', path: '/v1/harness/items', body, safeToRetry: false } as const;
    const fault: AnswerFault = (b) =>
      workItemFault(b, 'item') ??
      (b['kind'] !== 'subagent_handle' || b['parentId'] !== parentItem
        ? 'an item that is not a sub-agent handle under the parent named'
        : undefined);
    return this.#call(x, ['id', 'state'], fault, options);
  }

  dispatch(itemId: string, options?: CallOptions): Promise<HarnessDispatch> {
    return this.#call(
      { method: 'POST', path: '/v1/harness/dispatch', body: { itemId }, safeToRetry: false },
      ['item', 'recheckAt'],
      (b) => dispatchFault(b, itemId),
      options,
    );
  }

  resume(itemId: string, options?: CallOptions): Promise<HarnessDispatch> {
    return this.#call(
      { method: 'POST', path: `/v1/harness/items/${seg(itemId)}/resume`, body: {}, safeToRetry: false },
      ['item', 'recheckAt'],
      (b) => dispatchFault(b, itemId),
      options,
    );
  }

  /** A3.8: a new item with `retry_of` and the same idempotency key (= the occurrence creationKey). */
  retry(itemId: string, options?: CallOptions): Promise<WorkItemRecord> {
    return this.#call(
      { method: 'POST', path: `/v1/harness/items/${seg(itemId)}/retry`, body: {}, safeToRetry: false },
      ['id', 'retryOf'],
      (b) => retryFault(b, itemId),
      options,
    );
  }

  complete(itemId: string, options?: CallOptions): Promise<WorkItemRecord> {
    return this.#call(
      { method: 'POST', path: `/v1/harness/items/${seg(itemId)}/complete`, body: {}, safeToRetry: false },
      ['id', 'state'],
      (b) => completedFault(b, itemId),
      options,
    );
  }

  /** The item and its whole chain, read a page at a time (`#chain`). */
  async get(
    itemId: string,
    options?: CallOptions,
  ): Promise<{ item: WorkItemRecord; evidence: JsonObject[] }> {
    const { head, evidence } = await this.#chain(
      `/v1/harness/items/${seg(itemId)}`,
      'item',
      (v) => workItemFault(v, 'item', itemId),
      options,
    );
    return { item: head as unknown as WorkItemRecord, evidence };
  }

  /**
   * A record and its whole evidence chain, oldest first, from a route that answers the chain a
   * page at a time (src/client/chain-pages.ts: a page that does not move on is refused, the
   * deadline bounds the whole read). The record is the last page's: read before that page, so
   * the chain holds every event it reflects.
   */
  async #chain(
    path: string,
    member: string,
    recordFault: (v: unknown) => string | undefined,
    options: CallOptions = {},
  ): Promise<{ head: JsonObject; evidence: JsonObject[] }> {
    const evidence: JsonObject[] = [];
    let head: JsonObject = {};
    const read = async (query: string, left: CallOptions): Promise<ChainPage> => {
      const x: Exchange = {
        method: 'GET',
        path: path + query,
        safeToRetry: true,
        bearer: this.#o.credential,
      };
      const members = [member, 'evidence', 'evidenceNextCursor'];
      return { body: expectMembers<JsonObject>(x, await exchange(this.#endpoint, x, left), members), x };
    };
    await readEveryPage(
      read,
      ({ body, x }) => {
        const events = body['evidence'];
        const record = body[member];
        if (!Array.isArray(events) || !isObject(record))
          throw invalid(x, 200, 'a chain page of the wrong shape');
        const why = recordFault(record);
        if (why !== undefined) throw invalid(x, 200, why);
        evidence.push(...(events as JsonObject[]));
        head = record;
        return events.length;
      },
      options,
      this.#endpoint.timeoutMs,
    );
    return { head, evidence };
  }
}
