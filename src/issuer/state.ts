/**
 * The reference issuer's state: missions, clients, keys, receivers and faults, and the one place
 * a lifecycle transition is committed — which then emits one SET per receiver audience (MSG-03:
 * on every transition, one audience per SET, `version` strictly monotonic from 1). Expiry is
 * applied lazily: an admin access, or a permitted client's, after `mission_expiry` first commits
 * `expired` (a client's access that is not permitted commits nothing: MST-06).
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { JsonObject, JsonValue } from '../core/json.js';
import { missionAnchor } from '../missions/index.js';
import { ClientRegistry } from './client-auth.js';
import type { Delivery, Receiver } from './delivery.js';
import { FaultBox, SET_FAULTS, STATUS_FAULTS, type SetFault, type StatusFault } from './faults.js';
import type { IssuerKeyRing } from './keys.js';
import {
  commitTransition,
  judgeOperation,
  mayRequest,
  rolesIn,
  type IssuedMission,
  type LifecycleOperation,
  type OperationVerdict,
  type RequestedOperation,
  type Transition,
} from './model.js';
import { newJti, setClaims, signClaims, verificationClaims } from './sign.js';
import { SET_TYP } from '../missions/index.js';

export interface IssuerConfig {
  readonly relianceSec: number;
  readonly setLifetimeSec: number;
  readonly tokenLifetimeSec: number;
  /** `mission_max_stale_seconds` advertised; null: the metadata omits the OPTIONAL member. */
  readonly maxStaleSeconds: number | null;
  readonly rateLimitPerMinute: number;
}

export interface NewMission {
  readonly intent: JsonObject;
  readonly authoritySet: JsonValue[];
  readonly missionExpiryMs: number;
  readonly clients: readonly string[];
  readonly subjectClient: string | null;
  readonly approverClient: string | null;
  readonly audiences: readonly string[];
}

/** What an unknown id is checked against, so that it gets the same checks as a known one (MST-06). */
const NO_MISSION: IssuedMission = Object.freeze({
  id: '',
  state: 'expired',
  version: 0,
  intent: {},
  intentHash: '',
  authoritySet: [],
  authorityHash: '',
  missionExpiryMs: 0,
  clients: [],
  subjectClient: null,
  approverClient: null,
  audiences: [],
  history: [],
});

export class IssuerState {
  origin = '';
  readonly missions = new Map<string, IssuedMission>();
  readonly clients = new ClientRegistry();
  readonly delivery: Delivery;
  readonly statusFaults = new FaultBox<StatusFault>(STATUS_FAULTS);
  readonly setFaults = new FaultBox<SetFault>(SET_FAULTS);
  readonly #held = new Map<string, { jti: string; set: string }>();
  readonly #calls = new Map<string, { windowStart: number; count: number }>();
  /** Requests that reached the Status endpoint, answered or not (tests count what a consumer sent). */
  statusRequests = 0;

  constructor(
    readonly keys: IssuerKeyRing,
    readonly clock: Clock,
    readonly config: IssuerConfig,
    delivery: Delivery,
  ) {
    this.delivery = delivery;
  }

  /** The approval event: a new Mission, `active`, version 1, anchors computed (MCO-03). */
  async create(input: NewMission): Promise<IssuedMission> {
    const id = `msn_${randomBytes(24).toString('base64url')}`; // 192 bits (MCO-04)
    const now = this.clock.wallMs();
    const approval: Transition = {
      version: 1,
      state: 'active',
      priorState: null,
      operation: 'approve',
      committedAtMs: now,
      reason: null,
    };
    const mission: IssuedMission = {
      id,
      state: 'active',
      version: 1,
      intent: input.intent,
      intentHash: missionAnchor('intent', this.origin, input.intent),
      authoritySet: input.authoritySet,
      authorityHash: missionAnchor('authority', this.origin, input.authoritySet),
      missionExpiryMs: input.missionExpiryMs,
      clients: input.clients,
      subjectClient: input.subjectClient,
      approverClient: input.approverClient,
      audiences: input.audiences,
      history: [approval],
    };
    this.missions.set(id, mission);
    await this.#emit(mission, approval);
    return mission;
  }

  /** The mission (the admin API), after committing `expired` if its `mission_expiry` has passed. */
  async get(id: string): Promise<IssuedMission | undefined> {
    const mission = this.missions.get(id);
    if (mission !== undefined) await this.#expireIfDue(mission);
    return mission;
  }

  /** Visible to `clientId` (and disclosed to `audience` when one is asked about). */
  async visible(id: string, clientId: string, audience?: string): Promise<IssuedMission | undefined> {
    return this.#permitted(
      id,
      (m) => m.clients.includes(clientId) && (audience === undefined || m.audiences.includes(audience)),
    );
  }

  /** The mission if `clientId` may request `operation` on it (status draft "Authorization"). */
  async mayOperate(
    id: string,
    clientId: string,
    operation: RequestedOperation,
  ): Promise<IssuedMission | undefined> {
    const administrator = this.clients.isAdministrator(clientId);
    return this.#permitted(id, (m) => mayRequest(rolesIn(m, clientId, administrator), operation));
  }

  /**
   * The mission if `permits` holds for it; undefined for an unknown and a not-permitted id alike
   * (MST-06: indistinguishable, timing included). Both run the same lookup and the same check (an
   * unknown id is checked against a stand-in), and neither commits anything: a due expiry is
   * committed on a permitted access only, so a caller who may not see a Mission cannot change it,
   * nor time the expiry's SETs to learn that it exists.
   */
  async #permitted(
    id: string,
    permits: (mission: IssuedMission) => boolean,
  ): Promise<IssuedMission | undefined> {
    const known = this.missions.get(id);
    const permitted = permits(known ?? NO_MISSION);
    if (known === undefined || !permitted) return undefined;
    await this.#expireIfDue(known);
    return known;
  }

  async #expireIfDue(mission: IssuedMission): Promise<void> {
    if (
      this.clock.wallMs() >= mission.missionExpiryMs &&
      judgeOperation(mission, 'expire').kind === 'apply'
    ) {
      await this.#commit(mission, 'expire', 'mission_expiry reached');
    }
  }

  async operate(
    mission: IssuedMission,
    operation: LifecycleOperation,
    reason: string | null,
  ): Promise<OperationVerdict> {
    const verdict = judgeOperation(mission, operation);
    if (verdict.kind === 'apply') await this.#commit(mission, operation, reason);
    return verdict;
  }

  async narrow(mission: IssuedMission, authoritySet: JsonValue[]): Promise<void> {
    mission.authoritySet = authoritySet;
    mission.authorityHash = missionAnchor('authority', this.origin, authoritySet);
    return Promise.resolve();
  }

  async #commit(mission: IssuedMission, operation: LifecycleOperation, reason: string | null): Promise<void> {
    const verdict = judgeOperation(mission, operation);
    if (verdict.kind !== 'apply') return;
    await this.#emit(mission, commitTransition(mission, operation, verdict.to, this.clock.wallMs(), reason));
  }

  async #emit(mission: IssuedMission, transition: Transition): Promise<void> {
    for (const audience of mission.audiences) {
      for (const receiver of this.delivery.receiversFor(audience))
        await this.#deliver(receiver, mission, transition);
    }
  }

  async #deliver(receiver: Receiver, mission: IssuedMission, transition: Transition): Promise<void> {
    const fault = this.setFaults.take();
    const input = {
      origin: this.origin,
      audience: receiver.audience,
      mission,
      transition,
      nowMs: this.clock.wallMs(),
      lifetimeSec: this.config.setLifetimeSec,
    };
    const claims = setClaims(input, fault);
    const jti = claims['jti'] as string;
    const set = await signClaims(claims, this.keys.current, SET_TYP, fault);
    if (fault === 'drop') return this.delivery.dropped(receiver, jti);
    if (fault === 'reorder') {
      this.#held.set(receiver.id, { jti, set });
      return;
    }
    this.delivery.send(receiver, jti, set);
    if (fault === 'replay') this.delivery.send(receiver, jti, set);
    if (fault === 'replay_other_bytes') {
      const other = setClaims({ ...input, jti, nowMs: input.nowMs + 1000 }, undefined);
      this.delivery.send(receiver, jti, await signClaims(other, this.keys.current, SET_TYP, undefined));
    }
    const held = this.#held.get(receiver.id);
    if (held !== undefined) {
      this.#held.delete(receiver.id);
      this.delivery.send(receiver, held.jti, held.set);
    }
  }

  /** An SSF verification event for one receiver (the liveness probe of A3.5). */
  async verify(receiver: Receiver, state: string | null): Promise<void> {
    const claims = verificationClaims(
      this.origin,
      receiver.audience,
      state,
      this.clock.wallMs(),
      this.config.setLifetimeSec,
    );
    this.delivery.send(
      receiver,
      claims['jti'] as string,
      await signClaims(claims, this.keys.current, SET_TYP, undefined),
    );
  }

  /** Per-consumer fixed-window rate limit (MST-06); the seconds to wait when over it. */
  rateLimited(clientId: string): number | undefined {
    const now = this.clock.wallMs();
    const entry = this.#calls.get(clientId);
    if (entry === undefined || now - entry.windowStart >= 60_000) {
      this.#calls.set(clientId, { windowStart: now, count: 1 });
      return undefined;
    }
    entry.count += 1;
    if (entry.count <= this.config.rateLimitPerMinute) return undefined;
    return Math.max(1, Math.ceil((entry.windowStart + 60_000 - now) / 1000));
  }

  newJti(): string {
    return newJti();
  }
}
