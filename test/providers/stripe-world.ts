/**
 * A real world for the Stripe profile tests: a SQLite file with the occurrences service, the
 * Stripe-compatible sandbox (`baton sandbox --flavor stripe`) on 127.0.0.1:0, a shipped Stripe
 * profile deployed to it, the official `stripe` client pointed at it, and the status sources with
 * the credentials resolved from references. A compatible local server, not Stripe's servers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import Stripe from 'stripe';
import type { JsonObject } from '../../src/core/json.js';
import type {
  EntryTicket,
  OccurrencesService,
  OccurrenceView,
  ProviderProfile,
  RegisteredProfile,
} from '../../src/occurrences/index.js';
import {
  credentialOrigins,
  deployProfile,
  loadProfile,
  resolveCredentials,
  staticKeys,
  StatusSources,
  validateCredentials,
  type KeyResolver,
  type ShippedProfileName,
} from '../../src/providers/index.js';
import { createStripeSandbox, type StripeSandbox } from '../../src/providers/sandbox/stripe/index.js';
import { openOccurrencesOnSqlite } from '../../src/store/index.js';
import { domainConfig } from '../occurrences/helpers.js';

export interface StripeWorld {
  readonly svc: OccurrencesService;
  readonly sandbox: StripeSandbox;
  readonly stripe: Stripe;
  readonly profile: RegisteredProfile;
  readonly keys: KeyResolver;
  readonly sources: StatusSources;
  readonly credential: string;
  readonly domainId: string;
  /** The SQLite file (its domain key beside it), for a command that opens the store itself. */
  readonly path: string;
  /** The `baton.credentials/1` document of this world (stripeCredentials of its sandbox). */
  readonly credentials: object;
}

/**
 * The credentials document a deployment would keep beside its config: references only, the secret
 * key sendable to the sandbox's origin and to the origin the deployed profile points at, the webhook
 * secret to no origin (it only verifies deliveries).
 */
export function stripeCredentials(sandboxUrl: string, deployedUrl: string = sandboxUrl) {
  const origins = [...new Set([new URL(sandboxUrl).origin, new URL(deployedUrl).origin])];
  return {
    format: 'baton.credentials/1',
    credentials: {
      'stripe-secret-key': { env: 'STRIPE_SECRET_KEY', origins },
      'stripe-webhook-secret': { env: 'STRIPE_WEBHOOK_SECRET', origins: [] },
    },
  };
}

export async function openStripeWorld(
  t: TestContext,
  name: ShippedProfileName = 'stripe-payment-intents',
  edit: (p: ProviderProfile) => ProviderProfile = (p) => p,
): Promise<StripeWorld> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-stripe-'));
  const sandbox = createStripeSandbox();
  const url = await sandbox.listen(0);
  const path = join(dir, 'baton.db');
  const opened = await openOccurrencesOnSqlite(path);
  t.after(async () => {
    await sandbox.close();
    await opened.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const svc = opened.service;
  const domain = await svc.configureDomain(domainConfig() as never);
  const deployed = edit(deployProfile(loadProfile(name), { origin: url }));
  const profile = await svc.registerProfile(deployed);
  await svc.createAuthority({ id: 'payouts', unit: 'USD-cents', total: 1_000_000 });
  const env = { STRIPE_SECRET_KEY: sandbox.secretKey, STRIPE_WEBHOOK_SECRET: sandbox.webhookSecret };
  // An edit that points the profile at a stand-in for the provider (a test's middlebox) deploys
  // the key to that origin too, as a deployment's credentials document would.
  const credentials = stripeCredentials(url, deployed.entry?.url ?? url);
  const doc = validateCredentials(credentials);
  const secrets = resolveCredentials(doc, { env, readFile: () => undefined });
  const keys = staticKeys(secrets, credentialOrigins(doc));
  const { port } = new URL(url);
  const stripe = new Stripe(sandbox.secretKey, { host: '127.0.0.1', port: Number(port), protocol: 'http' });
  const { credential } = await svc.takeover({ lineage: 'invoice-agent' });
  const sources = new StatusSources({ keys, pageSize: 5 });
  return {
    svc,
    sandbox,
    stripe,
    profile,
    keys,
    sources,
    credential,
    domainId: domain.id,
    path,
    credentials,
  };
}

export async function enterOne(
  w: StripeWorld,
  creationKey: string,
  request: JsonObject,
  amount: number,
): Promise<EntryTicket> {
  const { occurrence } = await w.svc.create({
    credential: w.credential,
    creationKey,
    provider: { profileId: w.profile.id, profileVersion: w.profile.version },
    request,
    authority: { id: 'payouts', amount },
  });
  return w.svc.enter({ credential: w.credential, occurrenceId: occurrence.id });
}

export async function view(w: StripeWorld, id: string): Promise<OccurrenceView> {
  return w.svc.getOccurrenceView(id);
}
