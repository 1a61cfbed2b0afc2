/**
 * The harness conformance world: the AOC world (occurrences service with the harness gate, the
 * sandbox provider whose effect counter is the oracle, one ManualClock) plus the reference Mission
 * issuer on 127.0.0.1:0 driven by the same clock, a registered ES256 client, an issuer pin built
 * from the issuer's metadata, the Status client as the harness's StatusFetcher, and an RFC 8935
 * receiver on loopback whose every push is answered by `baton serve`'s own push code:
 * `MissionConsumer.receivePush` (src/server/mission-consumer.ts — the handler of
 * `POST /v1/missions/signals/{issuer}`: the bearer compared with the stored digest of the pinned
 * issuer, `parseAuthenticatedPush`, the batched `applyVerifiedSignals`, its 202/400/401 answers).
 * Only the Fastify route shell around it (header reading, the 64 KiB body scope) is the runner's.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { KeyObject } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { Registry } from 'prom-client';
import { ManualClock } from '../../core/clock.js';
import { importEd25519PublicKey } from '../../core/ed25519.js';
import { BatonError } from '../../core/errors.js';
import type { ForeignSigningKey } from '../../core/jose.js';
import type { JsonObject } from '../../core/json.js';
import { startIssuer, type RunningIssuer } from '../../issuer/server.js';
import {
  InMemoryKeyArchive,
  MissionStatusClient,
  pinFromMetadata,
  remoteMissionKeys,
  type IssuerPin,
  type MissionKeySource,
  type PushAnswer,
  type StatusFetchResult,
} from '../../missions/index.js';
import { bearerDigest } from '../../missions/registration.js';
import { issuerPinDigest, PUSH_DELIVERY } from '../../missions/issuer-pin.js';
import { MissionConsumer } from '../../server/mission-consumer.js';
import { MissionMetrics } from '../../server/mission-metrics.js';
import { errorText } from './runner.js';
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
  /**
   * What the push route counted for it (`baton_sets_received_total`'s result label: applied,
   * ignored, duplicate, stream, invalid_request, authentication_failed…), or `refused`.
   */
  readonly result: string;
}

/**
 * The push route's own metrics, each push's counted result captured in the async context of the
 * request that counted it (pushes answered concurrently never see each other's).
 */
class CapturingMetrics extends MissionMetrics {
  readonly context = new AsyncLocalStorage<{ result?: string }>();

  override countSet(result: string): void {
    const slot = this.context.getStore();
    if (slot !== undefined) slot.result = result;
    super.countSet(result);
  }
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
  /** Failures of the push route's background work (a gap's Status check): each fails its case. */
  readonly backgroundErrors: string[];
  /** Resolves once every Status check the push route started in the background has finished. */
  settled(): Promise<void>;
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
  const privateText = JSON.stringify({ ...privateJwk, kid, alg: 'ES256', use: 'sig' } satisfies JWK);
  return { key, privateText };
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
  consumer: MissionConsumer,
  metrics: CapturingMetrics,
  pin: IssuerPin,
  pushes: Pushed[],
): Promise<Receiver> {
  const app = Fastify({ logger: false });
  // Any body reaches the handler as text, whatever its Content-Type, as in `baton serve`'s route
  // scope: receivePush answers a wrong media type in RFC 8935's form itself.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_r, body, done) => done(null, body));
  app.post('/signals', async (request, reply) => {
    const slot: { result?: string } = {};
    const answer = await metrics.context.run(slot, () =>
      consumer.receivePush(pin.issuer, {
        contentType: request.headers['content-type'],
        authorization: request.headers.authorization,
        body: typeof request.body === 'string' ? request.body : '',
      }),
    );
    pushes.push({ answer, result: slot.result ?? (answer.status === 202 ? 'accepted' : 'refused') });
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
    const { key: clientKey, privateText } = await registerClient(issuer, env.secrets);
    const metadata: unknown = await (
      await fetch(`${issuer.url}/.well-known/oauth-authorization-server`)
    ).json();
    const pin = pinFromMetadata(
      metadata,
      {
        issuer: issuer.origin,
        clientId: CLIENT_ID,
        keyRef: 'env:BATON_CONFORMANCE_CLIENT_KEY',
        audience: AUDIENCE,
        stream: { delivery: PUSH_DELIVERY },
      },
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
    const backgroundErrors: string[] = [];
    // The issuer pinned in the store with the push bearer's digest, as `POST /v1/missions/issuers`
    // does; the consumer reads it per push. Its client key reference resolves to the runner's key
    // (in memory, never the environment) for the Status check a version gap starts.
    const metrics = new CapturingMetrics(new Registry());
    const consumer = new MissionConsumer({
      engine: env.engine,
      harness: env.harness,
      clock,
      metrics,
      // As the runner's own key source: a rotated key is fetched at once (A7 rotation cases).
      jwksCooldownMs: 0,
      resolveSecret: (ref) => {
        if (ref !== pin.client.key_ref)
          throw new BatonError('key_invalid', `the conformance runner resolves only ${pin.client.key_ref}`);
        return privateText;
      },
      onError: (error, what) => {
        backgroundErrors.push(`${what}: ${errorText(error)}`);
      },
    });
    // Observed, not changed: the Status checks the route starts in the background on a version gap
    // are tracked so a case can wait until they have applied (`settled`) before judging the view.
    const inflight = new Set<Promise<unknown>>();
    const check = consumer.check.bind(consumer);
    consumer.check = (origin, missionId) => {
      const p = check(origin, missionId);
      inflight.add(p);
      void p.then(
        () => inflight.delete(p),
        () => inflight.delete(p),
      );
      return p;
    };
    await consumer.registry.register(
      { pin, pinDigest: issuerPinDigest(pin), bearerDigest: bearerDigest(streamBearer), pollBearerRef: null },
      'conformance',
      clock.wallMs(),
    );
    receiver = await startSetReceiver(consumer, metrics, pin, pushes);
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
      backgroundErrors,
      settled: async () => {
        while (inflight.size > 0) await Promise.allSettled([...inflight]);
      },
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
