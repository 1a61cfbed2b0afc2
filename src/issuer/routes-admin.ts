/**
 * The reference issuer's admin API (tests and the demo; bearer token printed at start): register
 * clients (administrators among them) and SET receivers, create missions (no consent UI: the approval event is this call),
 * drive every lifecycle operation, narrow authority, rotate and retire keys, read the retired-key
 * archive, arm faults and read the delivery log.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { JWK } from 'jose';
import type { JsonObject, JsonValue } from '../core/json.js';
import { parseRfc3339 } from '../core/time.js';
import { ADMIN_OPERATIONS, isNarrowing, type IssuedMission, type LifecycleOperation } from './model.js';
import { secondsToRfc3339 } from './sign.js';
import type { IssuerState } from './state.js';

function json(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'application/json')
    .header('cache-control', 'no-store')
    .send(JSON.stringify(body));
}

const bad = (reply: FastifyReply, description: string): FastifyReply =>
  json(reply, 400, { error: 'invalid_request', error_description: description });

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string' && v !== '')
    ? (value as string[])
    : undefined;
}

/** A role's client_id: absent or null ⇒ null (nobody), a non-empty string ⇒ it, else undefined. */
function optionalClientId(value: unknown): string | null | undefined {
  if (value === undefined || value === null) return null;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function missionView(m: IssuedMission): JsonObject {
  return {
    mission_id: m.id,
    state: m.state,
    version: m.version,
    intent_hash: m.intentHash,
    authority_hash: m.authorityHash,
    mission_expiry: secondsToRfc3339(m.missionExpiryMs),
    audiences: [...m.audiences],
    clients: [...m.clients],
    subject_client: m.subjectClient,
    approver_client: m.approverClient,
  };
}

function adminCheck(token: string): (request: FastifyRequest) => boolean {
  const want = createHash('sha256').update(token).digest();
  return (request) => {
    const header = request.headers.authorization;
    if (typeof header !== 'string' || !header.startsWith('Bearer ')) return false;
    return timingSafeEqual(createHash('sha256').update(header.slice(7)).digest(), want);
  };
}

function resourcesOf(authoritySet: readonly JsonValue[]): string[] {
  return [
    ...new Set(
      authoritySet.flatMap((e) => (isObject(e) && typeof e['resource'] === 'string' ? [e['resource']] : [])),
    ),
  ];
}

function registerSetup(app: FastifyInstance, state: IssuerState): void {
  app.post('/admin/clients', async (request, reply) => {
    const body = request.body;
    if (
      !isObject(body) ||
      typeof body['client_id'] !== 'string' ||
      !isObject(body['jwks']) ||
      !Array.isArray(body['jwks']['keys'])
    ) {
      return bad(reply, 'client_id and jwks {keys} are required');
    }
    const administrator = body['administrator'] ?? false;
    if (typeof administrator !== 'boolean') return bad(reply, 'administrator is a boolean');
    state.clients.register({
      clientId: body['client_id'],
      jwks: body['jwks']['keys'] as unknown as JWK[],
      administrator,
    });
    return json(reply, 201, { client_id: body['client_id'], administrator });
  });
  app.post('/admin/receivers', async (request, reply) => {
    const b = request.body;
    if (
      !isObject(b) ||
      typeof b['audience'] !== 'string' ||
      (b['delivery'] !== 'push' && b['delivery'] !== 'poll') ||
      typeof b['bearer'] !== 'string' ||
      b['bearer'].length < 16
    ) {
      return bad(reply, 'audience, delivery (push|poll) and a bearer of at least 16 characters are required');
    }
    if (b['delivery'] === 'push' && (typeof b['endpoint'] !== 'string' || !URL.canParse(b['endpoint'])))
      return bad(reply, 'push needs an endpoint URL');
    const receiver = state.delivery.add({
      audience: b['audience'],
      delivery: b['delivery'],
      endpoint: typeof b['endpoint'] === 'string' ? b['endpoint'] : null,
      bearer: b['bearer'],
    });
    return json(reply, 201, { receiver_id: receiver.id });
  });
}

function registerMissions(app: FastifyInstance, state: IssuerState): void {
  app.post('/admin/missions', async (request, reply) => {
    const b = request.body;
    if (
      !isObject(b) ||
      !isObject(b['intent']) ||
      !Array.isArray(b['authority_set']) ||
      typeof b['mission_expiry'] !== 'string'
    ) {
      return bad(reply, 'intent (object), authority_set (array) and mission_expiry (RFC 3339) are required');
    }
    const clients = strings(b['clients']);
    if (clients === undefined || clients.length === 0)
      return bad(reply, 'clients is a non-empty array of client_ids');
    let expiry: number;
    try {
      expiry = parseRfc3339(b['mission_expiry']);
    } catch {
      return bad(reply, 'mission_expiry is not an RFC 3339 date-time');
    }
    const audiences =
      b['audiences'] === undefined ? resourcesOf(b['authority_set']) : strings(b['audiences']);
    if (audiences === undefined) return bad(reply, 'audiences is an array of strings');
    const subjectClient = optionalClientId(b['subject_client']);
    const approverClient = optionalClientId(b['approver_client']);
    if (subjectClient === undefined || approverClient === undefined)
      return bad(reply, 'subject_client and approver_client are client_ids when given');
    const mission = await state.create({
      intent: b['intent'],
      authoritySet: b['authority_set'],
      missionExpiryMs: expiry,
      clients,
      subjectClient,
      approverClient,
      audiences,
    });
    return json(reply, 201, missionView(mission));
  });
  app.get<{ Params: { id: string } }>('/admin/missions/:id', async (request, reply) => {
    const mission = await state.get(request.params.id);
    return mission === undefined
      ? json(reply, 404, { error: 'not_found' })
      : json(reply, 200, missionView(mission));
  });
  app.post<{ Params: { id: string; op: string } }>('/admin/missions/:id/:op', async (request, reply) => {
    const mission = await state.get(request.params.id);
    if (mission === undefined) return json(reply, 404, { error: 'not_found' });
    const b = isObject(request.body) ? request.body : {};
    const { op } = request.params;
    if (op === 'narrow') {
      const set = b['authority_set'];
      if (!Array.isArray(set) || !isNarrowing(mission.authoritySet, set))
        return bad(reply, 'authority_set must narrow the current one');
      if (mission.state !== 'active' && mission.state !== 'suspended')
        return json(reply, 409, { error: 'conflict' });
      await state.narrow(mission, set);
      return json(reply, 200, missionView(mission));
    }
    if (!(ADMIN_OPERATIONS as readonly string[]).includes(op))
      return json(reply, 404, { error: 'not_found' });
    const reason = typeof b['reason'] === 'string' ? b['reason'].slice(0, 1024) : null;
    const verdict = await state.operate(mission, op as LifecycleOperation, reason);
    if (verdict.kind === 'conflict')
      return json(reply, 409, {
        error: 'conflict',
        error_description: `${op} is not legal from ${mission.state}`,
      });
    return json(reply, 200, { ...missionView(mission), changed: verdict.kind === 'apply' });
  });
}

function registerOps(app: FastifyInstance, state: IssuerState): void {
  app.post('/admin/keys/rotate', async (request, reply) => {
    const b = isObject(request.body) ? request.body : {};
    const alg =
      b['alg'] === 'EdDSA' ? 'EdDSA' : b['alg'] === undefined || b['alg'] === 'ES256' ? 'ES256' : undefined;
    if (alg === undefined) return bad(reply, 'alg is ES256 or EdDSA');
    const key = await state.keys.rotate(b['retire_previous'] === true, alg);
    return json(reply, 200, { kid: key.kid });
  });
  app.post('/admin/keys/retire', async (request, reply) => {
    const b = isObject(request.body) ? request.body : {};
    if (typeof b['kid'] !== 'string') return bad(reply, 'kid is required');
    try {
      state.keys.retire(b['kid']);
    } catch {
      return json(reply, 409, { error: 'conflict', error_description: 'not a published, non-current key' });
    }
    return json(reply, 200, { retired: b['kid'] });
  });
  app.get('/admin/keys/archive', (_request, reply) => json(reply, 200, state.keys.archive()));
  app.post('/admin/faults', async (request, reply) => {
    const b = isObject(request.body) ? request.body : {};
    const count =
      b['count'] === 'always' ? Infinity : typeof b['count'] === 'number' && b['count'] >= 1 ? b['count'] : 1;
    const status = strings(b['status'] ?? []);
    const sets = strings(b['sets'] ?? []);
    if (status === undefined || sets === undefined)
      return bad(reply, 'status and sets are arrays of fault names');
    const unknown = [
      ...status.filter((f) => !state.statusFaults.isKnown(f)),
      ...sets.filter((f) => !state.setFaults.isKnown(f)),
    ];
    if (unknown.length > 0) return bad(reply, `unknown faults: ${unknown.join(', ').slice(0, 200)}`);
    for (const f of status) if (state.statusFaults.isKnown(f)) state.statusFaults.arm(f, count);
    for (const f of sets) if (state.setFaults.isKnown(f)) state.setFaults.arm(f, count);
    return json(reply, 200, { armed: { status, sets, count: Number.isFinite(count) ? count : 'always' } });
  });
  app.delete('/admin/faults', async (_request, reply) => {
    state.statusFaults.clear();
    state.setFaults.clear();
    return json(reply, 200, { cleared: true });
  });
  app.get('/admin/deliveries', async (_request, reply) => {
    await state.delivery.idle();
    return json(reply, 200, { deliveries: state.delivery.log });
  });
}

export function registerAdminRoutes(app: FastifyInstance, state: IssuerState, adminToken: string): void {
  const isAdmin = adminCheck(adminToken);
  app.register((scope, _options, done) => {
    scope.addHook('onRequest', async (request, reply) => {
      if (!isAdmin(request)) return json(reply, 401, { error: 'unauthorized' });
      return undefined;
    });
    registerSetup(scope, state);
    registerMissions(scope, state);
    registerOps(scope, state);
    done();
  });
}
