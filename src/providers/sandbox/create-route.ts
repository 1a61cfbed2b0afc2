/**
 * POST /v1/accounts/:account/payments — native idempotency with request comparison, as a real
 * provider does it: the same key with the same request (JCS digest) replays the original response
 * without a second effect; the same key with another request is refused (`idempotency_key_reused`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { digestEquals, digestJcs } from '../../core/digest.js';
import { behaviourOf, type Fault } from './faults.js';
import { errorAnswer, send, type Answer } from './http.js';
import { paymentView, reportedStatus, type JsonRecord } from './model.js';
import {
  checkKey,
  checkPaymentBody,
  failureAnswer,
  headerText,
  pause,
  requestFaults,
  unknownAccount,
} from './request.js';
import type { SandboxState } from './state.js';

type CreateRequest = FastifyRequest<{ Params: { account: string } }>;

async function accept(
  state: SandboxState,
  { account, key, body }: { account: string; key: string; body: JsonRecord },
  faults: { transport: Fault[]; payment: Fault[] },
): Promise<Answer> {
  const payment = [...faults.payment, ...state.faults.take('payment', key)];
  const behaviour = behaviourOf(payment);
  const requestDigest = digestJcs(body);
  // The key is in flight from here: a concurrent retry gets 409 idempotency_key_in_use.
  state.ledger.reserve(account, key, requestDigest);
  try {
    await pause(state, faults.transport);
  } catch (error) {
    state.ledger.release(account, key);
    throw error;
  }
  const nowMs = state.now();
  const p = state.ledger.accept({
    account,
    key,
    request: body,
    requestDigest,
    behaviour,
    dropWebhook: payment.some((f) => f.name === 'drop_webhook'),
    nowMs,
    settleAtMs: nowMs + state.options.settleDelayMs,
    render: (created) => JSON.stringify(paymentView(created, reportedStatus(created), nowMs)),
  });
  state.announce(p);
  return { status: 201, body: p.response };
}

type Decision = { answer: Answer } | { create: { account: string; key: string; body: JsonRecord } };

function decide(state: SandboxState, request: CreateRequest, key: string | undefined): Decision {
  const { account } = request.params;
  const refused = unknownAccount(state, account);
  if (refused !== undefined) return { answer: refused };
  if (key === undefined) return { answer: errorAnswer(state, 400, 'idempotency_key_missing') };
  const badKey = checkKey(state, key);
  if (badKey !== undefined) return { answer: badKey };
  const checked = checkPaymentBody(state, request.body);
  if (!checked.ok) return { answer: checked.answer };
  if (state.ledger.inFlightDigest(account, key) !== undefined) {
    return { answer: errorAnswer(state, 409, 'idempotency_key_in_use', { account, idempotency_key: key }) };
  }
  const existing = state.ledger.find(account, key);
  if (existing === undefined) return { create: { account, key, body: checked.body } };
  if (!digestEquals(existing.requestDigest, digestJcs(checked.body))) {
    return { answer: errorAnswer(state, 422, 'idempotency_key_reused', { account, idempotency_key: key }) };
  }
  return { answer: { status: 201, body: existing.response, headers: { 'idempotent-replayed': 'true' } } };
}

export function registerCreateRoute(app: FastifyInstance, state: SandboxState): void {
  app.post('/v1/accounts/:account/payments', async (request: CreateRequest, reply: FastifyReply) => {
    const key = headerText(request.headers['idempotency-key']);
    let faults: { transport: Fault[]; payment: Fault[] } = { transport: [], payment: [] };
    try {
      faults = requestFaults(state, request, key);
      const decision = decide(state, request, key);
      if ('create' in decision) {
        return send(state, request, reply, await accept(state, decision.create, faults), faults.transport);
      }
      await pause(state, faults.transport);
      return send(state, request, reply, decision.answer, faults.transport);
    } catch (error) {
      return send(state, request, reply, failureAnswer(state, error), faults.transport);
    }
  });
}
