/**
 * The operator's read side of occurrences over HTTP (docs/api.md "Listing occurrences"): a page of
 * occurrences under filters, and one occurrence's timeline with its handovers and the chain
 * checks. Kept beside HttpBatonClient, on the same transport, because it is an operator's tool
 * (`baton occurrences`), not part of the worker-facing BatonClient interface.
 */
import type { JsonObject } from '../core/json.js';
import type { LineageView, OccurrenceDetail, OccurrencePage, Outcome, Phase } from '../occurrences/index.js';
import { readEveryPage, type ChainPage } from './chain-pages.js';
import type { CallOptions } from './types.js';
import {
  checkBearer,
  endpoint,
  exchange,
  expectMembers,
  invalid,
  type Endpoint,
  type Exchange,
  type Fetch,
} from './http-transport.js';

export interface OccurrenceListFilter {
  readonly phase?: Phase;
  readonly outcome?: Outcome;
  readonly lineage?: string;
  /** A profile id. */
  readonly profile?: string;
  readonly creationKey?: string;
  /** RFC 3339: created at or after. */
  readonly from?: string;
  /** RFC 3339: created before. */
  readonly to?: string;
  /** The `nextCursor` of the previous page. */
  readonly cursor?: string;
  /** 1..500 (default 50). */
  readonly limit?: number;
}

/** How the server judged one chain of an occurrence's detail. */
export interface ChainCheck {
  readonly ok: boolean;
  /**
   * What was checked: `chain`, every event of the chain (the walk `baton log verify` runs);
   * `handovers`, the lineage's handover events shown, each with its links to its neighbours, and
   * the chain's end against its recorded head — not the lineage's other events.
   */
  readonly scope: 'chain' | 'handovers';
  readonly problems: number;
  /** seq of every event the walk verified. */
  readonly verified: readonly number[];
  readonly firstBroken?: { readonly seq: number; readonly subject: string | null; readonly reason: string };
}

export interface OccurrenceTimeline extends OccurrenceDetail {
  readonly chains: { readonly occurrence: ChainCheck; readonly lineage: ChainCheck };
}

export interface OccurrencesQueryOptions {
  readonly baseUrl: string;
  /** An operator or admin token (or an executor credential: then only its own lineage). */
  readonly token: string;
  readonly fetch?: Fetch;
  /** Every call's deadline (default 30 000 ms): then `client_timeout`. */
  readonly timeoutMs?: number;
}

const FILTERS = [
  'phase',
  'outcome',
  'lineage',
  'profile',
  'creationKey',
  'from',
  'to',
  'cursor',
  'limit',
] as const;

/** A lineage with its whole history: every generation and every event of `lineage:<id>`. */
export type LineageHistory = Omit<LineageView, 'nextAfter'>;

const LINEAGE_MEMBERS = [
  'id',
  'generation',
  'retiredGenerations',
  'credentials',
  'evidence',
  'evidenceNextCursor',
] as const;

/** One page of `GET /v1/lineages/{lineage}`, its shape checked: else `baton_response_invalid`. */
function lineagePage(body: JsonObject, x: Exchange): LineageHistory {
  const { id, generation, retiredGenerations, credentials, evidence } = body;
  const lists = [retiredGenerations, credentials, evidence].every(Array.isArray);
  if (typeof id !== 'string' || !Number.isSafeInteger(generation) || !lists)
    throw invalid(x, 200, 'a lineage page of the wrong shape');
  return body as unknown as LineageHistory;
}

export class OccurrencesQuery {
  readonly #endpoint: Endpoint;
  readonly #token: string;

  constructor(options: OccurrencesQueryOptions) {
    this.#endpoint = endpoint(options.baseUrl, { fetch: options.fetch, timeoutMs: options.timeoutMs });
    this.#token = checkBearer(options.token, 'token');
  }

  async #get<T>(path: string, members: readonly string[]): Promise<T> {
    const x = { method: 'GET', path, bearer: this.#token, safeToRetry: true } as const;
    return expectMembers<T>(x, await exchange(this.#endpoint, x), members);
  }

  /** Newest first; follow `nextCursor` until it is null for the rest. */
  list(filter: OccurrenceListFilter = {}): Promise<OccurrencePage> {
    const q = new URLSearchParams();
    for (const k of FILTERS) {
      const v = filter[k];
      if (v !== undefined) q.set(k, String(v));
    }
    const query = q.size === 0 ? '' : `?${q.toString()}`;
    return this.#get(`/v1/occurrences${query}`, ['occurrences', 'nextCursor']);
  }

  show(occurrenceId: string): Promise<OccurrenceTimeline> {
    const path = `/v1/occurrences/${encodeURIComponent(occurrenceId)}`;
    return this.#get(path, ['occurrence', 'evidence', 'handovers', 'chains']);
  }

  /**
   * The lineage and its whole history, oldest first: `GET /v1/lineages/{lineage}` answers it a
   * page at a time, so every page is read (src/client/chain-pages.ts: a page that does not move
   * on is `baton_response_invalid`; the deadline bounds the whole read). `generation` is the last
   * page's, read with it, so the history holds every generation up to it.
   */
  async lineage(lineage: string): Promise<LineageHistory> {
    const path = `/v1/lineages/${encodeURIComponent(lineage)}`;
    const read = async (query: string, options: CallOptions): Promise<ChainPage> => {
      const x: Exchange = { method: 'GET', path: path + query, bearer: this.#token, safeToRetry: true };
      return { body: expectMembers(x, await exchange(this.#endpoint, x, options), LINEAGE_MEMBERS), x };
    };
    const credentials: LineageHistory['credentials'][number][] = [];
    const evidence: LineageHistory['evidence'][number][] = [];
    let last: LineageHistory | undefined;
    await readEveryPage(
      read,
      ({ body, x }) => {
        const page = lineagePage(body, x);
        credentials.push(...page.credentials);
        evidence.push(...page.evidence);
        last = page;
        return page.credentials.length + page.evidence.length;
      },
      {},
      this.#endpoint.timeoutMs,
    );
    // Each page names every retired generation; the last page's go with its `generation`.
    const { id, generation, retiredGenerations } = last ?? {
      id: lineage,
      generation: 0,
      retiredGenerations: [],
    };
    return { id, generation, retiredGenerations, credentials, evidence };
  }
}
