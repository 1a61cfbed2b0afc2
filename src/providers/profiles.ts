/**
 * The pinned provider profile documents in `profiles/` and their deployment. A checked-in profile
 * pins the sandbox's semantics (statuses, key rule, sources, horizons) for a reference deployment;
 * `deployProfile` re-pins it to a running deployment — where the sources live and which keys sign —
 * and gives the result its own version, because another location or key IS another profile
 * (AOC-REQ-003: the profile digest is part of every binding).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sha256 } from '../core/digest.js';
import { BatonError } from '../core/errors.js';
import { canonicalize } from '../core/jcs.js';
import { parseStrictJson } from '../core/json.js';
import type { AuthenticationPin, ProviderProfile } from '../occurrences/index.js';
import { validateProfile } from '../occurrences/index.js';
import type { SandboxProvider } from './sandbox/index.js';

export const SANDBOX_PROFILES = ['sandbox-payments', 'sandbox-payments-ed25519'] as const;
export type SandboxProfileName = (typeof SANDBOX_PROFILES)[number];

/** Every profile `profiles/` ships (docs/providers.md, one section each). */
export const SHIPPED_PROFILES = [
  ...SANDBOX_PROFILES,
  'stripe-payment-intents',
  'stripe-refunds',
  'standard-webhooks-v1',
  'standard-webhooks-v1a',
] as const;
export type ShippedProfileName = (typeof SHIPPED_PROFILES)[number];

/** `profiles/`, found from this file upwards (works from src/ and from dist/src/). */
export function profilesDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'profiles', 'sandbox-payments.json'))) return join(dir, 'profiles');
    const parent = dirname(dir);
    if (parent === dir) throw new BatonError('profile_not_found', 'the profiles/ directory was not found');
    dir = parent;
  }
}

/** Read and validate one checked-in profile document. */
export function loadProfile(name: ShippedProfileName): ProviderProfile {
  return validateProfile(parseStrictJson(readFileSync(join(profilesDir(), `${name}.json`))));
}

export interface Deployment {
  /** Where the provider's API and status sources listen, e.g. `http://127.0.0.1:4010`. */
  readonly origin: string;
  /** Where Baton's webhook receiver listens (the webhook source's origin). */
  readonly webhookOrigin?: string;
  readonly hmacSecretId?: string;
  /** The provider's Ed25519 signing key, raw 32 bytes base64url, with its kid. */
  readonly ed25519?: { readonly kid: string; readonly publicKey: string };
}

const ORIGIN = /^https?:\/\/[^/]+/;

function rebase(url: string, origin: string | undefined): string {
  return origin === undefined ? url : url.replace(ORIGIN, origin.replace(/\/+$/, ''));
}

function repin(pin: AuthenticationPin, d: Deployment): AuthenticationPin {
  if (pin.kind === 'hmac-sha256' && d.hmacSecretId !== undefined) return { ...pin, secretId: d.hmacSecretId };
  // A channel is the origin Baton calls: it moves with the provider's API.
  if (pin.kind === 'channel') return { ...pin, origin: new URL(d.origin).origin };
  if (pin.kind === 'ed25519' && d.ed25519 !== undefined) return { ...pin, ...d.ed25519 };
  return pin;
}

/** The profile re-pinned to a deployment, under version `<version>.<8 hex of the deployment>`. */
export function deployProfile(template: ProviderProfile, d: Deployment): ProviderProfile {
  const tag = sha256(canonicalize(JSON.parse(JSON.stringify(d))))
    .toString('hex')
    .slice(0, 8);
  const document = {
    ...template,
    version: `${template.version}.${tag}`,
    ...(template.entry !== undefined && {
      entry: { ...template.entry, url: rebase(template.entry.url, d.origin) },
    }),
    acknowledgement: {
      ...template.acknowledgement,
      authentication: repin(template.acknowledgement.authentication, d),
    },
    statusSources: template.statusSources.map((s) => ({
      ...s,
      url: rebase(s.url, s.kind === 'webhook' ? d.webhookOrigin : d.origin),
      authentication: repin(s.authentication, d),
    })),
  };
  return validateProfile(JSON.parse(JSON.stringify(document)));
}

/** The deployment facts of a running sandbox (its URL and its public verification material). */
export function sandboxDeployment(sandbox: SandboxProvider, webhookOrigin?: string): Deployment {
  const v = sandbox.verification;
  return {
    origin: sandbox.url,
    ...(webhookOrigin !== undefined && { webhookOrigin }),
    ...(v.hmac !== undefined && { hmacSecretId: v.hmac.secret_id }),
    ...(v.ed25519 !== undefined && { ed25519: { kid: v.ed25519.kid, publicKey: v.ed25519.jwk.x } }),
  };
}

/**
 * The sandbox's entry endpoint as a URL template, `{account}` still in it: `HttpProviderAdapter`
 * fills it from the binding's account (the profile schema has no entry URL member yet).
 */
export function sandboxEntryUrl(origin: string): string {
  return `${origin.replace(/\/+$/, '')}/v1/accounts/{account}/payments`;
}
