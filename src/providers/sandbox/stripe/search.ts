/**
 * `GET /v1/payment_intents/search?query=…`: the subset of Stripe's search query language a status
 * lookup needs — clauses `metadata['key']:'value'` and `status:'value'` joined by ` AND `.
 * Anything else is refused, never read loosely. (Stripe documents search as eventually
 * consistent, so a profile must not read "not found" here as "no effect"; this sandbox is
 * immediately consistent.)
 */
import { stripeError, type StripeAnswer } from './errors.js';
import { intentView, type PaymentIntent } from './model.js';
import type { StripeState } from './state.js';

type Clause = { field: 'metadata'; key: string; value: string } | { field: 'status'; value: string };

const METADATA = /^metadata\['([^'\\]{1,40})'\]:'([^'\\]{0,500})'$/;
const STATUS = /^status:'([a-z_]{1,40})'$/;

function clauses(query: string): Clause[] | undefined {
  const out: Clause[] = [];
  for (const part of query.split(' AND ')) {
    const m = METADATA.exec(part.trim());
    const s = STATUS.exec(part.trim());
    if (m !== null) out.push({ field: 'metadata', key: m[1]!, value: m[2]! });
    else if (s !== null) out.push({ field: 'status', value: s[1]! });
    else return undefined;
  }
  return out;
}

function matches(p: PaymentIntent, c: Clause): boolean {
  return c.field === 'status' ? p.status === c.value : p.metadata[c.key] === c.value;
}

export function searchIntents(state: StripeState, query: Record<string, string>): StripeAnswer {
  const text = query['query'];
  const parsed = typeof text === 'string' ? clauses(text) : undefined;
  if (parsed === undefined) {
    return stripeError(400, 'invalid_request_error', 'Unsupported search query.', { param: 'query' });
  }
  const data = [...state.intents.values()].filter((p) => parsed.every((c) => matches(p, c)));
  return {
    status: 200,
    body: {
      object: 'search_result',
      data: data.map(intentView),
      has_more: false,
      next_page: null,
      url: '/v1/payment_intents/search',
    },
  };
}
