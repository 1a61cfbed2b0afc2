/**
 * The paged listing (docs/sandbox.md). Pages are walked from the first with the provider's cursor;
 * the result is complete only when every page was read to `has_more: false` (the profile's
 * `paged_to_end`). A walk cut short — page limit, a page that is unsigned, unreadable or refused —
 * is incomplete, and absence from an incomplete listing is missing knowledge (AOC-CASE-008).
 */
import type { JsonObject } from '../../core/json.js';
import type { OccurrenceView, StatusSource } from '../../occurrences/index.js';
import { MAX_ALSO_MATCHED } from '../../occurrences/index.js';
import { exchange, failureDetail, retryAfterOf, type ExchangeResult } from '../http-client.js';
import { expandUrl } from '../url-template.js';
import {
  asObject,
  authenticate,
  observedAt,
  parseAnswer,
  readPayment,
  type Authentication,
  type PaymentFacts,
} from '../wire.js';
import type { SourceContext } from './context.js';
import { bindingValues } from './lookup.js';
import { answered, unavailable, type ReadingBase, type SourceReading } from './reading.js';

interface Page {
  readonly json: JsonObject;
  readonly auth: Authentication;
  readonly items: readonly JsonObject[];
  readonly hasMore: boolean;
}

/** A page that could not be read, with the provider's `Retry-After` if it sent one. */
interface Unread {
  readonly detail: string;
  readonly retryAfter: string | undefined;
}

const unread = (detail: string, res: ExchangeResult): Unread => ({ detail, retryAfter: retryAfterOf(res) });

async function fetchPage(
  ctx: SourceContext,
  o: OccurrenceView,
  source: StatusSource,
  cursor: string | undefined,
): Promise<Page | Unread> {
  const url = expandUrl(source.url, bindingValues(o));
  url.searchParams.set('limit', String(ctx.pageSize));
  if (cursor !== undefined) url.searchParams.set('starting_after', cursor);
  const res = await exchange({ method: 'GET', url, timeoutMs: ctx.timeoutMs, pooled: true });
  if (!res.ok) return unread(failureDetail(res), res);
  const json = asObject(parseAnswer(res.body));
  const data = json?.['data'];
  if (res.status !== 200 || json === undefined || !Array.isArray(data))
    return unread(`http ${res.status}`, res);
  const message = { method: 'GET', path: res.path, body: res.body, headers: res.headers };
  const auth = authenticate(message, source.authentication, ctx.keys, ctx.clock.wallMs());
  const items = data.map(asObject).filter((x): x is JsonObject => x !== undefined);
  return { json, auth, items, hasMore: json['has_more'] === true };
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * The page's own envelope names the account (and, when it says, the environment) it lists. A page
 * about another account settles nothing about this binding, whatever its items say — as a by-key
 * answer naming another account already does (fail closed): the account must be stated and equal.
 */
function envelopeMismatch(o: OccurrenceView, page: Page): boolean {
  const env = text(page.json['environment']);
  return (
    text(page.json['account']) !== o.provider.account || (env !== undefined && env !== o.provider.environment)
  );
}

function matches(o: OccurrenceView, item: JsonObject): boolean {
  const key = o.provider.nativeKey;
  const ref = o.provider.providerReference;
  return (key !== null && item['idempotency_key'] === key) || (ref !== null && item['reference'] === ref);
}

interface Hit {
  readonly facts: PaymentFacts;
  readonly page: Page;
  readonly n: number;
}

/**
 * AOC-CASE-009: the walk does not stop at the first page holding a payment about the occurrence; it
 * reads on to the end (within `maxPages`) and hands the service EVERY such payment, so page
 * boundaries never pick the reading. A walk its page bound cuts after a match is judged on the
 * pages read (`complete: false`, the detail says so: a listing longer than the bound would
 * otherwise never settle); one cut after a match by a page it cannot trust (not authentic, about
 * another account, no cursor) is unavailable. An item carrying the occurrence's key or reference
 * that is not a readable payment is about this attempt and cannot be judged: unavailable, never
 * passed over.
 */
export async function listing(
  ctx: SourceContext,
  o: OccurrenceView,
  source: StatusSource,
): Promise<SourceReading> {
  const base: ReadingBase = { occurrenceId: o.id, source: source.id, kind: source.kind };
  let cursor: string | undefined;
  let first: Page | undefined;
  const hits: Hit[] = [];
  for (let n = 1; n <= ctx.maxPages; n += 1) {
    const page = await fetchPage(ctx, o, source, cursor);
    const now = ctx.clock.wallMs();
    // The background reconciler asks no sooner than the provider said (docs/providers.md).
    if (!('json' in page)) {
      const reading = unavailable(base, now, `page ${n}: ${page.detail}`);
      return page.retryAfter === undefined ? reading : { ...reading, retryAfter: page.retryAfter };
    }
    // A page holds what was asked for: more is not a page of this listing (docs/sandbox.md).
    if (page.items.length > ctx.pageSize)
      return unavailable(
        base,
        now,
        `page ${n}: ${page.items.length} items, more than the ${ctx.pageSize} asked for`,
      );
    first ??= page;
    // Every page must be authentic: the walk stops at the first page that is not.
    const auth = page.auth;
    if (envelopeMismatch(o, page)) {
      const detail = `page ${n}: the listing is about another account or environment`;
      if (hits.length > 0) return unavailable(base, now, `${detail}, after a match`);
      return absent(base, now, { o, first: page, auth, complete: false, detail });
    }
    for (const item of page.items) {
      if (!matches(o, item)) continue;
      const facts = readPayment(item);
      if (facts === undefined)
        return unavailable(base, now, `page ${n}: an item about the occurrence is not a payment`, page.json);
      hits.push({ facts, page, n });
    }
    // Every matching item travels with the observation, which bounds how many it may carry.
    if (hits.length > MAX_ALSO_MATCHED + 1)
      return unavailable(base, now, `page ${n}: more than ${MAX_ALSO_MATCHED + 1} items match`);
    const last = page.items.at(-1)?.['reference'];
    if (!page.hasMore || typeof last !== 'string' || !auth.verified) {
      const complete = !page.hasMore && auth.verified;
      const detail = complete ? `read ${n} pages to the end` : `page ${n}: incomplete`;
      // A match on a page that is not authentic is found, and judged unauthenticated by the service.
      const untrusted = hits.some((h) => !h.page.auth.verified);
      if (hits.length > 0 && !complete && !untrusted)
        return unavailable(base, now, `${detail}, after a match`);
      if (hits.length > 0 && !complete) return found(base, now, hits, false, detail);
      if (hits.length > 0) return found(base, now, hits, true, detail);
      return absent(base, now, { o, first, auth, complete, detail });
    }
    cursor = last;
  }
  const now = ctx.clock.wallMs();
  if (first === undefined) return unavailable(base, now, 'no page was read');
  const detail = `stopped after ${ctx.maxPages} pages`;
  if (hits.length > 0) return found(base, now, hits, false, `${detail}; judged on the pages read`);
  return absent(base, now, { o, first, auth: first.auth, complete: false, detail });
}

/** Every payment about the occurrence the walk met, the first standing for the reading. */
function found(base: ReadingBase, now: number, hits: readonly Hit[], complete: boolean, walk: string) {
  const [hit, ...others] = hits as [Hit, ...Hit[]];
  // The reading is authentic only if every page it took a payment from was.
  const auth = hits.find((h) => !h.page.auth.verified)?.page.auth ?? hit.page.auth;
  const pages = [...new Set(hits.map((h) => h.n))].join(', ');
  const matched = hits.length === 1 ? `page ${pages}` : `${hits.length} items match on page ${pages}`;
  return answered(base, now, {
    result: 'found',
    ...hit.facts,
    observedAt: observedAt(hit.page.json),
    response: hit.page.json,
    complete,
    auth,
    detail: `${matched}; ${walk}`,
    alsoMatched: others.map((x) => ({ nativeStatus: x.facts.nativeStatus, carried: x.facts.carried })),
  });
}

interface Absence {
  readonly o: OccurrenceView;
  readonly first: Page;
  readonly auth: Authentication;
  readonly complete: boolean;
  readonly detail: string;
}

function absent(
  base: ReadingBase,
  now: number,
  { o, first, auth, complete, detail }: Absence,
): SourceReading {
  // The key searched for is the layer's own statement: "this listing holds no payment for it".
  return answered(base, now, {
    result: 'not_found',
    carried: {
      account: text(first.json['account']),
      environment: text(first.json['environment']),
      nativeKey: o.provider.nativeKey ?? undefined,
      providerReference: o.provider.providerReference ?? undefined,
    },
    observedAt: observedAt(first.json),
    response: first.json,
    complete,
    auth,
    detail,
  });
}
