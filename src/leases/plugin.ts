/**
 * The Fastify plugin a system of record mounts to enforce PTCL (draft §3-§6): reads publish the
 * resource's epoch in Agent-Fence-Token; a leased POST commits (or shadows, or escrows) only when
 * every rule holds and answers with a signed Agent-Commit-Receipt; every refusal answers with a
 * signed rejection receipt (problem+json) that the service has already appended to the audit log.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BatonError, isBatonError } from '../core/errors.js';
import type { JsonObject, JsonValue } from '../core/json.js';
import { parseStrictJson } from '../core/json.js';
import { formatRfc3339 } from '../core/time.js';
import {
  COMMIT_RECEIPT_HEADER,
  FENCE_TOKEN_HEADER,
  LEASE_HEADER,
  decodeLeaseHeader,
  encodeReceiptHeader,
} from './carriage.js';
import type { Rejection } from './model.js';
import type { Answer, LeaseService, StagedRequest } from './service.js';

export interface LeasePluginOptions {
  service: LeaseService;
  /** Where the leased resources live, e.g. `/api/v2/inventory/allocations`; each is `<path>/:id`. */
  collectionPath: string;
  /** The canonical absolute URI of resource `id`: what a lease must name in sor_target_uri. */
  targetUri: (id: string) => string;
  /**
   * The system of record's own configured origin (`scheme://host[:port]`, no path, no trailing
   * slash). A receipt for a request that names no known lease says `<origin><prefix><route>`, with
   * the Fastify prefix the plugin is mounted under (added by the plugin); it is never built from
   * the request's Host header, which would let a client choose what the system of record signs.
   */
  origin: () => string;
  /** Whether the request comes from an operator (escrow approval, audit, escrow queue). */
  isOperator: (request: FastifyRequest) => boolean;
  /** The receipt-signing public key, published so gateways can check receipts. */
  receiptJwk: JsonObject;
}

type IdParams = { Params: { id: string } };
type LeaseParams = { Params: { leaseId: string } };

function problem(reply: FastifyReply, error: BatonError, extra: JsonObject = {}): FastifyReply {
  const body = {
    type: 'about:blank',
    title: error.code,
    status: error.status,
    code: error.code,
    detail: error.message,
    ...extra,
  };
  return reply.code(error.status).type('application/problem+json').send(body);
}

function send(reply: FastifyReply, answer: Answer): FastifyReply {
  reply.header(COMMIT_RECEIPT_HEADER, encodeReceiptHeader(answer.receipt));
  if (answer.resource !== undefined) reply.header(FENCE_TOKEN_HEADER, String(answer.resource.epoch));
  const receipt = answer.receipt as unknown as JsonObject;
  if (answer.rejection !== undefined) {
    const { code, message, rule, cause } = answer.rejection;
    // A model fault's own error stays out of the receipt and the body, but is never swallowed.
    if (cause !== undefined)
      reply.log.error({ err: cause }, 'lease system of record: the resource model failed');
    const body = {
      type: 'about:blank',
      title: code,
      status: answer.status,
      code,
      detail: message,
      rule,
      receipt,
    };
    return reply.code(answer.status).type('application/problem+json').send(body);
  }
  const state = answer.resource?.state ?? null;
  return reply.code(answer.status).send({ receipt, epoch: answer.resource?.epoch ?? null, state });
}

/** The operation and inverse payload beside the lease: `{"operation": …, "inverse_payload": …}`. */
function staged(body: unknown): StagedRequest {
  const none = (defect: string): StagedRequest => ({
    operation: undefined,
    inversePayload: undefined,
    defect,
  });
  if (!Buffer.isBuffer(body) || body.length === 0) return none('request body is empty');
  let value: JsonValue;
  try {
    value = parseStrictJson(body);
  } catch (error) {
    if (isBatonError(error)) return none(`request body is not strict JSON (${error.code})`);
    throw error;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return none('body must be an object');
  const extra = Object.keys(value).find((k) => k !== 'operation' && k !== 'inverse_payload');
  if (extra !== undefined) return none('body has an unknown member');
  return { operation: value['operation'], inversePayload: value['inverse_payload'] };
}

/** The lease header's bytes; an undecodable header is passed on as its own bytes, to be refused as malformed. */
function leaseHeaderBytes(request: FastifyRequest): Buffer | undefined {
  try {
    return decodeLeaseHeader(request.headers[LEASE_HEADER]);
  } catch (error) {
    if (!isBatonError(error)) throw error;
    return Buffer.from(String(request.headers[LEASE_HEADER]), 'latin1');
  }
}

/**
 * Why Fastify refused a request body before any handler ran (its content-type parser stage: over
 * bodyLimit, an unparseable Content-Type, a bad Content-Length), or undefined for any other error.
 * The wording is fixed: a header value never reaches the answer.
 */
function transportDefect(error: unknown): string | undefined {
  const { code, statusCode } = error as { code?: unknown; statusCode?: unknown };
  if (typeof code !== 'string' || !code.startsWith('FST_ERR_CTP_')) return undefined;
  if (typeof statusCode !== 'number' || statusCode < 400 || statusCode > 499) return undefined;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return 'request body exceeds the body limit (1 MiB); not read';
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return 'request Content-Type is not a media type; body not read';
  return `request body could not be read (${code})`;
}

/**
 * `origin` became required (2e1d2cf); a JavaScript caller that omits it must fail here, at
 * registration, not with a TypeError and a receipt-less 500 on each recover or approve refusal
 * (draft §5: fail closed, every refusal auditable). Its value may be known only once the server
 * listens (`baton sor` without --public-url), so only its presence can be checked now.
 */
function originRefusal(o: Partial<LeasePluginOptions>): BatonError | undefined {
  if (typeof o.origin === 'function') return undefined;
  return new BatonError(
    'input_invalid',
    'leasePlugin needs origin: a function returning the system of record’s own origin',
    { member: 'origin' },
  );
}

export function leasePlugin(app: FastifyInstance, o: LeasePluginOptions): Promise<void> {
  // A rejected promise, not a throw: Fastify's loader turns a plugin's synchronous throw into an
  // uncaught exception, whereas a rejection fails `register` / `ready` with this error.
  const refusal = originRefusal(o);
  if (refusal !== undefined) return Promise.reject(refusal);
  // Bodies are read raw and parsed strictly here, so a malformed body still gets a signed refusal.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  // Mounted under a Fastify `prefix` (`register(leasePlugin, {prefix: '/sor', …})`) every route lives
  // below it; Fastify joins the two without the prefix's trailing slash, and so does this.
  const base = app.prefix.replace(/\/+$/, '');
  // The endpoint's canonical URI from the configured origin, the mount prefix and the route's own
  // parameter (not the request's Host, nor its query string): what the receipt's sor_target_uri says
  // when no lease names one. It must name the endpoint that was actually called (draft §5: auditable).
  const leaseUri = (leaseId: string, action: 'recover' | 'approve'): string =>
    `${o.origin()}${base}${action === 'recover' ? '/ptcl/leases/' : '/ptcl/escrow/'}${encodeURIComponent(leaseId)}/${action}`;

  const operator = (request: FastifyRequest, reply: FastifyReply): boolean => {
    if (o.isOperator(request)) return true;
    void problem(reply, new BatonError('unauthenticated', 'operator credentials required'));
    return false;
  };

  app.get<IdParams>(`${o.collectionPath}/:id`, async (request, reply) => {
    const resource = o.service.read(o.targetUri(request.params.id));
    if (resource === undefined) return problem(reply, new BatonError('not_found', 'no such resource'));
    return reply.header(FENCE_TOKEN_HEADER, String(resource.epoch)).send(resource.state);
  });

  app.post<IdParams>(`${o.collectionPath}/:id`, async (request, reply) =>
    send(
      reply,
      o.service.mutate(o.targetUri(request.params.id), leaseHeaderBytes(request), staged(request.body)),
    ),
  );

  app.post<LeaseParams>('/ptcl/leases/:leaseId/recover', async (request, reply) => {
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    return send(
      reply,
      o.service.recover(request.params.leaseId, body, leaseUri(request.params.leaseId, 'recover')),
    );
  });

  app.get<LeaseParams>('/ptcl/leases/:leaseId', async (request, reply) => {
    const rec = o.service.leaseRecord(request.params.leaseId);
    if (rec === undefined) return problem(reply, new BatonError('not_found', 'no such lease'));
    const { leaseId, target, mode, status, committedEpoch, acceptedAtMs, windowEndsAtMs } = rec;
    return reply.send({
      lease_id: leaseId,
      sor_target_uri: target,
      recovery_mode: mode,
      status,
      committed_epoch: committedEpoch,
      accepted_at: formatRfc3339(acceptedAtMs),
      window_ends_at: formatRfc3339(windowEndsAtMs),
    });
  });

  app.get<LeaseParams>('/ptcl/shadow/:leaseId', async (request, reply) => {
    const shadow = o.service.shadow(request.params.leaseId);
    if (shadow === undefined) return problem(reply, new BatonError('not_found', 'no such shadow write'));
    const { leaseId, target, baseEpoch, epoch, state, digest } = shadow;
    return reply.send({
      lease_id: leaseId,
      sor_target_uri: target,
      base_epoch: baseEpoch,
      epoch,
      state,
      digest,
    });
  });

  app.post<LeaseParams>('/ptcl/escrow/:leaseId/approve', async (request, reply) => {
    if (!operator(request, reply)) return reply;
    return send(
      reply,
      o.service.approve(request.params.leaseId, leaseUri(request.params.leaseId, 'approve')),
    );
  });

  app.get('/ptcl/escrow', async (request, reply) => {
    if (!operator(request, reply)) return reply;
    // The lease does not name the forward operation (the draft has no member for it), so the human
    // who is HUMAN_ESCROW's recovery gate must see the held operation itself before approving it.
    const pending = o.service.pendingEscrows().map((e) => ({
      lease_id: e.leaseId,
      sor_target_uri: e.target,
      held_at: formatRfc3339(e.heldAtMs),
      approve_by: formatRfc3339(e.approveByMs),
      operation: o.service.leaseRecord(e.leaseId)?.operation ?? null,
    }));
    return reply.send({ pending });
  });

  app.get<{ Querystring: { after?: string; limit?: string } }>('/ptcl/audit', async (request, reply) => {
    if (!operator(request, reply)) return reply;
    const after = Number(request.query.after ?? 0);
    const limit = Math.min(Number(request.query.limit ?? 100), 1000);
    if (!Number.isSafeInteger(after) || !Number.isSafeInteger(limit) || after < 0 || limit < 1) {
      return problem(reply, new BatonError('input_invalid', 'after and limit must be non-negative integers'));
    }
    return reply.send({ entries: o.service.audit(after, limit) });
  });

  app.get('/ptcl/receipt-key', async (_request, reply) => reply.send(o.receiptJwk));

  // A body Fastify refuses before any handler runs would otherwise get Fastify's own JSON answer: no
  // receipt, nothing audited. Every answer to a leased request, recovery or approval carries a signed
  // receipt (docs/leases.md §6; draft §5 auditable rejection receipts), so such a request gets the
  // refusal the module gives any unreadable body. Any other error keeps the default handling.
  app.setErrorHandler(async (error, request, reply) => {
    const defect = transportDefect(error);
    const params = request.params as Partial<Record<'id' | 'leaseId', string>>;
    // Fastify's route URL includes the mount prefix.
    const route = request.routeOptions.url;
    if (defect === undefined || request.method !== 'POST') throw error;
    const refuse = (code: Rejection['code'], rule: Rejection['rule']): Rejection => ({
      code,
      rule,
      message: defect,
    });
    if (route === `${base}${o.collectionPath}/:id` && params.id !== undefined) {
      const body: StagedRequest = { operation: undefined, inversePayload: undefined, defect };
      return send(reply, o.service.mutate(o.targetUri(params.id), leaseHeaderBytes(request), body));
    }
    if (route === `${base}/ptcl/leases/:leaseId/recover` && params.leaseId !== undefined) {
      const uri = leaseUri(params.leaseId, 'recover');
      // The recovery order is the body: unread, it is a malformed order.
      return send(
        reply,
        o.service.refuseRequest(uri, params.leaseId, refuse('ERR_LEASE_MALFORMED', 'CRYPTOGRAPHIC_BINDING')),
      );
    }
    if (route === `${base}/ptcl/escrow/:leaseId/approve` && params.leaseId !== undefined) {
      if (!operator(request, reply)) return reply;
      const uri = leaseUri(params.leaseId, 'approve');
      return send(
        reply,
        o.service.refuseRequest(uri, params.leaseId, refuse('input_invalid', 'RESOURCE_SEMANTICS')),
      );
    }
    throw error;
  });
  return Promise.resolve();
}
