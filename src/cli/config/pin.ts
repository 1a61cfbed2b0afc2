/**
 * Pin a provider profile to a running `baton sandbox` (docs/config.md "Pinning to a sandbox"), so
 * the shipped profiles never need hand editing: the status sources the sandbox serves take its
 * origin and the authentication pins its keys (providers' `deployProfile`). The key comes from the sandbox's
 * public `/.well-known/baton-sandbox` — trust on first use, acceptable for a synthetic provider on
 * loopback, never a way to pin a real provider. The HMAC secret is never served, so a sandbox
 * without Ed25519 signing cannot be pinned.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { BatonError } from '../../core/errors.js';
import { parseStrictJson, type JsonObject, type JsonValue } from '../../core/json.js';
import type { ProviderProfile } from '../../occurrences/index.js';
import { deployProfile, type Deployment } from '../../providers/index.js';

export const WELL_KNOWN = '/.well-known/baton-sandbox';

export interface SandboxFacts {
  readonly origin: string;
  readonly accounts: readonly string[];
  readonly kid: string;
  /** The raw Ed25519 public key, base64url (the JWK's `x`). */
  readonly publicKey: string;
  readonly hmacSecretId?: string;
}

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function facts(origin: string, body: JsonValue): SandboxFacts {
  const verification = isObject(body) ? body['verification'] : undefined;
  const ed = isObject(verification) ? verification['ed25519'] : undefined;
  const jwk = isObject(ed) ? ed['jwk'] : undefined;
  const accounts = isObject(body) ? body['accounts'] : undefined;
  if (!isObject(ed) || typeof ed['kid'] !== 'string' || !isObject(jwk) || typeof jwk['x'] !== 'string') {
    throw new BatonError(
      'provider_response_invalid',
      `the sandbox at ${origin} serves no Ed25519 key to pin`,
    );
  }
  if (!Array.isArray(accounts) || !accounts.every((a) => typeof a === 'string'))
    throw new BatonError('provider_response_invalid', `the sandbox at ${origin} lists no accounts`);
  const hmac = isObject(verification) ? verification['hmac'] : undefined;
  const secretId = isObject(hmac) && typeof hmac['secret_id'] === 'string' ? hmac['secret_id'] : undefined;
  return {
    origin,
    accounts,
    kid: ed['kid'],
    publicKey: jwk['x'],
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
 */
export async function fetchSandboxFacts(
  url: string,
  waitMs = SANDBOX_WAIT_MS,
  progress?: Progress,
): Promise<SandboxFacts> {
  if (!URL.canParse(url)) throw new BatonError('usage', 'the sandbox URL is not an absolute URL');
  const origin = new URL(url).origin;
  const deadline = Date.now() + waitMs;
  let said = false;
  for (;;) {
    let response: Response;
    try {
      response = await fetch(new URL(WELL_KNOWN, origin), { signal: AbortSignal.timeout(5_000) });
    } catch (cause) {
      if (Date.now() >= deadline)
        throw new BatonError('provider_unreachable', `no sandbox answers at ${origin}`, {}, { cause });
      if (!said) progress?.(`waiting for the sandbox at ${origin} (up to ${waitMs / 1000} s)\n`);
      said = true;
      await sleep(200);
      continue;
    }
    if (response.status !== 200)
      throw new BatonError('provider_response_invalid', `${origin}${WELL_KNOWN} answered ${response.status}`);
    return facts(origin, parseStrictJson(new Uint8Array(await response.arrayBuffer())));
  }
}

/** The sandbox's deployment facts, for the providers context's `deployProfile`. */
export function sandboxFactsDeployment(f: SandboxFacts): Deployment {
  return {
    origin: f.origin,
    ...(f.hmacSecretId !== undefined && { hmacSecretId: f.hmacSecretId }),
    ed25519: { kid: f.kid, publicKey: f.publicKey },
  };
}

/**
 * The profile pinned to the sandbox, under its own version `<version>.<8 hex of the deployment>`
 * (another origin or key IS another profile, AOC-REQ-003), so a sandbox restarted with new keys
 * gives a new profile version instead of a conflict with the one already registered.
 */
export function pinToSandbox(template: ProviderProfile, f: SandboxFacts): ProviderProfile {
  if (!f.accounts.includes(template.account)) {
    throw new BatonError('config_invalid', `the sandbox at ${f.origin} does not serve the profile's account`);
  }
  return deployProfile(template, sandboxFactsDeployment(f));
}
