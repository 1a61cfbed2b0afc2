/**
 * Status sources: lookup by idempotency key, by reference, and the paged listing. "Not found" is
 * honestly ambiguous: it says only that no record exists now inside the retention window; `pruned`
 * appears only when the sandbox positively knows it dropped the record (AOC-CASE-008).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { formatRfc3339 } from '../../core/time.js';
import type { Fault } from './faults.js';
import { errorAnswer, send, type Answer } from './http.js';
import { ENVIRONMENT, paymentView, reportedStatus, type JsonRecord, type Payment } from './model.js';
import { failureAnswer, pause, requestFaults, unknownAccount } from './request.js';
import type { SandboxState } from './state.js';

const MAX_LIMIT = 100;
const DEFAULT_LIMIT = 10;

type Lookup = { idempotency_key: string } | { reference: string };

function notFound(
  state: SandboxState,
  account: string,
  lookup: Lookup,
  prunedAtMs: number | undefined,
): Answer {
  return errorAnswer(state, 404, 'not_found', {
    account,
    environment: ENVIRONMENT,
    ...lookup,
    retention_horizon: formatRfc3339(state.horizonMs()),
    ...(prunedAtMs !== undefined && { pruned: true, pruned_at: formatRfc3339(prunedAtMs) }),
  });
}

/** Report the payment as this lookup sees it, then count the lookup (the lying faults use it). */
function found(state: SandboxState, p: Payment): Answer {
  const status = reportedStatus(p, p.lookups);
  p.lookups += 1;
  state.announce(p);
  return { status: 200, body: paymentView(p, status, state.now()) };
}

function lookupAnswer(state: SandboxState, account: string, lookup: Lookup): Answer {
  const refused = unknownAccount(state, account);
  if (refused !== undefined) return refused;
  const { ledger } = state;
  if ('idempotency_key' in lookup) {
    const p = ledger.find(account, lookup.idempotency_key);
    return p
      ? found(state, p)
      : notFound(state, account, lookup, ledger.prunedKeyAt(account, lookup.idempotency_key));
  }
  const p = ledger.byReference(account, lookup.reference);
  return p
    ? found(state, p)
    : notFound(state, account, lookup, ledger.prunedReferenceAt(account, lookup.reference));
}

function positiveInt(text: string | undefined, fallback: number, max: number): number | undefined {
  if (text === undefined) return fallback;
  if (!/^[0-9]{1,4}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= 1 && n <= max ? n : undefined;
}

/** A page of the account's payments in creation order; complete only if it is the whole listing. */
function listAnswer(state: SandboxState, account: string, query: Record<string, string | undefined>): Answer {
  const refused = unknownAccount(state, account);
  if (refused !== undefined) return refused;
  const limit = positiveInt(query['limit'], DEFAULT_LIMIT, MAX_LIMIT);
  if (limit === undefined) return errorAnswer(state, 400, 'invalid_request', { param: 'limit' });
  const cursorRef = query['starting_after'];
  const cursor = cursorRef === undefined ? undefined : state.ledger.byReference(account, cursorRef);
  if (cursorRef !== undefined && cursor === undefined) {
    const prunedAt = state.ledger.prunedReferenceAt(account, cursorRef);
    return errorAnswer(state, 400, 'invalid_cursor', {
      param: 'starting_after',
      ...(prunedAt && { pruned: true }),
    });
  }
  const page = state.ledger.list(account, limit, cursor);
  const nowMs = state.now();
  const body: JsonRecord = {
    object: 'list',
    account,
    environment: ENVIRONMENT,
    data: page.data.map((p) => paymentView(p, reportedStatus(p), nowMs)),
    has_more: page.hasMore,
    complete: !page.hasMore && cursor === undefined,
    retention_horizon: formatRfc3339(state.horizonMs()),
    observed_at: formatRfc3339(nowMs),
  };
  return { status: 200, body };
}

type AccountRequest<P> = FastifyRequest<{ Params: P & { account: string } }>;

/** The payment's key is the fault target of a lookup by reference. */
function keyOf(state: SandboxState, account: string, lookup: Lookup): string | undefined {
  if ('idempotency_key' in lookup) return lookup.idempotency_key;
  return state.ledger.byReference(account, lookup.reference)?.key;
}

async function answerWith(
  state: SandboxState,
  request: FastifyRequest,
  reply: FastifyReply,
  key: string | undefined,
  compute: () => Answer,
): Promise<FastifyReply> {
  let transport: Fault[] = [];
  try {
    const faults = requestFaults(state, request, key);
    transport = faults.transport;
    if (faults.payment.length > 0) {
      return send(
        state,
        request,
        reply,
        errorAnswer(state, 400, 'invalid_request', { param: 'Sandbox-Fault' }),
      );
    }
    await pause(state, transport);
    return send(state, request, reply, compute(), transport);
  } catch (error) {
    return send(state, request, reply, failureAnswer(state, error), transport);
  }
}

export function registerLookupRoutes(app: FastifyInstance, state: SandboxState): void {
  app.get('/v1/accounts/:account/payments/by-key/:key', (req: AccountRequest<{ key: string }>, reply) => {
    const lookup = { idempotency_key: req.params.key };
    return answerWith(state, req, reply, lookup.idempotency_key, () =>
      lookupAnswer(state, req.params.account, lookup),
    );
  });
  app.get(
    '/v1/accounts/:account/payments/:reference',
    (req: AccountRequest<{ reference: string }>, reply) => {
      const lookup = { reference: req.params.reference };
      const key = keyOf(state, req.params.account, lookup);
      return answerWith(state, req, reply, key, () => lookupAnswer(state, req.params.account, lookup));
    },
  );
  app.get('/v1/accounts/:account/payments', (req: AccountRequest<object>, reply) => {
    const query = req.query as Record<string, string | undefined>;
    return answerWith(state, req, reply, undefined, () => listAnswer(state, req.params.account, query));
  });
}
