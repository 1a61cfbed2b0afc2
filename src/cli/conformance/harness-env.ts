/**
 * The harness conformance world: the AOC world (occurrences service with the harness gate, the
 * sandbox provider whose effect counter is the oracle, one ManualClock) plus the reference Mission
 * issuer on 127.0.0.1:0 driven by the same clock, a registered ES256 client, an issuer pin built
 * from the issuer's metadata, the Status client as the harness's StatusFetcher, and an RFC 8935
 * receiver on loopback that verifies with `parsePushedSet` and applies through the harness
 * (replay, ordering and stops are the harness's own, C-A18). The receiver is the runner's, not
 * `baton serve`'s route: the suite tests the service layer the route calls.
 */
import { KeyObject } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { exportJWK, generateKeyPair } from 'jose';
import { ManualClock } from '../../core/clock.js';
import { importEd25519PublicKey } from '../../core/ed25519.js';
import { BatonError } from '../../core/errors.js';
import type { ForeignSigningKey } from '../../core/jose.js';
import type { JsonObject } from '../../core/json.js';
import { startIssuer, type RunningIssuer } from '../../issuer/server.js';
import {
  InMemoryKeyArchive,
  MissionStatusClient,
  parsePushedSet,
  pinFromMetadata,
  remoteMissionKeys,
  type IssuerPin,
  type MissionKeySource,
  type PushAnswer,
  type StatusFetchResult,
} from '../../missions/index.js';
import { openEnv, type ConformanceStore, type Env } from './env.js';

export const AUDIENCE = 'https://erp.example.com';
export const CLIENT_ID = 'client_baton-conformance';
export const INTENT: JsonObject = {
  goal: 'Reconcile Q3 invoices',
  resources: ['https://erp.example.com'],
  mission_expiry: '2026-12-31T23:59:59Z',
};
export const AUTHORITY_SET: JsonObject[] = [
  { type: 'mission_resource_access', resource: AUDIENCE, actions: ['invoices.read'] },
  {
    type: 'mission_resource_access',
    resource: AUDIENCE,
    actions: ['journal-entries.write'],
    constraints: { max_amount_usd: 500 },
  },
];

export interface Pushed {
  readonly answer: PushAnswer;
  readonly result: string;
}

export interface HarnessEnv extends Env {
  readonly issuer: RunningIssuer;
  readonly pin: IssuerPin;
  readonly keys: Env['keys'];
  readonly missionKeys: MissionKeySource;
  readonly archive: InMemoryKeyArchive;
  readonly status: MissionStatusClient;
  readonly clientKey: ForeignSigningKey;
  readonly receiverUrl: string;
  readonly streamBearer: string;
  /** Every push the receiver answered, in order, with what the harness made of it. */
  readonly pushes: Pushed[];
  /** Every Status fetch the harness made (A3.1 step 3), with its result kind and reason. */
  readonly fetches: StatusFetchResult[];
  readonly domainPublicKey: KeyObject;
  issuerAdmin(path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
}

async function registerClient(issuer: RunningIssuer, secrets: Set<string>) {
  const pair = await generateKeyPair('ES256', { extractable: true });
  const kid = 'conformance-client-1';
  const jwk = { ...(await exportJWK(pair.publicKey)), kid, alg: 'ES256' };
  const privateJwk = await exportJWK(pair.privateKey);
  if (typeof privateJwk.d === 'string') secrets.add(privateJwk.d);
  const key: ForeignSigningKey = { privateKey: KeyObject.from(pair.privateKey), kid, alg: 'ES256' };
  const res = await admin(issuer, '/admin/clients', { client_id: CLIENT_ID, jwks: { keys: [jwk] } });
  if (res.status !== 201) throw new BatonError('internal', 'the reference issuer refused the client');
  return key;
}

async function admin(
  issuer: RunningIssuer,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${issuer.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${issuer.adminToken}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

interface Receiver {
  readonly app: FastifyInstance;
  readonly url: string;
}

async function startSetReceiver(
  env: Env,
  pin: IssuerPin,
  keys: MissionKeySource,
  bearer: string,
  pushes: Pushed[],
): Promise<Receiver> {
  const app = Fastify({ logger: false });
  app.addContentTypeParser('application/secevent+jwt', { parseAs: 'string' }, (_r, body, done) =>
    done(null, body),
  );
  app.post('/signals', async (request, reply) => {
    const parsed = await parsePushedSet(
      {
        contentType: request.headers['content-type'],
        authorization: request.headers.authorization,
        body: typeof request.body === 'string' ? request.body : '',
      },
      { keys, expect: { issuer: pin.issuer, audience: pin.audience }, bearer, nowMs: env.clock.wallMs() },
    );
    let answer: PushAnswer = { status: 202 };
    let result = 'stream_event';
    if (!parsed.ok) {
      answer = parsed.answer;
      result = 'refused';
    } else if (parsed.set.kind === 'lifecycle') {
      // 202 only after the harness's COMMIT (A3.4 step 7); a replay with other bytes is 400 (C-A18).
      result = (await env.harness.applyVerifiedSignal(parsed.set.signal)).result;
      if (result === 'replay_conflict')
        answer = {
          status: 400,
          body: { err: 'invalid_request', description: 'jti already received with other bytes' },
        };
    }
    pushes.push({ answer, result });
    return answer.status === 202 ? reply.code(202).send() : reply.code(answer.status).send(answer.body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/signals` };
}

export async function openHarnessEnv(dir: string, store: ConformanceStore): Promise<HarnessEnv> {
  const clock = new ManualClock(Date.now());
  const fetches: StatusFetchResult[] = [];
  const late: { client?: MissionStatusClient; env?: Env } = {};
  // The harness's Status fetch (A3.1 step 3): only a verified answer moves a view; anything else
  // is unknown, recorded, and answered mission_status_unavailable so the check pauses (A3.5).
  const fetchStatus = async (origin: string, missionId: string) => {
    const result = await late.client!.check(missionId);
    fetches.push(result);
    if (result.kind === 'verified') return result.status;
    if (result.reason === 'refused')
      await late.env!.harness.recordStatusRefused(
        origin,
        missionId,
        result.refusal?.check ?? 'refused',
        'refused',
      );
    throw new BatonError('mission_status_unavailable', `Mission Status unknown: ${result.reason}`);
  };
  const env = await openEnv(dir, store, { fetchStatus }, clock);
  late.env = env;
  try {
    return await extend(env, clock, fetches, late);
  } catch (error) {
    await env.close();
    throw error;
  }
}

async function extend(
  env: Env,
  clock: ManualClock,
  fetches: StatusFetchResult[],
  late: { client?: MissionStatusClient },
): Promise<HarnessEnv> {
  const issuer = await startIssuer({
    port: 0,
    host: '127.0.0.1',
    clock,
    retryDelaysMs: [20, 40],
    // expires_at = iat + 20 s: inside mission_max_stale_seconds (60 s), so A7#8's edges are the issuer's.
    relianceSec: 20,
  });
  const closeAll = async () => {
    await receiver?.app.close();
    await issuer.close();
    await env.close();
  };
  let receiver: Receiver | undefined;
  try {
    env.secrets.add(issuer.adminToken);
    const clientKey = await registerClient(issuer, env.secrets);
    const metadata: unknown = await (
      await fetch(`${issuer.url}/.well-known/oauth-authorization-server`)
    ).json();
    const pin = pinFromMetadata(
      metadata,
      { issuer: issuer.origin, clientId: CLIENT_ID, keyRef: 'conformance:client-1', audience: AUDIENCE },
      { allowLoopbackHttp: true },
    );
    const archive = new InMemoryKeyArchive();
    const missionKeys = remoteMissionKeys({
      origin: pin.issuer,
      jwksUri: pin.jwks_uri,
      archive,
      cooldownMs: 0,
    });
    const status = new MissionStatusClient({ pin, clientKey, keys: missionKeys, clock });
    late.client = status;
    const streamBearer = `stream-${issuer.adminToken.slice(0, 8)}-${Date.now().toString(36)}-bearer`;
    env.secrets.add(streamBearer);
    const pushes: Pushed[] = [];
    receiver = await startSetReceiver(env, pin, missionKeys, streamBearer, pushes);
    const added = await admin(issuer, '/admin/receivers', {
      audience: AUDIENCE,
      delivery: 'push',
      endpoint: receiver.url,
      bearer: streamBearer,
    });
    if (added.status !== 201) throw new BatonError('internal', 'the reference issuer refused the receiver');
    const domain = await env.svc.getDomain();
    const domainPublicKey = importEd25519PublicKey({ raw: Buffer.from(domain.publicKey, 'base64url') });
    return {
      ...env,
      issuer,
      pin,
      missionKeys,
      archive,
      status,
      clientKey,
      receiverUrl: receiver.url,
      streamBearer,
      pushes,
      fetches,
      domainPublicKey,
      issuerAdmin: (path, body) => admin(issuer, path, body),
      close: closeAll,
    };
  } catch (error) {
    await receiver?.app.close();
    await issuer.close();
    throw error;
  }
}
