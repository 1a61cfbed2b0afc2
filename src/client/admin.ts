/**
 * AdminClient: the setup calls of the HTTP API (docs/api.md "Domain setup", "Tokens"): the domain,
 * provider profiles, authority budgets and principal tokens. `baton apply` and the `baton domain`,
 * `profiles` and `authorities` commands use it; a program can too. The token is an admin token for
 * the domain and tokens, an operator (or admin) token for the rest. Nothing here retries. Every call
 * takes a last, optional `{ timeoutMs, signal }` (CallOptions), as HttpBatonClient's do.
 */
import type { JsonObject } from '../core/json.js';
import type { ActionClass } from '../missions/index.js';
import type {
  AuthorityInput,
  AuthorityRecord,
  DomainConfigInput,
  DomainRecord,
  ProfileSummary,
  RegisteredProfile,
} from '../occurrences/index.js';
import type { CallOptions } from './types.js';
import {
  checkBearer,
  endpoint,
  exchange,
  expectMembers,
  type Endpoint,
  type Exchange,
  type Fetch,
} from './http-transport.js';

export interface AdminClientOptions {
  /** E.g. `http://127.0.0.1:4000`; routes are resolved under it (`/v1/…`). */
  readonly baseUrl: string;
  /** An admin (or, for profiles and authorities, operator) principal token (`btk.…`). */
  readonly token: string;
  readonly fetch?: Fetch;
  /** Every call's deadline (default 30 000 ms): then `client_timeout`. */
  readonly timeoutMs?: number;
}

export type PrincipalTokenRole = 'operator' | 'admin';

/** A principal token's public record (never its secret). */
export interface PrincipalToken {
  readonly id: string;
  readonly name: string;
  readonly role: PrincipalTokenRole;
  readonly createdAt: number;
  readonly revokedAt: number | null;
}

/** A newly created token: `token` is the bearer secret, shown this once. */
export interface CreatedPrincipalToken extends PrincipalToken {
  readonly token: string;
}

/** A list's page size, beside the call's own deadline and signal. */
export interface ListOptions extends CallOptions {
  /** 1..1000 (default 1000); `truncated` says when more exist. */
  readonly limit?: number;
}

const seg = encodeURIComponent;
const DOMAIN = ['id', 'kid', 'publicKey', 'limits', 'bypassPaths', 'version'];
const PROFILE = ['id', 'version', 'digest', 'document', 'registeredAt'];
const AUTHORITY = ['id', 'unit', 'total', 'reserved', 'consumed', 'version'];
const TOKEN = ['id', 'name', 'role', 'createdAt', 'revokedAt'];
const ISSUER = ['issuer', 'pinDigest', 'pushBearer', 'pollBearerRef', 'delivery'];
const PRODUCER = ['producer', 'keys', 'keysDigest', 'pinnedAt', 'pinnedBy'];

/** An Ed25519 public key as a pin takes it: a public JWK, or `{ pem }` (docs/observations.md). */
export type ProducerKeyInput =
  | { readonly kty: 'OKP'; readonly crv: 'Ed25519'; readonly x: string; readonly kid?: string }
  | { readonly pem: string };

/** A continuity producer's pinned keys as `GET /v1/continuity/producers` shows them. */
export interface PinnedProducerSummary {
  readonly producer: string;
  readonly keys: readonly { kty: 'OKP'; crv: 'Ed25519'; x: string; kid: string }[];
  /** Equal for the same key set, whatever their order. */
  readonly keysDigest: string;
  readonly pinnedAt: number;
  readonly pinnedBy: string;
}

/** The answer of `POST /v1/missions/{origin}/{missionId}/check`. */
export interface MissionCheckAnswer {
  readonly state: string;
  readonly active: boolean;
  readonly applied: boolean;
  /** Work items the check stopped (A3.7). */
  readonly stopped: number;
  readonly expiresAt: string;
  readonly checkedAt: string;
  readonly jwsDigest: string;
  readonly assessment: unknown;
}

/** A pinned Mission issuer as `GET /v1/missions/issuers/{issuer}` shows it (never a bearer). */
export interface MissionIssuerSummary {
  readonly issuer: string;
  readonly pin: JsonObject;
  readonly pinDigest: string;
  readonly delivery: string | null;
  readonly pushBearer: boolean;
  /**
   * sha-256 of the push bearer, to an admin only (absent for an operator: an unsalted digest of a
   * weak bearer could be guessed): lets `baton apply` see a changed bearer without the server
   * showing it.
   */
  readonly pushBearerDigest?: string | null;
  readonly pollBearerRef: string | null;
  readonly registeredAt: number;
  readonly lastSetAt: number | null;
  readonly lastPollAt: number | null;
  readonly lastPollError: string | null;
  readonly streamLive: boolean;
}

function limited(path: string, options: ListOptions | undefined): string {
  return options?.limit === undefined ? path : `${path}?limit=${options.limit}`;
}

/** Only the call's own options reach the exchange (a ListOptions also carries `limit`). */
function callOptions(o: CallOptions | undefined): CallOptions | undefined {
  if (o === undefined) return undefined;
  return {
    ...(o.timeoutMs !== undefined && { timeoutMs: o.timeoutMs }),
    ...(o.signal !== undefined && { signal: o.signal }),
  };
}

export class AdminClient {
  readonly #endpoint: Endpoint;
  readonly #token: string;

  /**
   * Refuses (`input_invalid`) a base URL that is not absolute http(s), and a token that is not
   * visible ASCII, as HttpBatonClient does.
   */
  constructor(options: AdminClientOptions) {
    this.#endpoint = endpoint(options.baseUrl, { fetch: options.fetch, timeoutMs: options.timeoutMs });
    this.#token = checkBearer(options.token, 'token');
  }

  async #call<T>(x: Omit<Exchange, 'bearer'>, members: readonly string[], options?: CallOptions): Promise<T> {
    const full = { ...x, bearer: this.#token };
    return expectMembers<T>(full, await exchange(this.#endpoint, full, callOptions(options)), members);
  }

  #get<T>(path: string, members: readonly string[], options?: CallOptions): Promise<T> {
    return this.#call<T>({ method: 'GET', path, safeToRetry: true }, members, options);
  }

  /** Throws `domain_not_found` before the domain is configured. */
  getDomain(options?: CallOptions): Promise<DomainRecord> {
    return this.#get('/v1/domain', DOMAIN, options);
  }

  /** Admin. Safe to retry: the same configuration again changes nothing. */
  configureDomain(config: DomainConfigInput, options?: CallOptions): Promise<DomainRecord> {
    const body = config as unknown as JsonObject;
    return this.#call({ method: 'PUT', path: '/v1/domain', body, safeToRetry: true }, DOMAIN, options);
  }

  async listProfiles(options?: ListOptions): Promise<{ profiles: ProfileSummary[]; truncated: boolean }> {
    return this.#get(limited('/v1/profiles', options), ['profiles', 'truncated'], options);
  }

  /** Throws `profile_not_found` when that version is not registered. */
  getProfile(id: string, version: string, options?: CallOptions): Promise<RegisteredProfile> {
    return this.#get(`/v1/profiles/${seg(id)}/${seg(version)}`, PROFILE, options);
  }

  /** Safe to retry: the same document again returns the registered one (another is `profile_conflict`). */
  registerProfile(document: JsonObject, options?: CallOptions): Promise<RegisteredProfile> {
    const x = { method: 'POST', path: '/v1/profiles', body: document, safeToRetry: true } as const;
    return this.#call(x, PROFILE, options);
  }

  /**
   * A page of budgets in id order. `nextCursor` (null on the last page) passed back as
   * `options.cursor` reads the next page, so every budget can be read however many there are.
   */
  async listAuthorities(
    options?: ListOptions & { readonly cursor?: string },
  ): Promise<{ authorities: AuthorityRecord[]; truncated: boolean; nextCursor: string | null }> {
    const q = new URLSearchParams();
    if (options?.limit !== undefined) q.set('limit', String(options.limit));
    if (options?.cursor !== undefined) q.set('cursor', options.cursor);
    const path = q.toString() === '' ? '/v1/authorities' : `/v1/authorities?${q.toString()}`;
    return this.#get(path, ['authorities', 'truncated', 'nextCursor'], options);
  }

  /** Throws `authority_not_found` when there is no such budget. */
  getAuthority(id: string, options?: CallOptions): Promise<AuthorityRecord> {
    return this.#get(`/v1/authorities/${seg(id)}`, AUTHORITY, options);
  }

  /** Safe to retry: identical terms return the budget (other terms are `authority_conflict`). */
  createAuthority(authority: AuthorityInput, options?: CallOptions): Promise<AuthorityRecord> {
    const body = authority as unknown as JsonObject;
    const x = { method: 'POST', path: '/v1/authorities', body, safeToRetry: true } as const;
    return this.#call(x, AUTHORITY, options);
  }

  /** Operator. Throws `mission_issuer_not_found` when the issuer is not pinned (docs/missions.md). */
  getMissionIssuer(issuer: string, options?: CallOptions): Promise<MissionIssuerSummary> {
    return this.#get(`/v1/missions/issuers/${seg(issuer)}`, ISSUER, options);
  }

  /** Admin. Safe to retry: the same pin and bearer again are unchanged (another is `mission_issuer_conflict`). */
  pinMissionIssuer(body: JsonObject, options?: CallOptions): Promise<MissionIssuerSummary> {
    const x = { method: 'POST', path: '/v1/missions/issuers', body, safeToRetry: true } as const;
    return this.#call(x, ISSUER, options);
  }

  /**
   * Admin. Replace the pinned issuer's SSF stream bearer, `{pushBearer}` or `{pollBearerRef}` (the
   * pin stays immutable). Safe to retry: the same bearer again is unchanged.
   */
  replaceMissionIssuerBearer(
    issuer: string,
    body: JsonObject,
    options?: CallOptions,
  ): Promise<MissionIssuerSummary> {
    const path = `/v1/missions/issuers/${seg(issuer)}/bearer`;
    return this.#call({ method: 'PUT', path, body, safeToRetry: true }, ISSUER, options);
  }

  /**
   * Admin. Stop trusting a pinned issuer (docs/missions.md "Unpinning an issuer"): `removed`, or
   * `absent` when nothing is pinned under it. Its Missions' active views become stale at once, so
   * their work stops at the next dispatch or entry; pin it again with `pinMissionIssuer`. Safe to
   * retry: a repeat is `absent`.
   */
  unpinMissionIssuer(
    issuer: string,
    options?: CallOptions,
  ): Promise<{ issuer: string; status: 'removed' | 'absent' }> {
    const path = `/v1/missions/issuers/${seg(issuer)}`;
    return this.#call({ method: 'DELETE', path, safeToRetry: true }, ['issuer', 'status'], options);
  }

  /**
   * Operator. The stored Mission view and what a check would conclude now (A3.3, A3.5), judged for
   * `actionClass` (its freshness bound, docs/harness.md; default `consequential_write`).
   */
  getMissionView(
    origin: string,
    missionId: string,
    actionClass?: ActionClass,
    options?: CallOptions,
  ): Promise<{ view: JsonObject | null; assessment: { verdict: string; state: string; reason: string } }> {
    const query = actionClass === undefined ? '' : `?action_class=${encodeURIComponent(actionClass)}`;
    const path = `/v1/missions/${seg(origin)}/${seg(missionId)}${query}`;
    return this.#get(path, ['view', 'assessment'], options);
  }

  /**
   * Operator. Fetch Mission Status now and apply it (docs/missions.md): a verified answer, or
   * `mission_status_invalid` (refused: the view became unknown) / `mission_status_unavailable`.
   */
  checkMission(origin: string, missionId: string, options?: CallOptions): Promise<MissionCheckAnswer> {
    const path = `/v1/missions/${seg(origin)}/${seg(missionId)}/check`;
    const members = ['state', 'active', 'applied', 'stopped'];
    return this.#call({ method: 'POST', path, safeToRetry: true }, members, options);
  }

  /** Operator. Every pinned continuity producer and its keys (docs/observations.md "Pinned producer keys"). */
  async listContinuityProducers(options?: CallOptions): Promise<PinnedProducerSummary[]> {
    const path = '/v1/continuity/producers';
    return (await this.#get<{ producers: PinnedProducerSummary[] }>(path, ['producers'], options)).producers;
  }

  /**
   * Admin. Pin `keys` for `producer`, replacing any keys pinned before. Safe to retry: the same
   * keys again are `unchanged`.
   */
  async pinContinuityProducer(
    producer: string,
    keys: readonly ProducerKeyInput[],
    options?: CallOptions,
  ): Promise<{ status: 'created' | 'updated' | 'unchanged'; pinned: PinnedProducerSummary }> {
    const body = { producer, keys: keys.map((k) => ({ ...k })) } as unknown as JsonObject;
    const x = { method: 'PUT', path: '/v1/continuity/producers', body, safeToRetry: true } as const;
    type Answer = { status: 'created' | 'updated' | 'unchanged'; pinned: JsonObject };
    const answer = await this.#call<Answer>(x, ['status', 'pinned'], options);
    const pinned = expectMembers<PinnedProducerSummary>({ ...x, bearer: '' }, answer.pinned, PRODUCER);
    return { status: answer.status, pinned };
  }

  /** Admin. Remove the producer's pin; safe to retry (`absent` when there was none). */
  unpinContinuityProducer(
    producer: string,
    options?: CallOptions,
  ): Promise<{ producer: string; status: 'removed' | 'absent' }> {
    const path = `/v1/continuity/producers?producer=${seg(producer)}`;
    return this.#call({ method: 'DELETE', path, safeToRetry: true }, ['producer', 'status'], options);
  }

  /** Admin. Every principal token's public record. */
  async listTokens(options?: CallOptions): Promise<PrincipalToken[]> {
    return (await this.#get<{ tokens: PrincipalToken[] }>('/v1/tokens', ['tokens'], options)).tokens;
  }

  /** Admin. NOT safe to retry: a repeat mints a second token. */
  createToken(
    input: { role: PrincipalTokenRole; name: string },
    options?: CallOptions,
  ): Promise<CreatedPrincipalToken> {
    const body = { role: input.role, name: input.name };
    const x = { method: 'POST', path: '/v1/tokens', body, safeToRetry: false } as const;
    return this.#call(x, [...TOKEN, 'token'], options);
  }
}
