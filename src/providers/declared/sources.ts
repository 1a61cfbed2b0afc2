/**
 * Format 2 status sources (docs/providers.md): a lookup (by key or by reference) or a paged
 * listing, each described by its profile — method, URL template, the credential it sends, read
 * rules, the not-found answer, the listing's pointers. Baton asks, authenticates the answer by the
 * source's pin (a channel or a signature), reads it by the rule and hands the service an
 * observation; the service alone judges it (AOC-REQ-009).
 */
import { resolveJsonPointer } from '../../core/json-pointer.js';
import type { JsonObject, JsonValue } from '../../core/json.js';
import type { AnswerRead, OccurrenceView, ProviderProfile, StatusSource } from '../../occurrences/index.js';
import { MAX_ALSO_MATCHED } from '../../occurrences/index.js';
import { exchange, failureDetail, retryAfterOf, type ExchangeResult } from '../http-client.js';
import { bindingValues } from '../status-sources/lookup.js';
import type { SourceContext } from '../status-sources/context.js';
import { answered, unavailable, type ReadingBase, type SourceReading } from '../status-sources/reading.js';
import { expandUrl } from '../url-template.js';
import { asObject, parseAnswer, type Authentication } from '../wire.js';
import { authenticateFetched } from './channel.js';
import { applyRead, type ReadFacts } from './read.js';

type Got = (
  | {
      readonly ok: true;
      readonly res: Extract<ExchangeResult, { ok: true }>;
      readonly json: JsonObject;
      readonly auth: Authentication;
    }
  | { readonly ok: false; readonly detail: string; readonly json?: JsonObject }
) & {
  /** The provider's `Retry-After` on this answer, as sent (a 429's, a 503's). */
  readonly retryAfter?: string;
};

/** The reading, with the `Retry-After` of the last answer it read (the background reconciler honours it). */
function withRetryAfter(reading: SourceReading, retryAfter: string | undefined): SourceReading {
  return retryAfter === undefined ? reading : { ...reading, retryAfter };
}

async function fetchOnce(ctx: SourceContext, source: StatusSource, url: URL): Promise<Got> {
  // A status read: on the origin's keep-alive pool, as the sandbox's lookups are (issue 16 §5).
  // `exchange` attaches the credential only for an origin it may go to; without it (not held,
  // or `credential_origin_refused`) the call is not made: missing knowledge, nothing sent.
  const res = await exchange({
    method: 'GET',
    url,
    headers: { accept: 'application/json' },
    credential: { use: source.credential, keys: ctx.keys },
    timeoutMs: ctx.timeoutMs,
    pooled: true,
  });
  const after = retryAfterOf(res);
  const retryAfter = after === undefined ? {} : { retryAfter: after };
  if (!res.ok && res.error === 'credential') return { ok: false, detail: res.name };
  if (!res.ok) return { ok: false, detail: failureDetail(res), ...retryAfter };
  const json = asObject(parseAnswer(res.body));
  if (json === undefined) return { ok: false, detail: `http ${res.status} unreadable`, ...retryAfter };
  const message = { method: 'GET', path: res.path, body: res.body, headers: res.headers };
  const fetched = { url, credential: source.credential?.id, message };
  const auth = authenticateFetched(source.authentication, fetched, ctx.keys, ctx.clock.wallMs());
  return { ok: true, res, json, auth, ...retryAfter };
}

function notFound(source: StatusSource, status: number, json: JsonObject): boolean {
  const rule = source.notFound;
  return (
    rule !== undefined && status === rule.httpStatus && resolveJsonPointer(json, rule.pointer) === rule.equals
  );
}

/** The binding fields of a "no such object" answer: what was asked for, about the pinned account. */
function askedFor(profile: ProviderProfile, read: AnswerRead, o: OccurrenceView, json: JsonObject) {
  const named =
    read.account.pointer === undefined ? undefined : resolveJsonPointer(json, read.account.pointer);
  const account =
    typeof named === 'string' ? named : read.account.whenAbsent === 'pinned' ? profile.account : undefined;
  return {
    ...(account !== undefined && { account }),
    ...(o.provider.nativeKey !== null && { nativeKey: o.provider.nativeKey }),
    ...(o.provider.providerReference !== null && { providerReference: o.provider.providerReference }),
  };
}

export async function declaredLookup(
  ctx: SourceContext,
  profile: ProviderProfile,
  o: OccurrenceView,
  source: StatusSource & { read: AnswerRead },
): Promise<SourceReading> {
  const got = await fetchOnce(ctx, source, expandUrl(source.url, bindingValues(o)));
  return withRetryAfter(judgeLookup(ctx, profile, o, source, got), got.retryAfter);
}

function judgeLookup(
  ctx: SourceContext,
  profile: ProviderProfile,
  o: OccurrenceView,
  source: StatusSource & { read: AnswerRead },
  got: Got,
): SourceReading {
  const base: ReadingBase = { occurrenceId: o.id, source: source.id, kind: source.kind };
  const now = ctx.clock.wallMs();
  if (!got.ok) return unavailable(base, now, got.detail);
  const { res, json, auth } = got;
  const detail = `http ${res.status}`;
  if (notFound(source, res.status, json)) {
    const carried = askedFor(profile, source.read, o, json);
    return answered(base, now, {
      result: 'not_found',
      carried,
      observedAt: undefined,
      response: json,
      complete: true,
      auth,
      detail: `${detail} not_found`,
    });
  }
  if (res.status !== 200) return unavailable(base, now, `${detail} unexpected answer`, json);
  const read = applyRead(source.read, json, profile.account);
  if (!read.ok) return unavailable(base, now, `${detail} malformed: ${read.why}`, json);
  const { nativeStatus, carried, observedAt } = read.facts;
  return answered(base, now, {
    result: 'found',
    nativeStatus,
    carried,
    observedAt,
    response: json,
    complete: true,
    auth,
    detail,
  });
}

function matchesBinding(
  o: OccurrenceView,
  carried: { readonly nativeKey?: string | null; readonly providerReference?: string | null },
): boolean {
  const key = o.provider.nativeKey;
  const ref = o.provider.providerReference;
  return (key !== null && carried.nativeKey === key) || (ref !== null && carried.providerReference === ref);
}

/**
 * An item the rule cannot read that is still about this attempt: its raw native key is the
 * occurrence's own, or its raw reference the bound one. (Under `nativeKeyOf: causing_request` an
 * item carrying another request's key anchors only by the reference, as a readable one does.)
 */
function unreadableAboutUs(read: AnswerRead, item: JsonValue, o: OccurrenceView): boolean {
  const key = o.provider.nativeKey;
  const ref = o.provider.providerReference;
  const rawKey = read.nativeKey === undefined ? undefined : resolveJsonPointer(item, read.nativeKey);
  return (
    (key !== null && rawKey === key) || (ref !== null && resolveJsonPointer(item, read.reference) === ref)
  );
}

interface Hit {
  readonly item: JsonValue;
  readonly facts: ReadFacts;
  readonly page: number;
  readonly auth: Authentication;
}

/**
 * Walk the listing from its first page. Items the rule cannot read are passed over (they may be
 * other objects) unless they carry the occurrence's key or bound reference: such an item is about
 * this attempt and cannot be judged, so the reading is unavailable (fail closed, never dropped).
 * AOC-CASE-009: the walk does not stop at the first page holding an item about the occurrence; it
 * reads on to the end (within `maxPages`) and hands the service EVERY such item, so page boundaries
 * never pick the reading. A walk its page bound cuts after a match is judged on the pages read
 * (`complete: false`, said in the detail: a busy account's listing would otherwise never settle);
 * one cut after a match by a page it cannot trust (not authentic, no cursor) is unavailable. Absence
 * is stated as the layer's own "no item for this key", complete only when every page was read and
 * authentic.
 */
export async function declaredListing(
  ctx: SourceContext,
  profile: ProviderProfile,
  o: OccurrenceView,
  source: StatusSource & { read: AnswerRead },
): Promise<SourceReading> {
  const seen: { retryAfter?: string } = {};
  return withRetryAfter(await walk(ctx, profile, o, source, seen), seen.retryAfter);
}

async function walk(
  ctx: SourceContext,
  profile: ProviderProfile,
  o: OccurrenceView,
  source: StatusSource & { read: AnswerRead },
  seen: { retryAfter?: string },
): Promise<SourceReading> {
  const base: ReadingBase = { occurrenceId: o.id, source: source.id, kind: source.kind };
  const rule = source.listing;
  if (rule === undefined) return unavailable(base, ctx.clock.wallMs(), 'no listing rule');
  let cursor: string | undefined;
  let first: { json: JsonObject; auth: Authentication } | undefined;
  const hits: Hit[] = [];
  for (let n = 1; n <= ctx.maxPages; n += 1) {
    const url = expandUrl(source.url, bindingValues(o));
    url.searchParams.set(rule.limitParam, String(ctx.pageSize));
    if (cursor !== undefined) url.searchParams.set(rule.cursorParam, cursor);
    const got = await fetchOnce(ctx, source, url);
    seen.retryAfter = got.retryAfter;
    const now = ctx.clock.wallMs();
    if (!got.ok) return unavailable(base, now, `page ${n}: ${got.detail}`);
    const items = resolveJsonPointer(got.json, rule.items);
    if (got.res.status !== 200 || !Array.isArray(items))
      return unavailable(base, now, `page ${n}: http ${got.res.status}`, got.json);
    // A page holds what was asked for: more is not a page of this listing (docs/providers.md).
    if (items.length > ctx.pageSize)
      return unavailable(
        base,
        now,
        `page ${n}: ${items.length} items, more than the ${ctx.pageSize} asked for`,
      );
    first ??= { json: got.json, auth: got.auth };
    for (const item of items) {
      const read = applyRead(source.read, item, profile.account);
      if (read.ok) {
        if (matchesBinding(o, read.facts.carried))
          hits.push({ item, facts: read.facts, page: n, auth: got.auth });
      } else if (unreadableAboutUs(source.read, item, o)) {
        const why = `page ${n}: an item about the occurrence is unreadable (${read.why})`;
        return unavailable(base, now, why, got.json);
      }
    }
    // Every matching item travels with the observation, which bounds how many it may carry.
    if (hits.length > MAX_ALSO_MATCHED + 1)
      return unavailable(base, now, `page ${n}: more than ${MAX_ALSO_MATCHED + 1} items match`);
    const more = resolveJsonPointer(got.json, rule.hasMore) === true;
    const last: JsonValue | undefined =
      items.length === 0 ? undefined : resolveJsonPointer(items[items.length - 1], rule.cursor);
    if (!more || typeof last !== 'string' || !got.auth.verified) {
      const complete = !more && got.auth.verified;
      const detail = complete ? `read ${n} pages to the end` : `page ${n}: incomplete`;
      // A match on a page that is not authentic is found, and judged unauthenticated by the service.
      const untrusted = hits.some((h) => !h.auth.verified);
      if (hits.length > 0 && !complete && !untrusted)
        return unavailable(base, now, `${detail}, after a match`);
      if (hits.length > 0 && !complete) return found(base, now, hits, false, detail);
      if (hits.length > 0) return found(base, now, hits, true, detail);
      return absent(profile, source, o, base, now, first, got.auth, complete, detail);
    }
    cursor = last;
  }
  const now = ctx.clock.wallMs();
  if (first === undefined) return unavailable(base, now, 'no page was read');
  const detail = `stopped after ${ctx.maxPages} pages`;
  if (hits.length > 0) return found(base, now, hits, false, `${detail}; judged on the pages read`);
  return absent(profile, source, o, base, now, first, first.auth, false, detail);
}

/** Every item about the occurrence the walk met, the first standing for the reading. */
function found(base: ReadingBase, now: number, hits: readonly Hit[], complete: boolean, walk: string) {
  const [hit, ...others] = hits as [Hit, ...Hit[]];
  const { nativeStatus, carried, observedAt } = hit.facts;
  // The reading is authentic only if every page it took an item from was.
  const auth = hits.find((h) => !h.auth.verified)?.auth ?? hit.auth;
  const pages = [...new Set(hits.map((h) => h.page))].join(', ');
  const matched = hits.length === 1 ? `page ${pages}` : `${hits.length} items match on page ${pages}`;
  return answered(base, now, {
    result: 'found',
    nativeStatus,
    carried,
    observedAt,
    response: asObject(hit.item) ?? {},
    complete,
    auth,
    detail: `${matched}; ${walk}`,
    alsoMatched: others.map((x) => ({ nativeStatus: x.facts.nativeStatus, carried: x.facts.carried })),
  });
}

function absent(
  profile: ProviderProfile,
  source: StatusSource & { read: AnswerRead },
  o: OccurrenceView,
  base: ReadingBase,
  now: number,
  first: { json: JsonObject },
  auth: Authentication,
  complete: boolean,
  detail: string,
): SourceReading {
  const carried = {
    // A listing authenticated for the account (its channel or its key) lists that account's objects.
    ...(source.read.account.whenAbsent === 'pinned' && { account: profile.account }),
    ...(o.provider.nativeKey !== null && { nativeKey: o.provider.nativeKey }),
    ...(o.provider.providerReference !== null && { providerReference: o.provider.providerReference }),
  };
  return answered(base, now, {
    result: 'not_found',
    carried,
    observedAt: undefined,
    response: first.json,
    complete,
    auth,
    detail,
  });
}
