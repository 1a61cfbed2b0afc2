/**
 * `baton demo --missions` (issue 11 §6): an agent works under a Mission issued by the reference
 * issuer (src/issuer, labelled for development). Baton pins the issuer and receives its lifecycle
 * SETs by RFC 8935 push on its real HTTP route. The agent pays one invoice, dispatches a second
 * (an occurrence reserved, not yet entered) and queues two more. The issuer revokes the Mission:
 * the pushed SET suppresses the queued payments at once, and the dispatched one is refused at
 * provider entry (`mission_not_active`, committed then refused, C-A25). The sandbox's effect
 * counter is the oracle: nothing after the revocation; every stop carries signed Harness Evidence.
 */
import { KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { systemClock } from '../../core/clock.js';
import { isBatonError } from '../../core/errors.js';
import { startIssuer, type RunningIssuer } from '../../issuer/server.js';
import { pinFromMetadata, PUSH_DELIVERY, readIssuerRegistration, workSubject } from '../../missions/index.js';
import {
  createSandboxProvider,
  deployProfile,
  HttpProviderAdapter,
  loadProfile,
  NO_KEYS,
  recordSend,
  sandboxDeployment,
  sandboxEntryUrl,
  type SandboxProvider,
} from '../../providers/index.js';
import { buildServer } from '../../server/app.js';
import { Metrics } from '../../server/metrics.js';
import { wireMissionConsumer } from '../../server/mission-consumer.js';
import { openOccurrencesOnSqlite, type OccurrencesOnSqlite } from '../../store/index.js';
import { DEMO_DOMAIN } from './domain.js';
import { AMOUNT, AUTHORITY, invoiceRequest, LINEAGE } from './shared.js';

const AUDIENCE = 'https://baton.demo.example';
const CLIENT_ID = 'baton-demo';
const BEARER_BYTES = 24;

interface Stage {
  readonly opened: OccurrencesOnSqlite;
  readonly sandbox: SandboxProvider;
  readonly issuer: RunningIssuer;
  readonly baton: ReturnType<typeof buildServer>;
  readonly origin: string;
  readonly profile: { profileId: string; profileVersion: string };
  /** Closes all of the above, the last opened first. */
  readonly close: () => Promise<void>;
}

async function admin(issuer: RunningIssuer, path: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(`${issuer.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${issuer.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const answer = (await r.json()) as Record<string, unknown>;
  if (r.status >= 300) throw new Error(`issuer ${path} answered ${r.status}`);
  return answer;
}

/**
 * Everything the demo opens, each registered with `closers` as soon as it exists, so that a step
 * failing part way closes what came before it (nothing is left listening) — the store first.
 */
async function setUp(dir: string, print: (l: string) => void): Promise<Stage> {
  const closers: (() => Promise<unknown>)[] = [];
  // Every closer runs even when one throws; the first failure is rethrown after the last.
  const close = async (): Promise<void> => {
    const failures: unknown[] = [];
    for (const c of closers.splice(0).reverse()) {
      try {
        await c();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw failures[0];
  };
  try {
    return await stageUp(dir, print, closers, close);
  } catch (error) {
    await close().catch(() => undefined); // the setup failure is the one to report
    throw error;
  }
}

async function stageUp(
  dir: string,
  print: (l: string) => void,
  closers: (() => Promise<unknown>)[],
  close: () => Promise<void>,
): Promise<Stage> {
  const opened = await openOccurrencesOnSqlite(join(dir, 'baton.db'));
  closers.push(() => opened.close());
  const sandbox = createSandboxProvider({ signing: 'ed25519' });
  closers.push(() => sandbox.close());
  await sandbox.listen(0, '127.0.0.1');
  await opened.service.configureDomain(DEMO_DOMAIN);
  const p = await opened.service.registerProfile(
    deployProfile(loadProfile('sandbox-payments-ed25519'), sandboxDeployment(sandbox)),
  );
  await opened.service.createAuthority({ id: AUTHORITY, unit: 'EUR-cents', total: 1_000_000 });
  const metrics = new Metrics();
  const missions = wireMissionConsumer({
    engine: opened.engine,
    harness: opened.harness,
    clock: systemClock,
    metrics: metrics.missions,
    secretScope: { dirs: [dir] }, // Baton's client key, written below
  });
  const baton = buildServer({
    engine: opened.engine,
    service: opened.service,
    harness: opened.harness,
    metrics,
    missions,
  });
  closers.push(() => baton.close());
  await baton.listen({ port: 0, host: '127.0.0.1' });
  const batonUrl = `http://127.0.0.1:${(baton.server.address() as AddressInfo).port}`;
  const issuer = await startIssuer({ retryDelaysMs: [50, 200] });
  closers.push(() => issuer.close());
  print(`reference Mission issuer (${issuer.label}) at ${issuer.url}; Baton at ${batonUrl}`);
  // Baton's client key at the issuer (private_key_jwt), and the pin built from its metadata.
  const pair = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'baton-demo-1', alg: 'ES256' };
  await admin(issuer, '/admin/clients', { client_id: CLIENT_ID, jwks: { keys: [jwk] } });
  const keyFile = join(dir, 'client.jwk.json');
  writeFileSync(
    keyFile,
    JSON.stringify({ ...KeyObject.from(pair.privateKey).export({ format: 'jwk' }), kid: jwk.kid }),
    {
      mode: 0o600,
    },
  );
  const metadata: unknown = await (
    await fetch(`${issuer.url}/.well-known/oauth-authorization-server`)
  ).json();
  const pin = pinFromMetadata(
    metadata,
    {
      issuer: issuer.origin,
      clientId: CLIENT_ID,
      keyRef: `file:${keyFile}`,
      audience: AUDIENCE,
      stream: { delivery: PUSH_DELIVERY },
    },
    { allowLoopbackHttp: true },
  );
  const bearer = Buffer.from(crypto.getRandomValues(new Uint8Array(BEARER_BYTES))).toString('base64url');
  const endpoint = `${batonUrl}/v1/missions/signals/${encodeURIComponent(pin.issuer)}`;
  await admin(issuer, '/admin/receivers', { audience: AUDIENCE, delivery: 'push', endpoint, bearer });
  await missions.registry.register(readIssuerRegistration({ pin, pushBearer: bearer }), 'demo', Date.now());
  print(`Baton pinned the issuer (SETs by RFC 8935 push to ${endpoint})`);
  return {
    opened,
    sandbox,
    issuer,
    baton,
    origin: pin.issuer,
    profile: { profileId: p.id, profileVersion: p.version },
    close,
  };
}

async function until(probe: () => Promise<boolean>, what: string, stop?: AbortSignal): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await probe())) {
    stop?.throwIfAborted();
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function story(s: Stage, print: (l: string) => void, stop?: AbortSignal): Promise<boolean> {
  stop?.throwIfAborted();
  const { harness, service } = s.opened;
  const created = await admin(s.issuer, '/admin/missions', {
    intent: {
      goal: 'Pay the approved Q3 invoices',
      resources: [AUDIENCE],
      mission_expiry: '2099-12-31T23:59:59Z',
    },
    authority_set: [{ type: 'mission_resource_access', resource: AUDIENCE, actions: ['payments.create'] }],
    mission_expiry: '2099-12-31T23:59:59Z',
    clients: [CLIENT_ID],
  });
  const mission = String(created['mission_id']);
  await until(
    async () => (await harness.getView(s.origin, mission))?.state === 'active',
    'the approval SET',
    stop,
  );
  print(`mission ${mission} approved: SET v1 pushed, Baton's view is active`);
  const { credential, generation } = await service.takeover({ lineage: LINEAGE });
  const binding = { mission_id: mission, mission_origin: s.origin, stop_policy: 'baton-default@1' };
  const items: string[] = [];
  for (const invoice of ['invoice-1', 'invoice-2', 'invoice-3', 'invoice-4']) {
    stop?.throwIfAborted();
    const item = await harness.createItem(
      {
        kind: 'queue_item',
        action_class: 'consequential_write',
        lineage: LINEAGE,
        mission_binding: binding,
        idempotency_key: invoice,
      },
      'demo-agent',
    );
    items.push(item.id);
  }
  print(`agent queued 4 payments (${items.join(', ')})`);
  const adapter = new HttpProviderAdapter(
    (await service.getProfile(s.profile.profileId, s.profile.profileVersion)).document,
    {
      entryUrl: sandboxEntryUrl(s.sandbox.url),
      // Ed25519 answers verify against the key the deployed profile pins: no secret needed.
      keys: NO_KEYS,
    },
  );
  const createFor = async (i: number) =>
    service.create({
      credential,
      creationKey: `invoice-${i + 1}`,
      provider: s.profile,
      request: invoiceRequest(`invoice-${i + 1}`),
      authority: { id: AUTHORITY, amount: AMOUNT },
      workItemId: items[i]!,
    });
  stop?.throwIfAborted();
  await harness.dispatch(items[0]!, 'demo-agent', generation);
  const first = await createFor(0);
  const sent = await recordSend(
    service,
    await adapter.send(await service.enter({ credential, occurrenceId: first.occurrence.id })),
  );
  print(`invoice-1: dispatched, entered, paid (${sent.occurrence.phase}/${sent.occurrence.outcome})`);
  await harness.dispatch(items[1]!, 'demo-agent', generation);
  const second = await createFor(1);
  print(`invoice-2: dispatched, occurrence ${second.occurrence.id} reserved — not yet sent`);
  stop?.throwIfAborted();
  const effectsBefore = s.sandbox.effects().length;
  await admin(s.issuer, `/admin/missions/${mission}/revoke`, { reason: 'user_cancelled' });
  await until(
    async () => (await harness.getView(s.origin, mission))?.state === 'revoked',
    'the revocation SET',
    stop,
  );
  print('issuer revoked the mission: SET v2 pushed; Baton answered 202 after its COMMIT');
  for (const id of items.slice(2)) print(`${id}: ${(await harness.getItem(id)).state}`);
  let refusedAtEntry = false;
  try {
    await service.enter({ credential, occurrenceId: second.occurrence.id });
  } catch (error) {
    if (!isBatonError(error, 'mission_not_active')) throw error;
    refusedAtEntry = true;
    print(
      `invoice-2: enter refused — ${error.code} (the stop was committed first; the provider was never called)`,
    );
  }
  const effectsAfter = s.sandbox.effects().length - effectsBefore;
  let evidenced = 0;
  for (const id of items.slice(1)) {
    const events = await harness.events(workSubject(id));
    if (
      events.some(
        (e) => e.type === 'harness_evidence' && (e.body as { decision?: string }).decision !== 'continue',
      )
    )
      evidenced += 1;
  }
  const queued = await Promise.all(items.slice(2).map(async (id) => (await harness.getItem(id)).state));
  print('— summary —');
  print(`provider effects before the revocation: ${effectsBefore}; after it: ${effectsAfter}`);
  print(`queued payments suppressed: ${queued.filter((q) => q === 'suppressed').length} of 2`);
  print(`dispatched payment refused at entry: ${refusedAtEntry ? 'yes (mission_not_active)' : 'NO'}`);
  print(`stops with signed Harness Evidence: ${evidenced} of 3`);
  const ok =
    effectsBefore === 1 &&
    effectsAfter === 0 &&
    refusedAtEntry &&
    evidenced === 3 &&
    queued.every((q) => q === 'suppressed');
  print(
    ok
      ? 'demo facts hold: nothing paid after the revocation, every stop evidenced'
      : 'demo facts DO NOT hold',
  );
  return ok;
}

/**
 * `stop`, aborted by a first SIGINT/SIGTERM, ends the story at its next step; the servers are
 * closed and the temporary folder (store, Baton's client key) removed before its reason is thrown.
 */
export async function runMissionsDemo(o: {
  readonly print: (line: string) => void;
  readonly stop?: AbortSignal;
}): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-demo-missions-'));
  let stage: Stage | undefined;
  try {
    stage = await setUp(dir, o.print);
    return await story(stage, o.print, o.stop);
  } finally {
    await stage?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
