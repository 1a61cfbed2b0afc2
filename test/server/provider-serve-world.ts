/**
 * A real world for real providers' webhooks in serve (issue 13 §1, §7): a `baton serve` CHILD
 * PROCESS (SQLite file or one PostgreSQL schema) holding its secrets through `--credentials`
 * (environment references only), and the Stripe-compatible sandbox (`baton sandbox --flavor
 * stripe`, here in-process: the same server) whose webhooks point at serve's receiver. Labelled
 * honestly: a compatible local server and the official `stripe` client, not Stripe's servers.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import Stripe from 'stripe';
import type { JsonObject } from '../../src/core/json.js';
import type { EntryTicket, ProviderProfile } from '../../src/occurrences/index.js';
import { deployProfile, loadProfile } from '../../src/providers/index.js';
import { createStripeSandbox, type StripeSandbox } from '../../src/providers/sandbox/stripe/index.js';
import { domainConfig } from '../occurrences/helpers.js';
import { spawnNode, type WatchedChild } from '../support/child.js';
import { repoRoot } from '../support/paths.js';
import { request, type Answer } from './helpers.js';

export type EngineName = 'sqlite' | 'postgres';

const fromTs = import.meta.url.endsWith('.ts');
const mainScript = fileURLToPath(new URL(`../../src/cli/main.${fromTs ? 'ts' : 'js'}`, import.meta.url));

/** The secret key may go to the sandbox the profile is deployed to; webhook secrets go nowhere. */
function credentialsFor(sandboxOrigin: string) {
  return {
    format: 'baton.credentials/1',
    credentials: {
      'stripe-secret-key': { env: 'STRIPE_SECRET_KEY', origins: [sandboxOrigin] },
      'stripe-webhook-secret': { env: 'STRIPE_WEBHOOK_SECRET', origins: [] },
      'standard-webhooks-secret': { env: 'STANDARD_WEBHOOKS_SECRET', origins: [] },
    },
  };
}

/**
 * A free loopback port for the delivering sandbox: serve's credentials must name the sandbox's
 * origin before serve starts, and the sandbox must know serve's URL (its webhook target) when it
 * is made, so its port is chosen first and it listens on it after serve is up.
 */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ServeWorld {
  readonly url: string;
  readonly child: WatchedChild;
  readonly admin: string;
  /** Pays and delivers its Stripe-signed webhooks to serve. */
  readonly stripeSandbox: StripeSandbox;
  /** Pays without delivering: its events are captured and delivered by the test. */
  readonly quietSandbox: StripeSandbox;
  readonly stripe: Stripe;
  readonly quiet: Stripe;
  readonly webhookSecret: string;
  /** `whsec_…` of the Standard Webhooks v1 profile. */
  readonly standardSecret: string;
  /** The Stripe PaymentIntents profile as registered (deployed: its own version suffix). */
  readonly stripeProfile: ProviderProfile;
  credential: string;
}

function stripeClient(sandbox: StripeSandbox): Stripe {
  const { port } = new URL(sandbox.url);
  return new Stripe(sandbox.secretKey, { host: '127.0.0.1', port: Number(port), protocol: 'http' });
}

async function spawnServe(
  t: TestContext,
  storeArgs: string[],
  env: NodeJS.ProcessEnv,
  dir: string,
  sandboxOrigin: string,
) {
  const credentials = join(dir, 'credentials.json');
  writeFileSync(credentials, JSON.stringify(credentialsFor(sandboxOrigin)));
  const args = [...storeArgs, '--port', '0', '--log-level', 'silent', '--no-console', '--json'];
  const argv = [
    ...(fromTs ? ['--import', 'tsx'] : []),
    mainScript,
    'serve',
    ...args,
    '--credentials',
    credentials,
  ];
  const child = spawnNode('baton serve', argv, { cwd: repoRoot, env: { ...process.env, ...env } });
  t.after(() => child.kill());
  const m = await child.waitForLine(/^\{.*"url".*\}$/, 'the --json ready line');
  const ready = JSON.parse(m[0]) as { url: string; adminToken: string | null };
  assert.ok(ready.adminToken !== null, 'a fresh store prints its admin token');
  return { child, url: ready.url, admin: ready.adminToken };
}

export async function openServeWorld(
  t: TestContext,
  engine: EngineName,
  postgresUrl?: string,
): Promise<ServeWorld> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-provider-serve-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const secretKey = `sk_test_${randomBytes(12).toString('hex')}`;
  const webhookSecret = `whsec_${randomBytes(24).toString('hex')}`;
  const standardSecret = `whsec_${randomBytes(32).toString('base64')}`;
  const env = {
    STRIPE_SECRET_KEY: secretKey,
    STRIPE_WEBHOOK_SECRET: webhookSecret,
    STANDARD_WEBHOOKS_SECRET: standardSecret,
  };
  const store =
    engine === 'sqlite'
      ? ['--db', join(dir, 'baton.db')]
      : ['--postgres', postgresUrl ?? '', '--domain-key', join(dir, 'baton.domain-key.pem')];
  const port = await freePort();
  const served = await spawnServe(t, store, env, dir, `http://127.0.0.1:${port}`);
  const hook = `${served.url}/v1/webhooks/stripe-payment-intents`;
  const stripeSandbox = createStripeSandbox({ secretKey, webhookSecret, webhookUrls: [hook] });
  const quietSandbox = createStripeSandbox({ secretKey, webhookSecret });
  for (const [s, at] of [
    [stripeSandbox, port],
    [quietSandbox, 0],
  ] as const) {
    await s.listen(at, '127.0.0.1');
    t.after(() => s.close());
  }
  const stripeProfile = deployProfile(loadProfile('stripe-payment-intents'), { origin: stripeSandbox.url });
  const w = {
    ...served,
    stripeSandbox,
    quietSandbox,
    stripe: stripeClient(stripeSandbox),
    quiet: stripeClient(quietSandbox),
    webhookSecret,
    standardSecret,
    stripeProfile,
    credential: '',
  };
  await ok(w, 'PUT', '/v1/domain', domainConfig({ maxInFlightPerLineage: 50, maxPendingPerLineage: 50 }));
  await registerProfile(w, stripeProfile);
  await registerProfile(w, loadProfile('standard-webhooks-v1'));
  await ok(w, 'POST', '/v1/authorities', { id: 'payouts', unit: 'USD-cents', total: 1_000_000 });
  w.credential = (await ok(w, 'POST', '/v1/lineages/invoice-agent/takeover'))['credential'] as string;
  return w;
}

export async function ok(w: ServeWorld, method: string, path: string, body?: unknown): Promise<JsonObject> {
  const r = await request(w.url, method, path, { token: w.admin, ...(body !== undefined && { body }) });
  assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
  return r.body;
}

export async function registerProfile(w: ServeWorld, profile: ProviderProfile): Promise<void> {
  await ok(w, 'POST', '/v1/profiles', profile);
}

/** create + enter over HTTP under the lineage's credential: the ticket carries the native key. */
export async function enter(
  w: ServeWorld,
  profile: ProviderProfile,
  creationKey: string,
  amount: number,
): Promise<EntryTicket> {
  const body = {
    creationKey,
    provider: { profileId: profile.id, profileVersion: profile.version },
    request: { amount, currency: 'usd' },
    authority: { id: 'payouts', amount },
  };
  const created = await request(w.url, 'POST', '/v1/occurrences', { token: w.credential, body });
  assert.equal(created.status, 201, created.text);
  const id = (created.body['occurrence'] as JsonObject)['id'] as string;
  const entered = await request(w.url, 'POST', `/v1/occurrences/${id}/enter`, { token: w.credential });
  assert.equal(entered.status, 200, entered.text);
  return entered.body as unknown as EntryTicket;
}

export interface Detail {
  readonly occurrence: JsonObject;
  readonly evidence: JsonObject[];
}

export async function detail(w: ServeWorld, id: string): Promise<Detail> {
  const body = await ok(w, 'GET', `/v1/occurrences/${id}`);
  return { occurrence: body['occurrence'] as JsonObject, evidence: body['evidence'] as JsonObject[] };
}

/** Why each recorded observation settled nothing (null: it was authoritative), in order. */
export async function verdicts(w: ServeWorld, id: string): Promise<(string | null)[]> {
  return (await detail(w, id)).evidence
    .filter((e) => e['type'] === 'observation_recorded')
    .map((e) => {
      const b = e['body'] as { interpretation: { missingKnowledge: string | null } };
      return b.interpretation.missingKnowledge;
    });
}

export function deliver(
  w: ServeWorld,
  profileId: string,
  body: string,
  headers: Record<string, string>,
): Promise<Answer> {
  return request(w.url, 'POST', `/v1/webhooks/${profileId}`, { raw: body, headers });
}
