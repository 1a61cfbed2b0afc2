/**
 * The one place a held secret is put into an outgoing request (docs/providers.md "Credentials").
 * `exchange` (http-client.ts) calls it with the very URL it is about to send to, so the check and
 * the request cannot disagree. A credential goes only to an origin its credentials entry lists:
 * the profile — a document an operator may register — names WHICH credential a call sends and
 * WHERE the call goes, but never decides where a host secret may go (SECURITY.md "Secrets on the
 * host"; fail closed: no declared origin, no send). Redirects are never followed (http-client.ts),
 * so the origin checked is the only one the request reaches.
 */
import type { CredentialUse } from '../occurrences/index.js';
import type { KeyResolver } from './key-resolver.js';

/** Why a call that needs a credential is not made: stable codes, recorded as missing knowledge. */
export type CredentialRefusal = 'credential_not_held' | 'credential_origin_refused';

export type CredentialCoverage =
  { readonly ok: true } | { readonly ok: false; readonly code: CredentialRefusal };

/** Whether this process may send the credential `id` to `url`: held, and `url`'s origin declared for it. */
export function credentialCoverage(id: string, keys: KeyResolver, url: URL): CredentialCoverage {
  const secret = keys.secret(id);
  if (secret === undefined || secret.length === 0) return { ok: false, code: 'credential_not_held' };
  // `URL.origin` is the serialized origin (lowercase host, default port dropped; "null" for a
  // scheme without one), compared exactly with the declared origins, which were validated to be
  // in that same form (credentials.ts).
  if (!keys.origins(id).includes(url.origin)) return { ok: false, code: 'credential_origin_refused' };
  return { ok: true };
}

export type CredentialHeader =
  | { readonly ok: true; readonly headers: Readonly<Record<string, string>> }
  | { readonly ok: false; readonly code: CredentialRefusal };

/** The header a credential is sent in, to `url` only, or why it is not sent. */
export function credentialHeader(
  use: CredentialUse | undefined,
  keys: KeyResolver,
  url: URL,
): CredentialHeader {
  if (use === undefined) return { ok: true, headers: {} };
  const coverage = credentialCoverage(use.id, keys, url);
  if (!coverage.ok) return coverage;
  const value = Buffer.from(keys.secret(use.id) ?? []).toString('utf8');
  const authorization =
    use.scheme === 'bearer'
      ? `Bearer ${value}`
      : `Basic ${Buffer.from(`${value}:`, 'utf8').toString('base64')}`;
  return { ok: true, headers: { authorization } };
}

/** A call of a profile that sends a credential this process holds to an origin it may not go to. */
export interface UncoveredCredential {
  /** JSON path of the call's URL in the profile document (`$.entry.url`, `$.statusSources[1].url`). */
  readonly path: string;
  readonly credential: string;
  /** The origin the URL goes to, or null when a placeholder decides it. */
  readonly origin: string | null;
}

const PLACEHOLDER = /\{[A-Za-z]+\}/g;

/** The origin a URL template goes to whatever its placeholders hold, or null when they decide it. */
function templateOrigin(template: string): string | null {
  const [a, b] = [template.replace(PLACEHOLDER, 'a'), template.replace(PLACEHOLDER, 'b')];
  if (!URL.canParse(a) || !URL.canParse(b)) return null;
  const origin = new URL(a).origin;
  return origin !== 'null' && origin === new URL(b).origin ? origin : null;
}

/**
 * The calls of `profile` whose credential this process HOLDS but may not send to the call's
 * origin: registering such a profile is refused at once (routes/setup.ts), so an operator learns it
 * before any occurrence depends on it. A credential this process does not hold is not judged here
 * (another process may hold it, with its own origins). The send-time check in `exchange` is the
 * guard; this one is the early answer.
 */
export function uncoveredCredentials(
  profile: {
    readonly entry?: { readonly url: string; readonly credential?: CredentialUse };
    readonly statusSources: readonly { readonly url: string; readonly credential?: CredentialUse }[];
  },
  keys: KeyResolver,
): UncoveredCredential[] {
  const calls = [
    ...(profile.entry === undefined ? [] : [{ path: '$.entry.url', call: profile.entry }]),
    ...profile.statusSources.map((call, i) => ({ path: `$.statusSources[${i}].url`, call })),
  ];
  const out: UncoveredCredential[] = [];
  for (const { path, call } of calls) {
    const id = call.credential?.id;
    if (id === undefined || keys.secret(id) === undefined) continue;
    const origin = templateOrigin(call.url);
    if (origin === null || !keys.origins(id).includes(origin)) out.push({ path, credential: id, origin });
  }
  return out;
}
