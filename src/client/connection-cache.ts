/**
 * Cached connections under a Mission (seed §8, HAR-16..19; build spec A3.9). A cached connection
 * is never evidence of an active Mission: every `get` (1) verifies the cached `at+jwt` (type, issuer,
 * audience, expiry, the `mission` claim equal to the binding, `cnf.jkt` equal to the holder key),
 * (2) asks Baton's check for the Mission (`check`, A3.1 without the CAS), and (3) leaves a
 * consequential use to occurrence `enter`. A non-active Mission makes its entries unusable and
 * closes them (`cache_disabled`). The key covers mission, audience, actor, sender key and authority
 * hash, so another Mission never hits another's entry (HAR-18/19).
 */
import { jwtVerify, type JWTVerifyGetKey, type KeyObject } from 'jose';
import { BatonError } from '../core/errors.js';
import { connectionCacheKey, type CacheKeyParts } from '../missions/index.js';

export interface CachedConnection<C> {
  readonly connection: C;
  /** The RFC 9068 access token the connection carries. */
  readonly accessToken: string;
  close?(): Promise<void> | void;
}

export interface CacheCheck {
  /**
   * Baton's answer for the Mission now: only `active` lets a cached connection be used.
   * `authority_hash_mismatch`: the Mission is active but no longer approves the entry's authority
   * hash (narrowed, A7#19): that entry alone becomes unusable, the Mission's others stay.
   */
  (
    missionOrigin: string,
    missionId: string,
    authorityHash: string | null,
  ): Promise<'active' | 'non_active' | 'unknown' | 'stale' | 'authority_hash_mismatch'>;
}

export interface ConnectionCacheOptions {
  readonly key: KeyObject | JWTVerifyGetKey;
  readonly issuer: string;
  readonly check: CacheCheck;
  readonly algorithms?: readonly string[];
  /**
   * Where `cache_disabled` decisions go (the caller records them, e.g. to Baton; HAR-26). Called for
   * every entry disabled, also when its `close()` failed: the entry is unusable all the same, and
   * `closeError` is what `close()` threw or rejected with (undefined when it closed), so a failed
   * close is reported here, never swallowed, and never stops the stop.
   */
  readonly onDisabled?: (parts: CacheKeyParts, reason: string, closeError?: unknown) => void;
  /** The clock token expiry is judged by (epoch ms; default the system clock). */
  readonly now?: () => number;
}

export class ConnectionCache<C> {
  readonly #o: ConnectionCacheOptions;
  readonly #entries = new Map<
    string,
    { parts: CacheKeyParts; entry: CachedConnection<C>; usable: boolean }
  >();

  constructor(o: ConnectionCacheOptions) {
    this.#o = o;
  }

  put(parts: CacheKeyParts, entry: CachedConnection<C>): string {
    const key = connectionCacheKey(parts);
    this.#entries.set(key, { parts, entry, usable: true });
    return key;
  }

  /** The connection for exactly these parts, or undefined (a miss); throws when the Mission forbids use. */
  async get(parts: CacheKeyParts): Promise<C | undefined> {
    const found = this.#entries.get(connectionCacheKey(parts));
    if (found === undefined || !found.usable) return undefined;
    const token = await this.#verifyToken(found.entry.accessToken, parts);
    if (token === undefined) {
      await this.#disable(connectionCacheKey(parts), 'token_invalid');
      return undefined;
    }
    // Seed §8.1: a cached connection is keyed by the authority hash when known. An entry put with
    // no hash whose token's `mission` claim carries one is checked with the token's hash, so a
    // narrowed Mission disables it (A7#19) instead of handing out the wider connection.
    const hash = parts.authorityHash ?? token.authorityHash;
    const key = connectionCacheKey(parts);
    const verdict = await this.#o.check(parts.missionOrigin, parts.missionId, hash);
    if (verdict === 'authority_hash_mismatch') {
      await this.#disable(key, 'authority_hash_mismatch');
      return undefined;
    }
    if (verdict !== 'active') {
      // A2.6: unknown (nothing authenticated) and stale (not fresh enough) are different reasons.
      const reason =
        verdict === 'non_active'
          ? 'mission_not_active'
          : verdict === 'unknown'
            ? 'mission_state_unknown'
            : 'mission_state_stale';
      await this.disableMission(parts.missionOrigin, parts.missionId, reason);
      throw new BatonError(
        verdict === 'non_active' ? 'mission_not_active' : 'mission_status_unavailable',
        'the Mission does not permit using this cached connection',
      );
    }
    // HAR-17 A3.9: the entry may have been disabled (a Mission stop, another get's verdict) or
    // replaced while the token check and Baton's check were in flight: then it is a miss, never a use.
    if (!found.usable || this.#entries.get(key) !== found) return undefined;
    return found.entry.connection;
  }

  /** The verified token's authority hash (null: the claim names none), or undefined: never use it. */
  async #verifyToken(
    token: string,
    parts: CacheKeyParts,
  ): Promise<{ authorityHash: string | null } | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.#o.key as KeyObject, {
        typ: 'at+jwt',
        // RFC 9068 §2.2: `exp` is REQUIRED in a JWT access token; jose checks it only when present,
        // so a token without one would never expire in the cache (HAR-16 step 1).
        requiredClaims: ['exp'],
        issuer: this.#o.issuer,
        audience: parts.audience,
        ...(this.#o.now !== undefined && { currentDate: new Date(this.#o.now()) }),
        algorithms: [...(this.#o.algorithms ?? ['ES256', 'EdDSA'])],
      });
      const m = payload['mission'] as
        { id?: unknown; origin?: unknown; authority_hash?: unknown } | undefined;
      if (m?.id !== parts.missionId || m.origin !== parts.missionOrigin) return undefined;
      // A hash of another type is unparseable input: fail closed (a miss), never "no hash".
      if (m.authority_hash !== undefined && typeof m.authority_hash !== 'string') return undefined;
      if (parts.authorityHash !== null && m.authority_hash !== parts.authorityHash) return undefined;
      const cnf = payload['cnf'] as { jkt?: unknown } | undefined;
      const holder = parts.cnfJkt === null ? cnf?.jkt === undefined : cnf?.jkt === parts.cnfJkt;
      return holder ? { authorityHash: m.authority_hash ?? null } : undefined;
    } catch {
      return undefined; // any verification failure is a miss, never a use
    }
  }

  async #disable(key: string, reason: string): Promise<void> {
    const e = this.#entries.get(key);
    if (e === undefined || !e.usable) return;
    e.usable = false; // first, whatever close() does: the entry is never used again (HAR-17)
    let closeError: unknown;
    try {
      await e.entry.close?.();
    } catch (err) {
      closeError = err ?? new Error('close() failed'); // reported below, never swallowed
    }
    this.#o.onDisabled?.(e.parts, reason, closeError);
  }

  /** HAR-17: every entry of the Mission becomes unusable for new governed work and is closed. */
  async disableMission(origin: string, missionId: string, reason = 'mission_not_active'): Promise<number> {
    let n = 0;
    for (const [key, e] of this.#entries) {
      if (e.usable && e.parts.missionOrigin === origin && e.parts.missionId === missionId) {
        // #disable never throws for a failed close, so one entry's failure leaves no other usable.
        await this.#disable(key, reason);
        n++;
      }
    }
    return n;
  }
}
