/**
 * Reading a whole record-with-chain from a route that answers it a page at a time
 * (`GET /v1/harness/sessions/{id}`, `GET /v1/harness/items/{id}`, `GET /v1/lineages/{lineage}`):
 * each page carries `evidenceNextCursor`, null only on the last page. One rule for every such
 * read: a page that does not move on (empty but not last, or a cursor seen before) is
 * `baton_response_invalid`, so a chain is never taken as whole on a server's say-so that
 * contradicts itself; and the call's deadline bounds the whole read, not each page.
 */
import type { JsonObject } from '../core/json.js';
import { checkTimeout, invalid, NOT_SENT, type Exchange } from './http-transport.js';
import type { CallOptions } from './types.js';

/** Events per page when the SDK reads a whole chain (the routes allow 1..500). */
export const CHAIN_PAGE = 200;

/** One page as read: its body and the exchange that read it (named in a refusal). */
export interface ChainPage {
  readonly body: JsonObject;
  readonly x: Exchange;
}

export const isObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Read pages until `evidenceNextCursor` is null. `read` answers the route for a query string
 * (`?limit=…&cursor=…`) within the time left; `keep` checks a page's shape (throwing
 * `invalid` when wrong), keeps what it holds and says how many entries that was.
 */
export async function readEveryPage(
  read: (query: string, options: CallOptions) => Promise<ChainPage>,
  keep: (page: ChainPage) => number,
  options: CallOptions,
  defaultTimeoutMs: number,
): Promise<void> {
  const budget =
    options.timeoutMs === undefined ? defaultTimeoutMs : checkTimeout(options.timeoutMs, NOT_SENT);
  const deadline = Date.now() + budget;
  const seen = new Set<string>();
  let cursor: string | null = null;
  for (;;) {
    const query: string = `?limit=${CHAIN_PAGE}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const page = await read(query, { ...options, timeoutMs: Math.max(1, deadline - Date.now()) });
    const next = page.body['evidenceNextCursor'];
    if (next !== null && typeof next !== 'string')
      throw invalid(page.x, 200, 'a chain page of the wrong shape');
    const held = keep(page);
    if (next !== null && (held === 0 || seen.has(next)))
      throw invalid(page.x, 200, 'a chain page that does not move on');
    if (next === null) return;
    seen.add(next);
    cursor = next;
  }
}
