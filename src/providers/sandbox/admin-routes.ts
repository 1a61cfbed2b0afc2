/**
 * /admin: the test hooks (effect counts — the duplicate oracle —, fault rules, clock, pruning,
 * webhooks). Bearer-token protected; answers are signed like everything else but never faulted.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { formatRfc3339 } from '../../core/time.js';
import { parseFault } from './faults.js';
import { errorAnswer, send, type Answer } from './http.js';
import type { JsonRecord } from './model.js';
import { failureAnswer } from './request.js';
import type { SandboxState } from './state.js';

const MAX_ADVANCE_MS = 10 * 365 * 24 * 3600 * 1000;

function authorized(state: SandboxState, request: FastifyRequest): boolean {
  const given = Buffer.from(request.headers.authorization ?? '', 'utf8');
  const expected = Buffer.from(`Bearer ${state.options.adminToken}`, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function body(request: FastifyRequest): JsonRecord {
  const b = request.body;
  return typeof b === 'object' && b !== null && !Array.isArray(b) ? (b as JsonRecord) : {};
}

function addFault(state: SandboxState, b: JsonRecord): Answer {
  const { key, target, fault, count } = b;
  let scope: { key: string } | 'next' | 'all';
  if (typeof key === 'string' && target === undefined) scope = { key };
  else if ((target === 'next' || target === 'all') && key === undefined) scope = target;
  else return errorAnswer(state, 400, 'invalid_request', { param: 'target' });
  if (typeof fault !== 'string') return errorAnswer(state, 400, 'invalid_request', { param: 'fault' });
  if (count !== undefined && !(Number.isSafeInteger(count) && (count as number) > 0)) {
    return errorAnswer(state, 400, 'invalid_request', { param: 'count' });
  }
  const rule = state.faults.add(scope, parseFault(fault), count as number | undefined);
  return { status: 201, body: { id: rule.id, target: rule.target, fault, count: count ?? null } };
}

function advance(state: SandboxState, b: JsonRecord): Answer {
  const ms = b['advance_ms'];
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0 || ms > MAX_ADVANCE_MS) {
    return errorAnswer(state, 400, 'invalid_request', { param: 'advance_ms' });
  }
  state.advance(ms);
  return {
    status: 200,
    body: { now: formatRfc3339(state.now()), retention_horizon: formatRfc3339(state.horizonMs()) },
  };
}

function webhookList(state: SandboxState): Answer {
  const events = state.webhooks.events().map(({ body: _body, ...event }) => event);
  return { status: 200, body: { urls: state.webhooks.urls, events } };
}

function setWebhooks(state: SandboxState, b: JsonRecord): Answer {
  const urls = b['urls'];
  if (!Array.isArray(urls) || !urls.every((u) => typeof u === 'string' && URL.canParse(u))) {
    return errorAnswer(state, 400, 'invalid_request', { param: 'urls' });
  }
  state.webhooks.urls = urls as string[];
  return { status: 200, body: { urls } };
}

async function replay(state: SandboxState, b: JsonRecord): Promise<Answer> {
  const filter = { eventId: b['event_id'], key: b['key'] };
  if (typeof filter.eventId !== 'string' && typeof filter.key !== 'string') {
    return errorAnswer(state, 400, 'invalid_request', { param: 'event_id' });
  }
  const deliveries = await state.webhooks.replay(filter as { eventId?: string; key?: string });
  return { status: 200, body: { deliveries } };
}

type Handler = (request: FastifyRequest) => Answer | Promise<Answer>;

export function registerAdminRoutes(app: FastifyInstance, state: SandboxState): void {
  const route = (handler: Handler) => async (request: FastifyRequest, reply: FastifyReply) => {
    if (!authorized(state, request))
      return send(state, request, reply, errorAnswer(state, 401, 'unauthorized'));
    try {
      return send(state, request, reply, await handler(request));
    } catch (error) {
      return send(state, request, reply, failureAnswer(state, error));
    }
  };
  const { ledger } = state;
  app.get(
    '/admin/effects',
    route(() => ({ status: 200, body: { total: ledger.effects().length, effects: ledger.effects() } })),
  );
  app.get(
    '/admin/effects/:key',
    route((r) => {
      const { key } = r.params as { key: string };
      return {
        status: 200,
        body: {
          key,
          count: ledger.effectCount(key),
          in_flight: ledger.keyInFlight(key),
          effects: ledger.effects(key),
        },
      };
    }),
  );
  app.get(
    '/admin/faults',
    route(() => ({ status: 200, body: { rules: state.faults.list() } })),
  );
  app.post(
    '/admin/faults',
    route((r) => addFault(state, body(r))),
  );
  app.delete(
    '/admin/faults',
    route(() => ({ status: 200, body: { cleared: state.faults.clear() } })),
  );
  app.post(
    '/admin/clock',
    route((r) => advance(state, body(r))),
  );
  app.post(
    '/admin/prune',
    route(() => ({
      status: 200,
      body: { pruned: state.tick(), retention_horizon: formatRfc3339(state.horizonMs()) },
    })),
  );
  app.get(
    '/admin/webhooks',
    route(() => webhookList(state)),
  );
  app.put(
    '/admin/webhooks',
    route((r) => setWebhooks(state, body(r))),
  );
  app.post(
    '/admin/webhooks/replay',
    route((r) => replay(state, body(r))),
  );
}
