/**
 * A real reference issuer on loopback, a registered client with its own ES256 key, an issuer pin
 * built from the issuer's metadata, a Status client over the real JWKS, and (on demand) a real
 * RFC 8935 push receiver. Shared by the status-*, signals-* and issuer-* tests.
 */
import { KeyObject } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { exportJWK, generateKeyPair } from 'jose';
import { systemClock } from '../../src/core/clock.js';
import type { ForeignSigningKey } from '../../src/core/jose.js';
import type { JsonObject } from '../../src/core/json.js';
import { startIssuer, type IssuerOptions, type RunningIssuer } from '../../src/issuer/server.js';
import {
  InMemoryKeyArchive,
  InMemorySetReplay,
  MissionStatusClient,
  pinFromMetadata,
  receivePushedSet,
  remoteMissionKeys,
  type IssuerPin,
  type MissionKeySource,
  type PushAnswer,
  type VerifiedSet,
} from '../../src/missions/index.js';

export const AUDIENCE = 'https://erp.example.com';
export const CLIENT_ID = 'client_erp-recon-agent';
export const INTENT = {
  goal: 'Reconcile Q3 invoices',
  resources: ['https://erp.example.com'],
  mission_expiry: '2026-12-31T23:59:59Z',
};
export const AUTHORITY_SET: JsonObject[] = [
  { type: 'mission_resource_access', resource: 'https://erp.example.com', actions: ['invoices.read'] },
  {
    type: 'mission_resource_access',
    resource: 'https://erp.example.com',
    actions: ['journal-entries.write'],
    constraints: { max_amount_usd: 500 },
  },
];

export async function clientKey(alg: 'ES256' | 'EdDSA' = 'ES256', kid = 'client-key-1') {
  const pair = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(pair.publicKey)), kid, alg };
  const key: ForeignSigningKey = { privateKey: KeyObject.from(pair.privateKey), kid, alg };
  return { key, jwk };
}

export interface World {
  readonly issuer: RunningIssuer;
  readonly pin: IssuerPin;
  readonly key: ForeignSigningKey;
  readonly archive: InMemoryKeyArchive;
  readonly keys: MissionKeySource;
  readonly client: MissionStatusClient;
  admin(
    path: string,
    body?: unknown,
    method?: string,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  createMission(extra?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export async function startWorld(options: IssuerOptions = {}): Promise<World> {
  const issuer = await startIssuer({ retryDelaysMs: [20, 40], ...options });
  const admin: World['admin'] = async (path, body, method = body === undefined ? 'GET' : 'POST') => {
    const response = await fetch(`${issuer.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${issuer.adminToken}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const { key, jwk } = await clientKey();
  const registered = await admin('/admin/clients', { client_id: CLIENT_ID, jwks: { keys: [jwk] } });
  if (registered.status !== 201) throw new Error('client registration failed');
  const metadata = await (await fetch(`${issuer.url}/.well-known/oauth-authorization-server`)).json();
  const pin = pinFromMetadata(
    metadata,
    { issuer: issuer.origin, clientId: CLIENT_ID, keyRef: 'test:client-key-1', audience: AUDIENCE },
    { allowLoopbackHttp: true },
  );
  const archive = new InMemoryKeyArchive();
  const keys = remoteMissionKeys({ origin: pin.issuer, jwksUri: pin.jwks_uri, archive, cooldownMs: 0 });
  const client = new MissionStatusClient({ pin, clientKey: key, keys, clock: systemClock });
  return {
    issuer,
    pin,
    key,
    archive,
    keys,
    client,
    admin,
    async createMission(extra = {}) {
      const created = await admin('/admin/missions', {
        intent: INTENT,
        authority_set: AUTHORITY_SET,
        mission_expiry: '2099-12-31T23:59:59Z',
        clients: [CLIENT_ID],
        ...extra,
      });
      if (created.status !== 201) throw new Error(`mission creation failed: ${JSON.stringify(created.body)}`);
      return created.body['mission_id'] as string;
    },
    close: () => issuer.close(),
  };
}

export interface Receiver {
  readonly url: string;
  readonly bearer: string;
  readonly answers: PushAnswer[];
  readonly applied: VerifiedSet[];
  /** Resolves once `n` pushes have been answered (deadline: 10 s). */
  answered(n: number): Promise<void>;
  close(): Promise<void>;
}

/** A real RFC 8935 receiver built on receivePushedSet and an in-memory replay port. */
export async function startReceiver(world: World, audience = AUDIENCE): Promise<Receiver> {
  const bearer = 'receiver-bearer-0123456789abcdef';
  const answers: PushAnswer[] = [];
  const applied: VerifiedSet[] = [];
  const seen = new InMemorySetReplay(() => Date.now());
  const app: FastifyInstance = Fastify({ logger: false });
  app.addContentTypeParser('application/secevent+jwt', { parseAs: 'string' }, (_r, body, done) =>
    done(null, body),
  );
  app.post('/events', async (request, reply) => {
    const { answer, fresh } = await receivePushedSet(
      {
        contentType: request.headers['content-type'],
        authorization: request.headers.authorization,
        body: typeof request.body === 'string' ? request.body : '',
      },
      { keys: world.keys, expect: { issuer: world.pin.issuer, audience }, bearer, nowMs: Date.now() },
      seen,
    );
    if (fresh !== null) applied.push(fresh);
    answers.push(answer);
    return answer.status === 202 ? reply.code(202).send() : reply.code(answer.status).send(answer.body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/events`;
  const added = await world.admin('/admin/receivers', { audience, delivery: 'push', endpoint: url, bearer });
  if (added.status !== 201) throw new Error('receiver registration failed');
  return {
    url,
    bearer,
    answers,
    applied,
    async answered(n) {
      const deadline = Date.now() + 10_000;
      while (answers.length < n) {
        if (Date.now() > deadline) throw new Error(`only ${answers.length} of ${n} pushes answered`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    close: () => app.close(),
  };
}
