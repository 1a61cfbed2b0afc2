/**
 * The HTTP surface of the Stripe-compatible flavour: `/v1/payment_intents` (create, retrieve,
 * confirm, capture, cancel, search by metadata or status) and `/v1/refunds` (create, retrieve), authenticated by
 * the secret key (`Authorization: Bearer sk_test_…` or Basic with the key as user name), keyed
 * POSTs under Stripe's idempotency rules, and the sandbox's transport faults.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { digestJcs } from '../../../core/digest.js';
import { parseFaultHeader, type Fault } from '../faults.js';
import { pauseFor } from './faults.js';
import { resourceMissing, stripeError, type StripeAnswer } from './errors.js';
import { FormError, parseForm, type FormObject } from './form.js';
import { intentView, refundView } from './model.js';
import {
  cancelIntent,
  captureIntent,
  confirmIntent,
  createIntent,
  createRefund,
  type Outcome,
} from './operations.js';
import { listEvents } from './events.js';
import { searchIntents } from './search.js';
import type { StripeState } from './state.js';

const FAULT_HEADER = 'sandbox-fault';
const STRIPE_FAULTS: readonly string[] = ['drop_response_after_apply', 'delay', 'error_500_after_apply'];
const KEY_SYNTAX = /^[\x20-\x7e]{1,255}$/;

export function sendStripe(
  reply: FastifyReply,
  request: FastifyRequest,
  answer: StripeAnswer,
  faults: readonly Fault[] = [],
): FastifyReply {
  if (faults.some((f) => f.name === 'drop_response_after_apply')) {
    // Applied, and the caller never hears of it: the ambiguity Baton exists for, made real.
    reply.hijack();
    request.raw.socket.destroy();
    return reply;
  }
  const failed = faults.some((f) => f.name === 'error_500_after_apply');
  const sent = failed ? stripeError(500, 'api_error', 'An unknown error occurred.') : answer;
  return reply
    .code(sent.status)
    .headers({ ...sent.headers, 'request-id': `req_${randomBytes(9).toString('base64url')}` })
    .type('application/json')
    .send(JSON.stringify(sent.body));
}

function authenticated(secretKey: string, request: FastifyRequest): boolean {
  const header = request.headers.authorization ?? '';
  let given = '';
  if (header.startsWith('Bearer ')) given = header.slice(7);
  else if (header.startsWith('Basic '))
    given = Buffer.from(header.slice(6), 'base64').toString('utf8').split(':')[0] ?? '';
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(secretKey, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

function faultsOf(request: FastifyRequest): Fault[] | StripeAnswer {
  try {
    const faults = parseFaultHeader(request.headers[FAULT_HEADER]);
    const bad = faults.find((f) => !STRIPE_FAULTS.includes(f.name));
    if (bad === undefined) return faults;
  } catch {
    // fall through: an unparseable fault header is a bad request, never ignored
  }
  return stripeError(400, 'invalid_request_error', 'Unsupported Sandbox-Fault for the stripe flavour.');
}

type Work = (form: FormObject, key: string) => Outcome;

/** One keyed POST: Stripe's idempotency decision, the work, then the answer saved or not. */
function keyed(
  state: StripeState,
  request: FastifyRequest,
  endpoint: string,
  form: FormObject,
  work: Work,
): StripeAnswer {
  const header = request.headers['idempotency-key'];
  const key = typeof header === 'string' ? header : undefined;
  if (Array.isArray(header) || (key !== undefined && !KEY_SYNTAX.test(key))) {
    return stripeError(400, 'invalid_request_error', 'Invalid Idempotency-Key header.', {
      param: 'Idempotency-Key',
    });
  }
  if (key === undefined) {
    const outcome = work(form, '');
    return 'refused' in outcome ? outcome.refused : outcome.executed;
  }
  const params = digestJcs(JSON.parse(JSON.stringify(form)));
  const decision = state.idempotency.begin(key, endpoint, params, state.nowMs());
  if (decision.kind === 'answer') return decision.answer;
  const outcome = work(form, key);
  if ('refused' in outcome) {
    state.idempotency.forget(key);
    return outcome.refused;
  }
  state.idempotency.save(key, outcome.executed);
  return outcome.executed;
}

export function registerStripeRoutes(app: FastifyInstance, state: StripeState, secretKey: string): void {
  app.addHook('onRequest', async (request, reply) => {
    if (!request.url.startsWith('/v1/')) return;
    if (!authenticated(secretKey, request)) {
      await sendStripe(
        reply,
        request,
        stripeError(401, 'invalid_request_error', 'Invalid API Key provided.'),
      );
    }
  });

  const post = (
    url: string,
    endpoint: (r: FastifyRequest) => string,
    work: (r: FastifyRequest) => Work,
  ): void => {
    app.post(url, async (request, reply) => {
      const faults = faultsOf(request);
      if (!Array.isArray(faults)) return sendStripe(reply, request, faults);
      let form: FormObject;
      try {
        form = parseForm(typeof request.body === 'string' ? request.body : '');
      } catch (error) {
        const param = error instanceof FormError ? error.param : 'body';
        return sendStripe(
          reply,
          request,
          stripeError(400, 'invalid_request_error', 'Invalid request body.', { param }),
        );
      }
      const answer = keyed(state, request, endpoint(request), form, work(request));
      await pauseFor(state, faults);
      return sendStripe(reply, request, answer, faults);
    });
  };

  type WithId = FastifyRequest<{ Params: { id: string } }>;
  post(
    '/v1/payment_intents',
    () => 'POST /v1/payment_intents',
    () => (form, key) => createIntent(state, form, key),
  );
  post(
    '/v1/payment_intents/:id/confirm',
    (r) => `POST /v1/payment_intents/${(r as WithId).params.id}/confirm`,
    (r) => (form, key) => confirmIntent(state, (r as WithId).params.id, form, key),
  );
  post(
    '/v1/payment_intents/:id/capture',
    (r) => `POST /v1/payment_intents/${(r as WithId).params.id}/capture`,
    (r) => (form, key) => captureIntent(state, (r as WithId).params.id, form, key),
  );
  post(
    '/v1/payment_intents/:id/cancel',
    (r) => `POST /v1/payment_intents/${(r as WithId).params.id}/cancel`,
    (r) => (form, key) => cancelIntent(state, (r as WithId).params.id, form, key),
  );
  post(
    '/v1/refunds',
    () => 'POST /v1/refunds',
    () => (form, key) => createRefund(state, form, key),
  );

  app.get(
    '/v1/payment_intents/search',
    async (request: FastifyRequest<{ Querystring: Record<string, string> }>, reply) =>
      sendStripe(reply, request, searchIntents(state, request.query)),
  );
  app.get('/v1/payment_intents/:id', async (request: WithId, reply) => {
    const p = state.intents.get(request.params.id);
    const answer =
      p === undefined
        ? resourceMissing('payment_intent', request.params.id, 'intent')
        : { status: 200, body: intentView(p) };
    return sendStripe(reply, request, answer);
  });
  app.get('/v1/events', async (request: FastifyRequest<{ Querystring: Record<string, string> }>, reply) =>
    sendStripe(reply, request, listEvents(state, request.query)),
  );
  app.get('/v1/refunds/:id', async (request: WithId, reply) => {
    const r = state.refunds.get(request.params.id);
    const answer =
      r === undefined
        ? resourceMissing('refund', request.params.id, 'id')
        : { status: 200, body: refundView(r) };
    return sendStripe(reply, request, answer);
  });
}
