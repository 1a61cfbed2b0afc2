/**
 * Pin a provider profile to a running `baton sandbox` (docs/config.md "Pinning to a sandbox"), so
 * the shipped profiles never need hand editing: the status sources the sandbox serves take its
 * origin and the authentication pins its keys (providers' `deployProfile`). The key comes from the sandbox's
 * public `/.well-known/baton-sandbox` — trust on first use, acceptable for a synthetic provider on
 * loopback, never a way to pin a real provider. The HMAC secret is never served, so a profile with
 * an Ed25519 pin cannot be pinned to a sandbox without Ed25519 signing. The Stripe flavour serves
 * its origin and the references (never the secrets) its secret key and webhook secret go by.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { BatonError } from '../../core/errors.js';
import { parseStrictJson, type JsonObject, type JsonValue } from '../../core/json.js';
import type { AuthenticationPin, ProviderProfile } from '../../occurrences/index.js';
import { deployProfile, type Deployment } from '../../providers/index.js';

export const WELL_KNOWN = '/.well-known/baton-sandbox';

export interface SandboxFacts {
  readonly origin: string;
  /** `null` for the Stripe flavour: its one account is the secret key's, with no id to match. */
  readonly accounts: readonly string[] | null;
  /** The raw Ed25519 public key, base64url (the JWK's `x`), with its kid. */
  readonly ed25519?: { readonly kid: string; readonly publicKey: string };
  readonly hmacSecretId?: string;
  /** The Stripe flavour: the credential references its profile must name (docs/sandbox-stripe.md). */
  readonly stripe?: { readonly credential: string; readonly webhookSecretId: string };
}

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function invalid(origin: string, what: string): BatonError {
  return new BatonError('provider_response_invalid', `the sandbox at ${origin} ${what}`);
}

/** The Stripe flavour's document: `{ flavor: "stripe", verification: { channel, "stripe-signature" } }`. */
function stripeFacts(origin: string, verification: JsonValue | undefined): SandboxFacts {
  const channel = isObject(verification) ? verification['channel'] : undefined;
  const signature = isObject(verification) ? verification['stripe-signature'] : undefined;
  const credential = isObject(channel) ? channel['credential'] : undefined;
  const secretId = isObject(signature) ? signature['secret_id'] : undefined;
  if (typeof credential !== 'string' || typeof secretId !== 'string')
    throw invalid(origin, 'names no secret key or webhook secret reference');
  return { origin, accounts: null, stripe: { credential, webhookSecretId: secretId } };
}

/** The Ed25519 key a Baton-flavour sandbox serves, if it signs with one. */
function ed25519Of(origin: string, verification: JsonValue | undefined): SandboxFacts['ed25519'] {
  const ed = isObject(verification) ? verification['ed25519'] : undefined;
  if (ed === undefined) return undefined;
  const jwk = isObject(ed) ? ed['jwk'] : undefined;
  const kid = isObject(ed) ? ed['kid'] : undefined;
  const x = isObject(jwk) ? jwk['x'] : undefined;
  if (typeof kid !== 'string' || typeof x !== 'string')
    throw invalid(origin, 'serves an unreadable Ed25519 key');
  return { kid, publicKey: x };
}

function facts(origin: string, body: JsonValue): SandboxFacts {
  const verification = isObject(body) ? body['verification'] : undefined;
  if (isObject(body) && body['flavor'] === 'stripe') return stripeFacts(origin, verification);
  const accounts = isObject(body) ? body['accounts'] : undefined;
  if (!Array.isArray(accounts) || !accounts.every((a) => typeof a === 'string'))
    throw invalid(origin, 'lists no accounts');
  const ed25519 = ed25519Of(origin, verification);
  const hmac = isObject(verification) ? verification['hmac'] : undefined;
  const secretId = isObject(hmac) && typeof hmac['secret_id'] === 'string' ? hmac['secret_id'] : undefined;
  return {
    origin,
    accounts,
    ...(ed25519 !== undefined && { ed25519 }),
    ...(secretId !== undefined && { hmacSecretId: secretId }),
  };
}

/** Where a progress line goes (one line, newline-terminated; the CLI passes its stderr). */
export type Progress = (line: string) => void;

/** How long a sandbox that is still starting is waited for, unless told (docs/config.md). */
export const SANDBOX_WAIT_MS = 15_000;

/**
 * Ask the sandbox at `url` for its verification material. Connection failures are retried until
 * `waitMs` has passed (a sandbox started in the background a moment ago), saying so once on
 * `progress` before the first retry; any answer that is not the expected one fails at once.
 * `stopping` (a stop signal during `serve`'s start) ends the wait at once, with its abort error.
 */
export async function fetchSandboxFacts(
  url: string,
  waitMs = SANDBOX_WAIT_MS,
  progress?: Progress,
  stopping?: AbortSignal,
): Promise<SandboxFacts> {
  if (!URL.canParse(url)) throw new BatonError('usage', 'the sandbox URL is not an absolute URL');
  const origin = new URL(url).origin;
  const deadline = Date.now() + waitMs;
  let said = false;
  for (;;) {
    let response: Response;
    try {
      const timeout = AbortSignal.timeout(5_000);
      const signal = stopping === undefined ? timeout : AbortSignal.any([stopping, timeout]);
      response = await fetch(new URL(WELL_KNOWN, origin), { signal });
    } catch (cause) {
      stopping?.throwIfAborted();
      if (Date.now() >= deadline)
        throw new BatonError('provider_unreachable', `no sandbox answers at ${origin}`, {}, { cause });
      if (!said) progress?.(`waiting for the sandbox at ${origin} (up to ${waitMs / 1000} s)\n`);
      said = true;
      await sleep(200, undefined, { signal: stopping });
      continue;
    }
    // Another server on that port (or a typo) says nothing about pins: say what was expected.
    if (response.status !== 200)
      throw new BatonError(
        'provider_response_invalid',
        `${origin} is not a Baton sandbox: GET ${WELL_KNOWN} answered ${response.status}`,
      );
    return facts(origin, parseStrictJson(new Uint8Array(await response.arrayBuffer())));
  }
}

/** The sandbox's deployment facts, for the providers context's `deployProfile`. */
export function sandboxFactsDeployment(f: SandboxFacts): Deployment {
  return {
    origin: f.origin,
    ...(f.hmacSecretId !== undefined && { hmacSecretId: f.hmacSecretId }),
    ...(f.ed25519 !== undefined && { ed25519: f.ed25519 }),
  };
}

/** Every authentication pin of the profile (acknowledgement and status sources). */
function pinsOf(profile: ProviderProfile): readonly AuthenticationPin[] {
  return [profile.acknowledgement.authentication, ...profile.statusSources.map((s) => s.authentication)];
}

/**
 * What the profile's pins need from the sandbox, checked before anything is pinned: an Ed25519 pin
 * left with the template's key would verify nothing the sandbox signs, and a Stripe reference
 * other than the one the sandbox names would resolve no secret at `serve` (fail closed, at once).
 */
function checkPins(template: ProviderProfile, f: SandboxFacts): void {
  for (const pin of pinsOf(template)) {
    if (pin.kind === 'ed25519' && f.ed25519 === undefined)
      throw invalid(f.origin, 'serves no Ed25519 key to pin');
    if (pin.kind === 'hmac-sha256' && f.hmacSecretId === undefined)
      throw invalid(f.origin, 'serves no HMAC secret id to pin');
    const named = f.stripe;
    if (pin.kind === 'channel' && named !== undefined && pin.credential !== named.credential)
      throw new BatonError(
        'config_invalid',
        `the profile's channel credential ${pin.credential} is not the sandbox's secret key reference ${named.credential}`,
      );
    if (pin.kind === 'stripe-signature' && named !== undefined && pin.secretId !== named.webhookSecretId)
      throw new BatonError(
        'config_invalid',
        `the profile's webhook secret ${pin.secretId} is not the sandbox's reference ${named.webhookSecretId}`,
      );
  }
}

/**
 * The profile pinned to the sandbox, under its own version `<version>.<8 hex of the deployment>`
 * (another origin or key IS another profile, AOC-REQ-003), so a sandbox restarted with new keys
 * gives a new profile version instead of a conflict with the one already registered.
 */
export function pinToSandbox(template: ProviderProfile, f: SandboxFacts): ProviderProfile {
  if (f.accounts !== null && !f.accounts.includes(template.account)) {
    throw new BatonError('config_invalid', `the sandbox at ${f.origin} does not serve the profile's account`);
  }
  checkPins(template, f);
  return deployProfile(template, sandboxFactsDeployment(f));
}
