/**
 * Lookup by native key and by provider reference (docs/sandbox.md). A 200 carries the payment; a
 * 404 `not_found` is an exact, signed "no record now" for that key or reference — still only missing
 * knowledge (`not_found` or `not_found_beyond_retention`), never proof of non-entry (AOC-CASE-008).
 */
import type { OccurrenceView, StatusSource } from '../../occurrences/index.js';
import { exchange, failureDetail, retryAfterOf } from '../http-client.js';
import { expandUrl } from '../url-template.js';
import {
  asObject,
  authenticate,
  observedAt,
  parseAnswer,
  readErrorCarried,
  readPayment,
  word,
} from '../wire.js';
import { answered, unavailable, type SourceReading } from './reading.js';
import type { SourceContext } from './context.js';

export function bindingValues(o: OccurrenceView): Record<string, string | null> {
  return {
    account: o.provider.account,
    nativeKey: o.provider.nativeKey,
    reference: o.provider.providerReference,
  };
}

export async function lookup(
  ctx: SourceContext,
  o: OccurrenceView,
  source: StatusSource,
): Promise<SourceReading> {
  const url = expandUrl(source.url, bindingValues(o));
  const res = await exchange({ method: 'GET', url, timeoutMs: ctx.timeoutMs, pooled: true });
  const reading = read(ctx, o, source, res);
  const retryAfter = retryAfterOf(res);
  return retryAfter === undefined ? reading : { ...reading, retryAfter };
}

function read(
  ctx: SourceContext,
  o: OccurrenceView,
  source: StatusSource,
  res: Awaited<ReturnType<typeof exchange>>,
): SourceReading {
  const base = { occurrenceId: o.id, source: source.id, kind: source.kind };
  const now = ctx.clock.wallMs();
  if (!res.ok) return unavailable(base, now, failureDetail(res));
  const json = asObject(parseAnswer(res.body));
  if (json === undefined) return unavailable(base, now, `http ${res.status} unreadable`);
  const detail = `http ${res.status}`;
  const payment = res.status === 200 ? readPayment(json) : undefined;
  const notFound = res.status === 404 && json['error'] === 'not_found';
  if (payment === undefined && !notFound) {
    return unavailable(base, now, `${detail} ${word(json['error'], 'unexpected answer')}`, json);
  }
  const message = { method: 'GET', path: res.path, body: res.body, headers: res.headers };
  const auth = authenticate(message, source.authentication, ctx.keys, now);
  if (payment !== undefined) {
    return answered(base, now, { result: 'found', ...payment, response: json, complete: true, auth, detail });
  }
  const pruned = json['pruned'] === true ? ' (pruned)' : '';
  return answered(base, now, {
    result: 'not_found',
    carried: readErrorCarried(json),
    observedAt: observedAt(json),
    response: json,
    complete: true,
    auth,
    detail: `${detail} not_found${pruned}`,
  });
}
