/**
 * Where a config is applied: a running server over HTTP (AdminClient; `baton apply`) or the
 * store `baton serve --config` has just opened (in process, before it listens). Both give the
 * planner the same reads and the same idempotent writes, so one plan serves both.
 */
import { systemClock } from '../../core/clock.js';
import type { Ed25519PublicJwk } from '../../core/ed25519.js';
import { isBatonError } from '../../core/errors.js';
import type { JsonObject } from '../../core/json.js';
import type {
  AuthorityInput,
  AuthorityRecord,
  DomainConfigInput,
  DomainRecord,
  OccurrencesService,
  RegisteredProfile,
} from '../../occurrences/index.js';
import type { AdminClient, CreatedPrincipalToken, PrincipalToken } from '../../client/index.js';
import { createToken } from '../../server/tokens.js';
import type { StoreEngine } from '../../store/engine.js';
import { listTokens } from '../../store/principals.js';
import { IssuerRegistry } from '../../store/missions-issuers.js';
import { readBearerReplacement, readIssuerRegistration } from '../../missions/index.js';
import { readProducerPin } from '../../observations/index.js';
import { ProducerKeys } from '../../store/observations-producers.js';

/** What the planner compares of a pinned issuer (docs/config.md "issuers"). */
export interface PinnedIssuerFacts {
  readonly pinDigest: string;
  /** The pin as the server holds it: a conflict names the member that differs. */
  readonly pin: unknown;
  /** Whether a push bearer is set (shown to every reader, unlike its digest). */
  readonly pushBearer: boolean;
  /** Undefined: not shown (an operator's token; the API shows the digest to an admin only). */
  readonly pushBearerDigest: string | null | undefined;
  readonly pollBearerRef: string | null;
}

export interface SetupTarget {
  getDomain(): Promise<DomainRecord | undefined>;
  configureDomain(config: DomainConfigInput): Promise<DomainRecord>;
  getProfile(id: string, version: string): Promise<RegisteredProfile | undefined>;
  registerProfile(document: JsonObject): Promise<RegisteredProfile>;
  getAuthority(id: string): Promise<AuthorityRecord | undefined>;
  createAuthority(authority: AuthorityInput): Promise<AuthorityRecord>;
  listTokens(): Promise<readonly PrincipalToken[]>;
  /** The pinned issuer's digests, or undefined when it is not pinned. */
  getIssuer(issuer: string): Promise<PinnedIssuerFacts | undefined>;
  pinIssuer(body: JsonObject): Promise<unknown>;
  /** Replace a pinned issuer's stream bearer, `{pushBearer}` or `{pollBearerRef}` (the pin untouched). */
  replaceIssuerBearer(issuer: string, body: JsonObject): Promise<unknown>;
  /** The producer's pinned key set, or undefined when it is not pinned. */
  getProducer(producer: string): Promise<{ readonly keysDigest: string } | undefined>;
  pinProducer(producer: string, keys: readonly Ed25519PublicJwk[]): Promise<unknown>;
  unpinProducer(producer: string): Promise<unknown>;
  createToken(input: { role: 'operator' | 'admin'; name: string }): Promise<CreatedPrincipalToken>;
  /** Whether this target may make admin-only writes (domain, issuers, producers, tokens), asked before any write. */
  mayAdminister(): Promise<boolean>;
}

/** `undefined` for the one "absent" code; every other failure propagates. */
async function absentAs<T>(
  code: 'domain_not_found' | 'profile_not_found' | 'authority_not_found' | 'mission_issuer_not_found',
  read: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (isBatonError(error, code)) return undefined;
    throw error;
  }
}

/**
 * The token list, or undefined when this target's token may not read it (`forbidden`): the list is
 * admin-only, so reading it also answers whether the token may administer, without writing anything.
 */
export async function tokensIfAdmin(
  t: Pick<SetupTarget, 'listTokens'>,
): Promise<readonly PrincipalToken[] | undefined> {
  try {
    return await t.listTokens();
  } catch (error) {
    if (isBatonError(error, 'forbidden')) return undefined;
    throw error;
  }
}

export function httpTarget(admin: AdminClient): SetupTarget {
  // Read once per apply (the plan asks per producer entry; the API lists them all at once).
  let producers: ReturnType<AdminClient['listContinuityProducers']> | undefined;
  return {
    getDomain: () => absentAs('domain_not_found', () => admin.getDomain()),
    configureDomain: (c) => admin.configureDomain(c),
    getProfile: (id, v) => absentAs('profile_not_found', () => admin.getProfile(id, v)),
    registerProfile: (d) => admin.registerProfile(d),
    getAuthority: (id) => absentAs('authority_not_found', () => admin.getAuthority(id)),
    createAuthority: (a) => admin.createAuthority(a),
    listTokens: () => admin.listTokens(),
    createToken: (t) => admin.createToken(t),
    getIssuer: async (issuer) => {
      const found = await absentAs('mission_issuer_not_found', () => admin.getMissionIssuer(issuer));
      return found === undefined
        ? undefined
        : {
            pinDigest: found.pinDigest,
            pin: found.pin,
            pushBearer: found.pushBearer,
            pushBearerDigest: found.pushBearerDigest,
            pollBearerRef: found.pollBearerRef,
          };
    },
    pinIssuer: (body) => admin.pinMissionIssuer(body),
    replaceIssuerBearer: (issuer, body) => admin.replaceMissionIssuerBearer(issuer, body),
    mayAdminister: async () => (await tokensIfAdmin({ listTokens: () => admin.listTokens() })) !== undefined,
    getProducer: async (producer) =>
      (await (producers ??= admin.listContinuityProducers())).find((p) => p.producer === producer),
    pinProducer: (producer, keys) => admin.pinContinuityProducer(producer, keys),
    unpinProducer: (producer) => admin.unpinContinuityProducer(producer),
  };
}

/** The evidence actor of every write `serve --config` makes. */
export const CONFIG_ACTOR = 'config:serve';

export function storeTarget(engine: StoreEngine, service: OccurrencesService): SetupTarget {
  return {
    getDomain: () => absentAs('domain_not_found', () => service.getDomain()),
    configureDomain: (c) => service.configureDomain(c, CONFIG_ACTOR),
    getProfile: (id, v) => absentAs('profile_not_found', () => service.getProfile(id, v)),
    registerProfile: (d) => service.registerProfile(d, CONFIG_ACTOR),
    getAuthority: (id) => absentAs('authority_not_found', () => service.getAuthority(id)),
    createAuthority: (a) => service.createAuthority(a, CONFIG_ACTOR),
    listTokens: () => listTokens(engine),
    createToken: (t) => createToken(engine, t, { clock: systemClock, actor: CONFIG_ACTOR }),
    getIssuer: async (issuer) => {
      const found = await new IssuerRegistry(engine).get(issuer);
      return found === undefined
        ? undefined
        : {
            pinDigest: found.pinDigest,
            pin: found.pin,
            pushBearer: found.bearerDigest !== null,
            pushBearerDigest: found.bearerDigest,
            pollBearerRef: found.pollBearerRef,
          };
    },
    pinIssuer: async (body) =>
      new IssuerRegistry(engine).register(readIssuerRegistration(body), CONFIG_ACTOR, systemClock.wallMs()),
    // Read as the API reads it, against the stored pin (refuseIssuerRefs held the file's poll
    // reference to this server's scope before the store was opened).
    replaceIssuerBearer: async (issuer, body) => {
      const registry = new IssuerRegistry(engine);
      const credential = readBearerReplacement(body, (await registry.require(issuer)).pin);
      return registry.replaceBearer(issuer, credential, CONFIG_ACTOR, systemClock.wallMs());
    },
    // serve --config writes as the store's owner.
    mayAdminister: () => Promise.resolve(true),
    getProducer: (producer) => new ProducerKeys(engine).get(producer),
    // Read again as the API reads a pin: the store never takes a key the reader did not check.
    pinProducer: (producer, keys) =>
      new ProducerKeys(engine).pin(readProducerPin({ producer, keys }), CONFIG_ACTOR, systemClock.wallMs()),
    unpinProducer: (producer) => new ProducerKeys(engine).unpin(producer, CONFIG_ACTOR, systemClock.wallMs()),
  };
}
