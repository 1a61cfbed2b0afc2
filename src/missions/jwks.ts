/**
 * Where a Mission issuer's verification keys come from (A3.2 step 4, MSG-01): its pinned
 * `jwks_uri` through jose's `createRemoteJWKSet` (cache, rotation, one refetch per unknown kid
 * within a cooldown), a local JWKS document (CLI, tests), or the key archive, so a status answer
 * archived before a rotation still re-verifies after it (MST-06 "Signing-Key Retention").
 * Every key that verifies something is archived by (origin, kid) with its RFC 7638 thumbprint.
 */
import { createPublicKey, KeyObject, type JsonWebKey } from 'node:crypto';
import {
  calculateJwkThumbprint,
  createRemoteJWKSet,
  errors,
  type CryptoKey,
  type JSONWebKeySet,
  type JWK,
  type RemoteJWKSet,
} from 'jose';
import { BatonError } from '../core/errors.js';

export interface ResolvedKey {
  /** A node:crypto public key (jose's CryptoKeys are converted once per JWK). */
  readonly key: KeyObject;
  readonly kid: string;
  readonly thumbprint: string;
  readonly jwk: JWK;
}

/** Resolves the key named by a checked header, or throws `kid_mismatch` / `key_invalid`. */
export interface MissionKeySource {
  resolve(header: { readonly alg: string; readonly kid: string }): Promise<ResolvedKey>;
}

export interface ArchivedKey {
  readonly jwk: JWK;
  readonly thumbprint: string;
}

/**
 * The key archive port (the stored implementation is the harness's `msn_keys`). `saveKey` is
 * idempotent for the same key; the same (origin, kid) with another thumbprint is refused with
 * `key_invalid`: an issuer that reuses a kid for a new key makes archived answers ambiguous.
 */
export interface MissionKeyArchive {
  saveKey(origin: string, kid: string, jwk: JWK, thumbprint: string): Promise<void>;
  getKey(origin: string, kid: string): Promise<ArchivedKey | undefined>;
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];

/** Only the public members that identify the key (what RFC 7638 and verification need). */
export function publicJwk(jwk: JWK): JWK {
  if (PRIVATE_MEMBERS.some((m) => Object.hasOwn(jwk, m))) {
    throw new BatonError('key_invalid', 'a verification JWK must hold a public key only');
  }
  const keep = ['kty', 'crv', 'x', 'y', 'n', 'e', 'kid', 'alg', 'use'] as const;
  const out: JWK = {};
  for (const member of keep) if (typeof jwk[member] === 'string') out[member] = jwk[member];
  return out;
}

export function thumbprintOf(jwk: JWK): Promise<string> {
  return calculateJwkThumbprint(jwk, 'sha256');
}

function importPublic(jwk: JWK): KeyObject {
  try {
    return createPublicKey({ key: publicJwk(jwk) as JsonWebKey, format: 'jwk' });
  } catch (cause) {
    throw new BatonError('key_invalid', 'a JWK does not import as a public key', {}, { cause });
  }
}

export class InMemoryKeyArchive implements MissionKeyArchive {
  readonly #keys = new Map<string, ArchivedKey>();

  saveKey(origin: string, kid: string, jwk: JWK, thumbprint: string): Promise<void> {
    const at = JSON.stringify([origin, kid]);
    const known = this.#keys.get(at);
    if (known !== undefined && known.thumbprint !== thumbprint) {
      return Promise.reject(new BatonError('key_invalid', 'the issuer reused a kid for another key'));
    }
    try {
      if (known === undefined) this.#keys.set(at, { jwk: publicJwk(jwk), thumbprint });
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new BatonError('key_invalid', 'unusable JWK'));
    }
    return Promise.resolve();
  }

  getKey(origin: string, kid: string): Promise<ArchivedKey | undefined> {
    return Promise.resolve(this.#keys.get(JSON.stringify([origin, kid])));
  }

  get size(): number {
    return this.#keys.size;
  }
}

/** A fixed key set (a JWKS file): kids must be unique, keys public. */
export function localMissionKeys(jwks: JSONWebKeySet): MissionKeySource {
  if (typeof jwks !== 'object' || jwks === null || !Array.isArray(jwks.keys)) {
    throw new BatonError('key_invalid', 'a JWKS is an object with a "keys" array');
  }
  const byKid = new Map<string, Promise<ResolvedKey>>();
  for (const jwk of jwks.keys) {
    const kid = jwk.kid;
    if (typeof kid !== 'string' || kid === '') throw new BatonError('key_invalid', 'every JWK needs a kid');
    if (byKid.has(kid)) throw new BatonError('key_invalid', 'JWKS lists a kid twice');
    const key = importPublic(jwk);
    const clean = publicJwk(jwk);
    byKid.set(
      kid,
      thumbprintOf(clean).then((thumbprint) => ({ key, kid, thumbprint, jwk: clean })),
    );
  }
  return {
    resolve: async ({ kid }) => {
      const found = byKid.get(kid);
      if (found === undefined) throw new BatonError('kid_mismatch', 'no key in the set has that kid');
      return found;
    },
  };
}

/** Keys from the archive only: re-verification of archived answers after rotation. */
export function archivedMissionKeys(archive: MissionKeyArchive, origin: string): MissionKeySource {
  return {
    resolve: async ({ kid }) => {
      const archived = await archive.getKey(origin, kid);
      if (archived === undefined) throw new BatonError('kid_mismatch', 'no archived key has that kid');
      return { key: importPublic(archived.jwk), kid, thumbprint: archived.thumbprint, jwk: archived.jwk };
    },
  };
}

export interface RemoteKeysOptions {
  readonly origin: string;
  readonly jwksUri: string;
  readonly archive?: MissionKeyArchive;
  /** jose's fetch timeout (default 5000 ms) and refetch cooldown (default 30 s, A5). */
  readonly timeoutMs?: number;
  readonly cooldownMs?: number;
  /** How long a fetched set is used before refetching (default 600 s). */
  readonly cacheMaxAgeMs?: number;
}

function mapRemoteError(error: unknown): BatonError {
  if (error instanceof BatonError) return error;
  if (error instanceof errors.JWKSNoMatchingKey)
    return new BatonError('kid_mismatch', 'no JWKS key has that kid');
  if (error instanceof errors.JWKSMultipleMatchingKeys) {
    return new BatonError('key_invalid', 'the JWKS lists more than one key for that kid');
  }
  if (error instanceof errors.JOSEError) {
    return new BatonError('unavailable', `issuer JWKS unusable (${error.code})`, { joseCode: error.code });
  }
  return new BatonError('unavailable', 'issuer JWKS unreachable', {}, { cause: error });
}

/** The pinned `jwks_uri` through jose, each key used archived under the pinned origin. */
export function remoteMissionKeys(
  o: RemoteKeysOptions,
): MissionKeySource & { readonly remote: RemoteJWKSet } {
  const remote = createRemoteJWKSet(new URL(o.jwksUri), {
    timeoutDuration: o.timeoutMs ?? 5000,
    cooldownDuration: o.cooldownMs ?? 30_000,
    cacheMaxAge: o.cacheMaxAgeMs ?? 600_000,
  });
  const thumbprints = new WeakMap<JWK, Promise<string>>();
  const imported = new WeakMap<CryptoKey, KeyObject>();
  // Archived once per process and key; the archive itself is idempotent, this only spares it.
  const archived = new Set<string>();
  return {
    remote,
    resolve: async ({ alg, kid }) => {
      // jose refetches for an unknown kid only outside its cooldown: a miss on a set it holds
      // fresh and will not refetch yet is no verdict on the kid. An issuer that just rotated signs
      // with a kid this set predates; refusing that SET (RFC 8935 400 invalid_key, never retried)
      // would lose it, so the miss is `unavailable` (503: the transmitter redelivers) until jose
      // has refetched.
      const settled = remote.fresh && remote.coolingDown;
      let key: CryptoKey;
      try {
        key = await remote({ alg, kid });
      } catch (error) {
        if (settled && error instanceof errors.JWKSNoMatchingKey)
          throw new BatonError(
            'unavailable',
            'no JWKS key has that kid yet: the key set is within its refetch cooldown',
          );
        throw mapRemoteError(error);
      }
      let keyObject = imported.get(key);
      if (keyObject === undefined) {
        keyObject = KeyObject.from(key);
        imported.set(key, keyObject);
      }
      // MST-06: evidence and the archive name the key that verifies, i.e. the one jose selected by
      // kid AND alg (kty, crv, use, alg members). RFC 7517 §4.5 lets keys of different kty share a
      // kid, so the first JWK with that kid may be another key: the JWK recorded is the one whose
      // RFC 7638 thumbprint is that of the selected key, and no such JWK fails closed.
      const used = await thumbprintOf(keyObject.export({ format: 'jwk' }));
      let jwk: JWK | undefined;
      for (const candidate of remote.jwks()?.keys ?? []) {
        if (candidate.kid !== kid) continue;
        let thumbprint = thumbprints.get(candidate);
        if (thumbprint === undefined) {
          thumbprint = thumbprintOf(publicJwk(candidate));
          thumbprints.set(candidate, thumbprint);
        }
        if ((await thumbprint) === used) {
          jwk = candidate;
          break;
        }
      }
      if (jwk === undefined) throw new BatonError('kid_mismatch', 'the JWKS no longer lists that key');
      const resolved = { key: keyObject, kid, thumbprint: used, jwk: publicJwk(jwk) };
      const mark = `${kid} ${resolved.thumbprint}`;
      if (o.archive !== undefined && !archived.has(mark)) {
        await o.archive.saveKey(o.origin, kid, resolved.jwk, resolved.thumbprint);
        archived.add(mark);
      }
      return resolved;
    },
  };
}
