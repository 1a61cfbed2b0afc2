/**
 * The Mission consumer of a running server (issue 11 §2; build spec A3.2, A3.4, A3.5): the pinned
 * issuer registry, one key source per issuer (jose's createRemoteJWKSet over the pinned
 * `jwks_uri`, every key it verifies with archived in `msn_keys`), one Status client per issuer
 * (nonce, private_key_jwt), the RFC 8935 push receiver and the RFC 8936 poll rounds. It applies
 * only what verified (C-A29) and only through the harness service, which commits the view, the
 * stop propagation and the Harness Evidence in one transaction; the answer follows the COMMIT.
 * Pushed lifecycle SETs of one issuer that arrive together share that transaction (its signal
 * batcher, issue 11 §8); each push is still answered, counted and gap-checked for itself.
 */
import type { Clock } from '../core/clock.js';
import type { ForeignSigningKey } from '../core/jose.js';
import { digestEquals } from '../core/digest.js';
import { BatonError, errorCodeOf, isBatonError } from '../core/errors.js';
import {
  advertisedReliance,
  bearerDigest,
  isActive,
  MissionStatusClient,
  parseAuthenticatedPush,
  presentedBearer,
  remoteMissionKeys,
  SetPoller,
  SignalBatcher,
  setJti,
  type FetchLike,
  type IssuerPin,
  type MissionKeySource,
  type MissionsService,
  type PushAnswer,
  type PushRequest,
  type SeenOutcome,
  type SignalResult,
  type StatusFetchResult,
  type VerifiedMissionSignal,
  type VerifiedMissionStatus,
  type VerifiedSet,
  type SetExpectation,
} from '../missions/index.js';
import type { StoreEngine } from '../store/engine.js';
import { IssuerRegistry, StoredKeyArchive, type RegisteredIssuer } from '../store/missions-issuers.js';
import type { MissionCheckResult, MissionMetrics } from './mission-metrics.js';
import {
  clientKeyOf,
  scopedSecretResolver,
  unusablePollBearer,
  unusableRef,
  type SecretResolver,
  type SecretScope,
  type UnusableRef,
} from './mission-secrets.js';

export interface MissionConsumerOptions {
  readonly engine: StoreEngine;
  readonly harness: MissionsService;
  readonly clock: Clock;
  readonly metrics: MissionMetrics;
  /**
   * What a registered secret reference may reach on this host (mission-secrets.ts; `baton serve
   * --secret-dir`). Default: `env:BATON_SECRET_*` only, no file.
   */
  readonly secretScope?: SecretScope;
  /** How references are read (default: confined to `secretScope`). */
  readonly resolveSecret?: SecretResolver;
  readonly fetch?: FetchLike;
  /** A background step failed (a gap's Status check, a poll round): logged by the server. */
  readonly onError?: (error: unknown, what: string) => void;
  /** jose's refetch cooldown for an unknown kid (default 30 s, A5). */
  readonly jwksCooldownMs?: number;
}

export type CheckOutcome =
  | {
      readonly kind: 'verified';
      readonly status: VerifiedMissionStatus;
      readonly applied: boolean;
      readonly stopped: number;
    }
  | { readonly kind: 'unknown'; readonly result: StatusFetchResult & { kind: 'unknown' } };

export interface PollOutcome {
  readonly issuer: string;
  readonly applied: number;
  readonly duplicates: number;
  readonly refused: number;
  readonly error: string | null;
}

const AUTH_FAILED: PushAnswer = {
  status: 401,
  body: { err: 'authentication_failed', description: 'stream bearer missing or wrong' },
};

const UNKNOWN_RESULT: Readonly<Record<string, MissionCheckResult>> = {
  refused: 'refused',
  not_found: 'not_found',
  unauthorized: 'unauthorized',
  rate_limited: 'rate_limited',
};

/** A pin's client key and the reference's text it was parsed from (mutable: reloaded in place). */
interface LoadedClientKey {
  text: string;
  key: ForeignSigningKey;
}

export class MissionConsumer {
  readonly registry: IssuerRegistry;
  readonly archive: StoredKeyArchive;
  readonly #o: MissionConsumerOptions;
  readonly #keys = new Map<string, MissionKeySource>();
  readonly #clients = new Map<string, MissionStatusClient>();
  readonly #clientKeys = new Map<string, LoadedClientKey>();
  readonly #pollers = new Map<string, SetPoller>();
  readonly #batchers = new Map<string, SignalBatcher>();
  /**
   * The pin digest the per-issuer entries above (key source, Status client and its holds, client
   * key, poller) were built for: an issuer unpinned and pinned again with another pin starts
   * afresh, never with the old pin's endpoints, keys or audience (`#sync`).
   */
  readonly #builtFor = new Map<string, string>();
  /** What a registration's references may name (the issuer routes refuse anything else). */
  readonly secretScope: SecretScope;
  readonly #resolveSecret: SecretResolver;

  constructor(o: MissionConsumerOptions) {
    this.#o = o;
    this.secretScope = o.secretScope ?? { dirs: [] };
    this.#resolveSecret = o.resolveSecret ?? scopedSecretResolver(this.secretScope);
    this.registry = new IssuerRegistry(o.engine);
    this.archive = new StoredKeyArchive(o.engine, () => o.clock.wallMs());
  }

  get metrics(): MissionMetrics {
    return this.#o.metrics;
  }

  keysFor(pin: IssuerPin): MissionKeySource {
    let keys = this.#keys.get(pin.issuer);
    if (keys === undefined) {
      keys = remoteMissionKeys({
        origin: pin.issuer,
        jwksUri: pin.jwks_uri,
        archive: this.archive,
        ...(this.#o.jwksCooldownMs !== undefined && { cooldownMs: this.#o.jwksCooldownMs }),
      });
      this.#keys.set(pin.issuer, keys);
    }
    return keys;
  }

  /**
   * The pin's client key as its reference reads now, parsed again only when the text changed: a
   * key file rotated or fixed in place is used at the next check, no restart. `key_invalid` when
   * it cannot be used. The entry is one object per issuer, so the Status client's getter always
   * sees the key last loaded.
   */
  #loadClientKey(pin: IssuerPin): LoadedClientKey {
    const text = this.#resolveSecret(pin.client.key_ref);
    const entry = this.#clientKeys.get(pin.issuer);
    if (entry?.text === text) return entry;
    const key = clientKeyOf(pin, () => text);
    if (entry === undefined) {
      const loaded = { text, key };
      this.#clientKeys.set(pin.issuer, loaded);
      return loaded;
    }
    entry.text = text;
    entry.key = key;
    return entry;
  }

  #client(pin: IssuerPin, loaded: LoadedClientKey): MissionStatusClient {
    let client = this.#clients.get(pin.issuer);
    if (client === undefined) {
      client = new MissionStatusClient({
        pin,
        clientKey: () => loaded.key,
        keys: this.keysFor(pin),
        clock: this.#o.clock,
        ...(this.#o.fetch !== undefined && { fetch: this.#o.fetch }),
      });
      this.#clients.set(pin.issuer, client);
    }
    return client;
  }

  /**
   * The first secret reference of a registration this server could never use (mission-secrets.ts
   * `unusableRef`), read through this server's own resolver: the routes refuse such a registration
   * before storing it, since a pin is immutable.
   */
  unusableRef(reg: {
    readonly pin: IssuerPin;
    readonly pollBearerRef: string | null;
  }): UnusableRef | undefined {
    return unusableRef(reg, this.#resolveSecret);
  }

  /**
   * Why a replacement poll bearer reference is unusable on this server (read through its own
   * resolver), judged without the client key: a broken key must not block a bearer rotation.
   */
  unusablePollBearer(ref: string): UnusableRef | undefined {
    return unusablePollBearer(ref, this.#resolveSecret);
  }

  /**
   * The issuer's Status client, or — when its client key cannot be used — a non-retryable
   * `mission_client_key_unusable`: a configuration fault here, which a retryable `unavailable`
   * would pass off as an issuer outage. Nothing is sent; the view is not touched. Every check reads
   * the reference again: a fixed or rotated file is used without a restart, and a file that became
   * unusable after a good load is refused, not shadowed by the key loaded before.
   */
  #clientOrRefusal(pin: IssuerPin): MissionStatusClient {
    try {
      return this.#client(pin, this.#loadClientKey(pin));
    } catch (error) {
      if (!isBatonError(error, 'key_invalid') && !isBatonError(error, 'key_unsupported')) throw error;
      this.#o.metrics.countCheck('client_key_unusable');
      throw new BatonError(
        'mission_client_key_unusable',
        `the client key of issuer ${pin.issuer} (client.key_ref ${pin.client.key_ref}) cannot be used: ${error.message}`,
        { issuer: pin.issuer, path: 'client.key_ref' },
        { cause: error },
      );
    }
  }

  /**
   * Drop what this process built for an issuer under another pin than `pinned`'s (an unpin and a
   * re-pin, here or by another server of the deployment), before anything of it is used again.
   */
  #sync(pinned: RegisteredIssuer): void {
    const built = this.#builtFor.get(pinned.issuer);
    if (built === pinned.pinDigest) return;
    if (built !== undefined) this.#forget(pinned.issuer);
    this.#builtFor.set(pinned.issuer, pinned.pinDigest);
  }

  /** Forget an issuer's per-process entries (unpinned, or pinned again with another pin). */
  #forget(issuer: string): void {
    this.#keys.delete(issuer);
    this.#clients.delete(issuer);
    this.#clientKeys.delete(issuer);
    this.#pollers.delete(issuer);
    this.#builtFor.delete(issuer);
  }

  /**
   * Stop trusting a pinned issuer (docs/missions.md "Unpinning an issuer"; the store does the work
   * in one transaction, `IssuerRegistry.unpin`), and forget this process's entries for it. Other
   * servers of the deployment learn it from the store: each use reads the registry again.
   */
  async unpin(issuer: string, actor: string): Promise<'removed' | 'absent'> {
    const status = await this.registry.unpin(issuer, actor, this.#o.clock.wallMs());
    this.#forget(issuer);
    return status;
  }

  // --- Status (A3.2) ---------------------------------------------------------------------------

  /**
   * Fetch and verify one Status answer, then apply it (verified) or record the refusal (the view
   * becomes unknown: refused, 404, 401). 429, 503 and network failures change no view; a stale
   * view pauses work by itself (A3.5). After a 429, or a 503 with a Retry-After, nothing is sent
   * to that issuer until it passed (the client's hold, status-backoff.ts): the operator's check
   * and the harness's fetcher alike answer `rate_limited` / `unavailable` at once. Never network
   * I/O inside a store transaction.
   */
  async check(origin: string, missionId: string): Promise<CheckOutcome> {
    const result = await this.#fetch(origin, missionId);
    if (result.kind === 'unknown') return { kind: 'unknown', result };
    const applied = await this.#o.harness.applyVerifiedStatus(result.status);
    return { kind: 'verified', status: result.status, applied: applied.applied, stopped: applied.stopped };
  }

  /**
   * The harness's StatusFetcher (A3.1 step 3): a verified answer, or a typed refusal. It does not
   * apply the answer: the harness does, in its own transaction (the port's contract) — applying it
   * here too wrote every fetched answer's evidence and view update twice.
   */
  readonly fetchStatus = async (origin: string, missionId: string): Promise<VerifiedMissionStatus> => {
    const result = await this.#fetch(origin, missionId);
    if (result.kind === 'verified') return result.status;
    throw unknownError(result);
  };

  /** One Status fetch, counted; a refused, 404 or 401 answer recorded (the view becomes unknown). */
  async #fetch(origin: string, missionId: string): Promise<StatusFetchResult> {
    const pinned = await this.registry.require(origin);
    this.#sync(pinned);
    const client = this.#clientOrRefusal(pinned.pin);
    let result: StatusFetchResult;
    try {
      result = await client.check(missionId);
    } catch (error) {
      // A key fault while checking (not the client key's: #clientOrRefusal checked it): unknown.
      if (!isBatonError(error, 'key_invalid') && !isBatonError(error, 'key_unsupported')) throw error;
      result = {
        kind: 'unknown',
        reason: 'unavailable',
        httpStatus: null,
        retryAfterSec: null,
        refusal: null,
        cause: error,
      };
    }
    if (result.kind === 'verified') {
      this.#o.metrics.countCheck(isActive(result.status.state) ? 'active' : 'not_active');
      // Applied only while the origin is still pinned with this pin (the applying transaction checks).
      return { ...result, status: { ...result.status, pinDigest: pinned.pinDigest } };
    }
    // A7#13: a check held back by an earlier 429 or 503 sent nothing; counted apart from those.
    this.#o.metrics.countCheck(
      result.backedOff === true ? 'backed_off' : (UNKNOWN_RESULT[result.reason] ?? 'unavailable'),
    );
    if (result.reason === 'refused' || result.reason === 'not_found' || result.reason === 'unauthorized') {
      const check = result.refusal?.check ?? `http_${result.httpStatus ?? 0}`;
      await this.#o.harness.recordStatusRefused(origin, missionId, check, result.reason);
    }
    return result;
  }

  // --- SET receipt (A3.4) ----------------------------------------------------------------------

  /**
   * RFC 8935 push to `POST /v1/missions/signals/{issuer}`: 202 after COMMIT, or the 400/401 body.
   * `repeated` names a header sent more than once (Authorization, Content-Type;
   * src/server/transport.ts): refused `invalid_request` before the bearer is compared, since
   * which copy is the transmitter's would depend on who reads the request.
   */
  async receivePush(issuer: string, request: PushRequest, repeated?: string): Promise<PushAnswer> {
    if (repeated !== undefined) {
      this.#o.metrics.countSet('invalid_request');
      return {
        status: 400,
        body: { err: 'invalid_request', description: `more than one ${repeated} header` },
      };
    }
    // Read per push, never cached: a bearer replaced (`PUT …/bearer`) is the only one taken from
    // its COMMIT on, and the old one gets the 401 an unknown bearer gets.
    const pinned = await this.registry.get(issuer);
    // An unknown issuer and a wrong bearer answer alike: the route is no oracle of the registry.
    if (
      pinned?.bearerDigest === null ||
      pinned === undefined ||
      !pushBearerMatches(request, pinned.bearerDigest)
    ) {
      this.#o.metrics.countSet('authentication_failed');
      return AUTH_FAILED;
    }
    this.#sync(pinned);
    const parsed = await parseAuthenticatedPush(request, {
      keys: this.keysFor(pinned.pin),
      expect: expectation(pinned.pin),
      nowMs: this.#o.clock.wallMs(),
    });
    if (!parsed.ok) {
      this.#o.metrics.countSet(parsed.answer.status === 202 ? 'applied' : parsed.answer.body.err);
      return parsed.answer;
    }
    let outcome: SeenOutcome;
    try {
      outcome = await this.#apply(pinned, parsed.set);
    } catch (error) {
      // Unpinned (or pinned again with another pin) between the bearer check and the applying
      // transaction: answered as a push from an unknown issuer, nothing applied.
      if (!isBatonError(error, 'mission_issuer_not_found')) throw error;
      this.#o.metrics.countSet('authentication_failed');
      return AUTH_FAILED;
    }
    if (outcome === 'conflict')
      return {
        status: 400,
        body: { err: 'invalid_request', description: 'jti already received with other bytes' },
      };
    return { status: 202 };
  }

  /**
   * One verified SET, replay-checked and applied, liveness recorded; answered after its COMMIT. A
   * lifecycle SET goes through its issuer's batcher: pushes arriving while one transaction is in
   * flight share the next one (issue 11 §8), each told its own answer or its own error.
   */
  async #apply(pinned: RegisteredIssuer, set: VerifiedSet): Promise<SeenOutcome> {
    if (set.kind === 'stream') {
      const { jti, digest } = setJti(set);
      const at = this.#o.clock.wallMs();
      const seen = await this.registry.recordStreamSet(pinned.issuer, jti, digest, at, set.expiresAt);
      this.#o.metrics.countSet(seen === 'new' ? 'stream' : seen === 'same' ? 'duplicate' : 'invalid_request');
      return seen === 'new' ? 'new' : seen === 'same' ? 'duplicate' : 'conflict';
    }
    const signal = { ...set.signal, pinDigest: pinned.pinDigest };
    const applied = await this.#batcher(pinned.issuer).apply(signal);
    return this.#counted(signal, applied.result, applied.gap);
  }

  #batcher(issuer: string): SignalBatcher {
    let batcher = this.#batchers.get(issuer);
    if (batcher === undefined) {
      batcher = pushBatcher(
        { harness: this.#o.harness, registry: this.registry, clock: this.#o.clock },
        issuer,
      );
      this.#batchers.set(issuer, batcher);
    }
    return batcher;
  }

  /**
   * A poll round's verified SETs (issue 11 §8): the lifecycle ones replay-checked and applied in
   * ONE harness transaction, in the answer's order; stream events one by one; liveness once.
   */
  async #applyAll(pinned: RegisteredIssuer, sets: readonly VerifiedSet[]): Promise<(SeenOutcome | null)[]> {
    const out: (SeenOutcome | null)[] = [];
    const lifecycle = sets.flatMap((s, i) =>
      s.kind === 'lifecycle' ? [{ i, signal: { ...s.signal, pinDigest: pinned.pinDigest } }] : [],
    );
    for (const [i, s] of sets.entries()) if (s.kind === 'stream') out[i] = await this.#apply(pinned, s);
    const answers = await this.#o.harness.applyVerifiedSignals(lifecycle.map((l) => l.signal));
    answers.forEach((a, k) => {
      const { i, signal } = lifecycle[k] as (typeof lifecycle)[number];
      if (!a.ok) {
        out[i] = null;
        this.#o.onError?.(a.error, `apply SET ${signal.jti}`);
        return;
      }
      out[i] = this.#counted(signal, a.result, a.gap);
    });
    if (answers.some((a) => a.ok)) await this.registry.touchStream(pinned.issuer, this.#o.clock.wallMs());
    return sets.map((_, i) => out[i] ?? null);
  }

  /** Metrics and the gap's Status check of one applied lifecycle SET; what the poll/push answers. */
  #counted(signal: VerifiedMissionSignal, result: SignalResult, gap: boolean): SeenOutcome {
    this.#o.metrics.countSet(result === 'replay_conflict' ? 'invalid_request' : result);
    if (gap) this.#background(this.check(signal.origin, signal.missionId), 'gap status check');
    if (result === 'replay_conflict') return 'conflict';
    return result === 'duplicate' ? 'duplicate' : 'new';
  }

  #background(p: Promise<unknown>, what: string): void {
    p.catch((error: unknown) => this.#o.onError?.(error, what));
  }

  // --- RFC 8936 poll ---------------------------------------------------------------------------

  /**
   * The issuer's poller, its bearer resolved again from the reference stored NOW: `pollAll` reads
   * the registry every round, so a bearer replaced through `PUT …/bearer` (another reference) or
   * rotated in its file is presented from the next round on, the poller's pending acknowledgements
   * kept (a rebuilt poller would drop them and have every SET redelivered).
   */
  #poller(pinned: RegisteredIssuer): SetPoller | undefined {
    const endpoint = pinned.pin.stream?.endpoint;
    if (pinned.pin.stream?.delivery !== 'urn:ietf:rfc:8936' || endpoint === undefined) return undefined;
    if (pinned.pollBearerRef === null) return undefined;
    this.#sync(pinned);
    const bearer = this.#resolveSecret(pinned.pollBearerRef);
    let poller = this.#pollers.get(pinned.issuer);
    if (poller !== undefined) poller.useBearer(bearer);
    else {
      poller = new SetPoller({
        endpoint,
        bearer,
        keys: this.keysFor(pinned.pin),
        expect: expectation(pinned.pin),
        clock: this.#o.clock,
        onSet: (set) => this.#apply(pinned, set),
        onSets: (sets) => this.#applyAll(pinned, sets),
        ...(this.#o.fetch !== undefined && { fetch: this.#o.fetch }),
      });
      this.#pollers.set(pinned.issuer, poller);
    }
    return poller;
  }

  /**
   * One poll round for every poll stream pinned NOW (the registry is read each round, so an issuer
   * unpinned by any server of the deployment is polled no more, and its poller is dropped); a
   * failing stream is recorded, never fatal.
   */
  async pollAll(): Promise<PollOutcome[]> {
    const out: PollOutcome[] = [];
    const pinnedNow = await this.registry.list();
    const names = new Set(pinnedNow.map((p) => p.issuer));
    for (const issuer of [...this.#builtFor.keys()]) if (!names.has(issuer)) this.#forget(issuer);
    for (const pinned of pinnedNow) {
      let poller: SetPoller | undefined;
      try {
        poller = this.#poller(pinned);
      } catch (error) {
        out.push(await this.#pollFailed(pinned.issuer, error));
        continue;
      }
      if (poller === undefined) continue;
      try {
        const round = await poller.pollOnce();
        await this.registry.recordPoll(pinned.issuer, this.#o.clock.wallMs(), null);
        for (const _ of Object.keys(round.refused)) this.#o.metrics.countSet('refused_by_poll');
        out.push({
          issuer: pinned.issuer,
          applied: round.applied.length,
          duplicates: round.duplicates,
          refused: Object.keys(round.refused).length,
          error: null,
        });
      } catch (error) {
        out.push(await this.#pollFailed(pinned.issuer, error));
      }
    }
    return out;
  }

  async #pollFailed(issuer: string, error: unknown): Promise<PollOutcome> {
    const code = errorCodeOf(error);
    await this.registry.recordPoll(issuer, this.#o.clock.wallMs(), code);
    this.#o.onError?.(error, `poll ${issuer}`);
    return { issuer, applied: 0, duplicates: 0, refused: 0, error: code };
  }
}

/**
 * The batcher of one issuer's pushed lifecycle SETs, as the server runs it (and the bench measures
 * it): each batch in ONE `applyTakenSignals` transaction and, started beside it, the stream's
 * liveness (A3.5: its SETs are verified) once for the batch; anyone of it is answered after both.
 * The liveness write is its own short transaction, not folded into the batch's: it updates the
 * issuer's one `msn_issuers` row, which inside the apply transaction would stay locked for the
 * whole batch and so serialize every SET transaction of the issuer across servers on PostgreSQL;
 * queued beside it, it shares the batch's COMMIT on SQLite (group commit). One batcher per issuer,
 * so a batch's liveness is one row.
 */
export function pushBatcher(
  o: { readonly harness: MissionsService; readonly registry: IssuerRegistry; readonly clock: Clock },
  issuer: string,
): SignalBatcher {
  return new SignalBatcher({
    applyTaken: (take) => o.harness.applyTakenSignals(take),
    alongside: () => o.registry.touchStream(issuer, o.clock.wallMs()),
  });
}

function expectation(pin: IssuerPin): SetExpectation {
  return {
    issuer: pin.issuer,
    audience: pin.audience,
    algorithms: pin.algorithms,
    maxStaleSeconds: advertisedReliance(pin),
  };
}

/** RFC 8935 §2.2 transmitter authentication: the presented bearer's digest, constant time. */
export function pushBearerMatches(request: PushRequest, digest: string): boolean {
  const presented = presentedBearer(request.authorization);
  return presented !== '' && digestEquals(bearerDigest(presented), digest);
}

/**
 * The typed error of an unknown answer. A network failure's `cause` (TLS, DNS, a refused
 * connection) is kept for logs; it never reaches the message or the details a client is shown.
 */
export function unknownError(r: StatusFetchResult & { kind: 'unknown' }): BatonError {
  const details = {
    reason: r.reason,
    httpStatus: r.httpStatus,
    retryAfterSec: r.retryAfterSec,
    ...(r.backedOff === true && { backedOff: true }),
    ...(r.refusal !== null && { check: r.refusal.check, step: r.refusal.step }),
  };
  const options = 'cause' in r ? { cause: r.cause } : undefined;
  if (r.reason === 'refused')
    return new BatonError(
      'mission_status_invalid',
      `the Status answer failed check ${r.refusal?.check ?? '?'}`,
      details,
      options,
    );
  return new BatonError(
    'mission_status_unavailable',
    `Mission Status is unavailable (${r.reason})`,
    details,
    options,
  );
}

/**
 * A consumer wired into its harness: the harness's Status fetcher (A3.1 step 3), its refresh
 * failures to `onError` (the server logs them), and the stop counter
 * `baton_harness_stops_total{decision,reason}` over committed Harness Evidence.
 */
export function wireMissionConsumer(o: MissionConsumerOptions): MissionConsumer {
  const consumer = new MissionConsumer(o);
  const onError = o.onError;
  o.harness.attach({
    fetchStatus: consumer.fetchStatus,
    onEvidence: (e) => {
      if (e.decision !== 'continue') o.metrics.countStop(e.decision, e.reason);
    },
    ...(onError !== undefined && { onError }),
  });
  return consumer;
}
