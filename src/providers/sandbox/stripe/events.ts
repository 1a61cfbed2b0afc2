/**
 * `GET /v1/events` (Stripe's "List all events"): newest first, `limit` (1..100, default 10),
 * `starting_after` (an event id: the page after it), `type` (exact, or a `prefix.*` wildcard).
 * Each event names the request that caused it (`request.idempotency_key`), which is what lets a
 * profile find the effect a lost answer was about (docs/providers.md "Stripe PaymentIntents").
 * Stripe keeps events 30 days; this sandbox keeps them for its lifetime.
 */
import { stripeError, type StripeAnswer } from './errors.js';
import type { StripeState } from './state.js';

const TYPE = /^[a-z_]{1,40}(\.[a-z_]{1,40})*(\.\*)?$/;

function typeMatches(filter: string | undefined, type: string): boolean {
  if (filter === undefined) return true;
  return filter.endsWith('.*') ? type.startsWith(filter.slice(0, -1)) : type === filter;
}

export function listEvents(state: StripeState, query: Record<string, string | string[]>): StripeAnswer {
  const bad = (param: string): StripeAnswer =>
    stripeError(400, 'invalid_request_error', `Invalid ${param}.`, { param });
  const limitText = query['limit'] ?? '10';
  const after = query['starting_after'];
  const type = query['type'];
  if (typeof limitText !== 'string' || !/^[0-9]{1,3}$/.test(limitText)) return bad('limit');
  const limit = Number(limitText);
  if (limit < 1 || limit > 100) return bad('limit');
  if (Array.isArray(after) || Array.isArray(type))
    return bad(Array.isArray(after) ? 'starting_after' : 'type');
  if (type !== undefined && !TYPE.test(type)) return bad('type');
  const newestFirst = [...state.webhooks.events].reverse().filter((e) => typeMatches(type, e.type));
  let start = 0;
  if (after !== undefined) {
    const at = newestFirst.findIndex((e) => e.id === after);
    if (at < 0)
      return stripeError(404, 'invalid_request_error', 'No such event.', { param: 'starting_after' });
    start = at + 1;
  }
  const page = newestFirst.slice(start, start + limit);
  return {
    status: 200,
    body: {
      object: 'list',
      data: page.map((e) => JSON.parse(e.body) as unknown),
      has_more: start + limit < newestFirst.length,
      url: '/v1/events',
    },
  };
}
