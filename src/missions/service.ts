/**
 * The harness service (DESIGN.md §1 imperative shell): each command is ONE transaction that locks
 * what it decides on — mission view, then item(s), then occurrences — applies the pure machine,
 * writes with version CAS and appends its evidence (subjects `mission:<origin>#<id>`, `work:<id>`,
 * `session:<id>`). No network I/O inside a transaction: a needed Status fetch runs before, through
 * the `StatusFetcher` port, and lands in its own transaction (A3.1 step 3). Only verified Status
 * answers and verified SETs move a view (C-A29).
 */
import type { Clock } from '../core/clock.js';
import { BatonError, isBatonError } from '../core/errors.js';
import type { IdSource } from '../core/ids.js';
import type { JsonObject } from '../core/json.js';
import {
  harnessEvidence,
  type EvidenceDraft,
  type HarnessEvidence,
  type SignedHarnessEvidence,
} from './evidence.js';
import { entryContinuesWithText, freshness, missionChecked } from './entry-check.js';
import { readItem, readRebind, readSession, readStopBehaviour, readTaint } from './inputs.js';
import { decideRebind } from './rebind.js';
import {
  decideCheck,
  decideComplete,
  decideOperatorStop,
  decideRequeue,
  decideRetry,
  decideStop,
  dependencies,
  draft,
  isRefusal,
  missionOf,
  propagationTargets,
  type Decision,
  type ParentAssessment,
  type Refusal,
} from './machine.js';
import { behaviourFor, DEFAULT_MATRIX, pin, validateMatrix, type PinnedMatrix } from './matrix.js';
import {
  isActive,
  isTerminal,
  missionSubject,
  reportedState,
  TAINT_GUARDED,
  sessionSubject,
  workSubject,
  type MissionBinding,
  type MissionRef,
  type MissionViewRecord,
  type SessionRecord,
  type StopBehaviour,
  type WorkItemRecord,
} from './model.js';
import type {
  ItemFilter,
  MissionsReader,
  MissionsRepository,
  MissionsUnitOfWork,
  OccurrenceSide,
  PlannedEvent,
  StatusFetcher,
  StoredEvent,
} from './ports.js';
import type { VerifiedMissionSignal, VerifiedMissionStatus } from './verified.js';
import {
  applySignal,
  applyStatus,
  assess,
  DEFAULT_BOUNDS,
  emptyView,
  missionStopOf,
  needsRefresh,
  signalLiveUntil,
  type Assessment,
  type StalenessBounds,
} from './view.js';

export interface HarnessOptions {
  readonly uow: MissionsUnitOfWork;
  readonly clock: Clock;
  readonly ids: IdSource;
  /** Signs with the domain key in the jws-compact envelope (C-A5). */
  readonly sign: (e: HarnessEvidence) => Promise<SignedHarnessEvidence>;
  readonly bounds?: StalenessBounds;
  readonly fetchStatus?: StatusFetcher;
  /** A Status refresh failed (the item still fails closed): the server logs it. */
  readonly onError?: HarnessErrorListener;
}

/** Told of a failure the harness fails closed on but must not lose (a Status refresh's error). */
export type HarnessErrorListener = (error: unknown, what: string) => void;

export interface DispatchAnswer {
  readonly item: WorkItemRecord;
  readonly recheckAt: number | null;
}

export type SignalResult = 'applied' | 'ignored' | 'duplicate' | 'replay_conflict';

export interface SignalAnswer {
  readonly result: SignalResult;
  readonly gap: boolean;
  readonly stopped: number;
}

/** One SET of `applyVerifiedSignals`: its answer, or why it could not be applied (nothing was). */
export type BatchedSignal =
  ({ readonly ok: true } & SignalAnswer) | { readonly ok: false; readonly error: unknown };

/** What the provider-entry check answers (A3.6); events go on the occurrence's chain. */
export interface EntryCheck {
  readonly decision: 'continue' | 'stop';
  readonly code?:
    | 'mission_not_active'
    | 'mission_status_unavailable'
    | 'mission_binding_missing'
    | 'work_item_not_dispatchable';
  /** `terminate`: the reserved occurrence is to be released in the same transaction. */
  readonly release: boolean;
  readonly checked: JsonObject;
  /** `checked`'s JCS text, where the check assembled it (`continue` from `entryContinues`). */
  readonly checkedText?: string;
}

/** HAR-21: an item that may depend on a parent Mission (a sub-agent handle, or any child item). */
const isDependent = (i: Pick<WorkItemRecord, 'parentId' | 'handle'>): boolean =>
  i.parentId !== null || i.handle !== null;

const sameBinding = (a: MissionBinding, b: MissionBinding): boolean =>
  a.mission_id === b.mission_id && a.mission_origin === b.mission_origin;

function refusalError(r: Refusal, statusError?: BatonError): BatonError {
  return withStatusError(new BatonError(r.code, r.message), statusError);
}

/**
 * A refusal or stop that followed a failed Status refresh names that failure: its code in
 * `details.statusError` and the error as `cause`, so the caller sees why the view stayed unknown
 * (an unpinned origin, a 429 or 503 hold, an unreachable issuer), not only that it did.
 */
function withStatusError(e: BatonError, statusError: BatonError | undefined): BatonError {
  if (statusError === undefined) return e;
  return new BatonError(
    e.code,
    e.message,
    { ...e.details, statusError: statusError.code },
    { cause: statusError },
  );
}

/** Told of every Harness Evidence object once its transaction committed (metrics, logs). */
export type EvidenceListener = (e: EvidenceDraft) => void;

export class MissionsService {
  readonly #o: HarnessOptions;
  readonly #bounds: StalenessBounds;
  readonly #matrices = new Map<string, PinnedMatrix>();
  #fetchStatus: StatusFetcher | undefined;
  readonly #listeners: EvidenceListener[] = [];
  readonly #errorListeners: HarnessErrorListener[] = [];
  /**
   * The evidence a running command wrote, by the repository of its transaction (a new one per
   * run), told to listeners only after its COMMIT. Not an AsyncLocalStorage: on Node 20 that makes
   * every promise of the process pay promise hooks (src/store/nesting-guard.ts).
   */
  readonly #pending = new WeakMap<MissionsRepository, EvidenceDraft[]>();

  constructor(o: HarnessOptions) {
    this.#bounds = o.bounds ?? DEFAULT_BOUNDS;
    this.#fetchStatus = o.fetchStatus;
    if (o.onError !== undefined) this.#errorListeners.push(o.onError);
    const uow = o.uow;
    this.#o = {
      ...o,
      uow: {
        read: (fn) => uow.read(fn),
        run: async (fn) => {
          const pending: EvidenceDraft[] = [];
          // PostgreSQL re-runs fn after a serialization failure: only the last run's evidence counts.
          const result = await uow.run((repo, occ) => {
            pending.length = 0;
            this.#pending.set(repo, pending);
            return fn(repo, occ);
          });
          this.#tell(pending);
          return result;
        },
      },
    };
  }

  /**
   * Late wiring by the server (the store opens before the issuer registry is read): the Status
   * fetcher of A3.1 step 3, listeners told of committed Harness Evidence, and of Status refresh
   * failures.
   */
  attach(o: {
    readonly fetchStatus?: StatusFetcher;
    readonly onEvidence?: EvidenceListener;
    readonly onError?: HarnessErrorListener;
  }): void {
    if (o.fetchStatus !== undefined) this.#fetchStatus = o.fetchStatus;
    if (o.onEvidence !== undefined) this.#listeners.push(o.onEvidence);
    if (o.onError !== undefined) this.#errorListeners.push(o.onError);
  }

  #tell(drafts: readonly EvidenceDraft[]): void {
    for (const d of drafts) for (const listen of this.#listeners) listen(d);
  }

  get bounds(): StalenessBounds {
    return this.#bounds;
  }

  #now(): number {
    return this.#o.clock.wallMs();
  }

  /** Register an immutable matrix (A3.10); a ref already bound to other content is refused. */
  async registerMatrix(given: PinnedMatrix = DEFAULT_MATRIX): Promise<PinnedMatrix> {
    // A3.10: validated here too, not only by parseMatrix: a weaker matrix never gets registered,
    // and the ref and digest are recomputed from the document, never taken from the caller.
    const m = pin(validateMatrix(given.matrix));
    if (m.ref !== given.ref || m.digest !== given.digest)
      throw new BatonError('stop_matrix_invalid', 'the matrix ref or digest does not match its document', {
        ref: given.ref,
      });
    const ok = await this.#o.uow.run((repo) => repo.insertMatrix(m, this.#now()));
    if (!ok)
      throw new BatonError('stop_matrix_invalid', `${m.ref} is already registered with other content`, {
        ref: m.ref,
      });
    this.#matrices.set(m.ref, m);
    return m;
  }

  async #matrix(repo: MissionsReader, ref: string): Promise<PinnedMatrix> {
    const cached = this.#matrices.get(ref);
    if (cached !== undefined) return cached;
    const m = await repo.getMatrix(ref);
    if (m === undefined)
      throw new BatonError('mission_binding_invalid', `stop_policy ${ref} names no registered matrix`, {
        ref,
      });
    this.#matrices.set(ref, m);
    return m;
  }

  // --- evidence ----------------------------------------------------------------------------------

  async #emit(
    repo: MissionsRepository,
    drafts: readonly EvidenceDraft[],
    now: number,
    actor: string,
    extra: PlannedEvent[] = [],
  ): Promise<void> {
    const events: PlannedEvent[] = [...extra];
    const pending = this.#pending.get(repo);
    // Outside a harness command (the entry check runs in the occurrences transaction): told now.
    if (pending === undefined) this.#tell(drafts);
    else pending.push(...drafts);
    for (const d of drafts) {
      const signed = await this.#o.sign(harnessEvidence(d, this.#o.ids.id('hrn'), now));
      const body = signed as unknown as JsonObject;
      if (d.workItem !== null && d.workItem !== undefined)
        events.push({ subject: workSubject(d.workItem), type: 'harness_evidence', body });
      if (d.sessionId !== null && d.sessionId !== undefined)
        events.push({ subject: sessionSubject(d.sessionId), type: 'harness_evidence', body });
      events.push({
        subject: missionSubject(d.mission.origin, d.mission.id),
        type: 'harness_evidence',
        body,
      });
      // The parent Mission's chain shows the stop of its dependent child too (seed §9.1).
      if (d.cause !== undefined)
        events.push({ subject: missionSubject(d.cause.origin, d.cause.id), type: 'harness_evidence', body });
    }
    await repo.appendEvents(groupBySubject(events), now, actor);
  }

  async #move(
    repo: MissionsRepository,
    before: WorkItemRecord,
    after: WorkItemRecord,
    extra: JsonObject = {},
  ): Promise<PlannedEvent> {
    await repo.updateItem(after, before.version);
    return {
      subject: workSubject(after.id),
      type: 'work_state_changed',
      body: { from: before.state, to: after.state, version: after.version, ...extra },
    };
  }

  // --- sessions and items ------------------------------------------------------------------------

  /**
   * `executor`: the lineage of the executor creating the session (src/missions/executor-scope.ts):
   * the session is in that lineage; the input may name it or no lineage, and naming another is
   * `forbidden` before anything is read or written. Undefined: an operator, as given.
   * `generation`: the executor's, refused `generation_retired` inside the transaction once a
   * takeover retired it (AOC-REQ-006).
   */
  async createSession(
    input: unknown,
    actor: string,
    executor?: string,
    generation?: number,
  ): Promise<SessionRecord> {
    const s = readSession(input);
    refuseOtherLineage(s.lineage, executor);
    return this.#o.uow.run(async (repo, occ) => {
      await this.#refuseRetiredLineage(occ, executor ?? null, generation);
      const now = this.#now();
      await this.#matrix(repo, s.binding.stop_policy);
      const rec: SessionRecord = {
        id: s.sessionId ?? this.#o.ids.id('sess'),
        lineage: executor ?? s.lineage,
        binding: s.binding,
        tainted: false,
        createdAt: now,
        version: 1,
      };
      // Ids are global (one key across lineages): a taken one is refused with the same body
      // whoever holds it, so the caller learns that it is taken and nothing of the holder.
      if (!(await repo.insertSession(rec)))
        throw new BatonError('work_item_conflict', 'the session id is taken');
      await repo.appendEvents(
        [
          {
            subject: sessionSubject(rec.id),
            type: 'session_created',
            body: { binding: rec.binding as unknown as JsonObject, lineage: rec.lineage },
          },
        ],
        now,
        actor,
      );
      return rec;
    });
  }

  /**
   * HAR-01/04/05/11/14: every governed item is bound; a child copies or narrows its parent's binding.
   * `executor`: the lineage of the executor creating it (src/missions/executor-scope.ts): the item
   * is in that lineage (the input may name it or none; another is `forbidden`, before anything is
   * read), and the session and parent item it names must be that lineage's too — another
   * lineage's, or one of no lineage, is refused exactly as an unknown id is, before anything is
   * written. Undefined: an operator, any session or parent. `generation`: the executor's, refused
   * `generation_retired` inside the transaction once a takeover retired it (AOC-REQ-006).
   */
  async createItem(
    input: unknown,
    actor: string,
    executor?: string,
    generation?: number,
  ): Promise<WorkItemRecord> {
    const f = readItem(input);
    refuseOtherLineage(f.lineage, executor);
    return this.#o.uow.run(async (repo, occ) => {
      await this.#refuseRetiredLineage(occ, executor ?? null, generation);
      const now = this.#now();
      const session = f.sessionId === null ? undefined : await repo.getSession(f.sessionId);
      if (f.sessionId !== null && !reachable(session, executor))
        throw new BatonError('session_not_found', 'no such session');
      const parent = f.parentId === null ? undefined : await repo.getItem(f.parentId);
      if (f.parentId !== null && !reachable(parent, executor))
        throw new BatonError('work_item_not_found', 'no such parent item');
      const binding = f.binding ?? parent?.binding ?? session?.binding;
      // HAR-01 / A7#16: governed work without a binding is refused at create.
      if (binding === undefined || binding === null)
        throw new BatonError('mission_binding_missing', 'governed work needs a mission_binding (HAR-01)');
      checkChild(binding, parent?.binding ?? session?.binding ?? undefined, f.handle);
      const matrix = await this.#matrix(repo, binding.stop_policy);
      const item: WorkItemRecord = {
        id: f.itemId ?? this.#o.ids.id('wrk'),
        kind: f.kind,
        // HAR-29: a child belongs to its parent's session, so a taint reaches the whole task graph.
        sessionId: f.sessionId ?? parent?.sessionId ?? null,
        lineage: executor ?? f.lineage ?? session?.lineage ?? parent?.lineage ?? null,
        parentId: f.parentId,
        binding,
        actionClass: f.actionClass,
        notBefore: f.notBefore,
        expiresAt: f.expiresAt,
        retryOf: null,
        idempotencyKey: f.idempotencyKey,
        state: 'queued',
        hold: false,
        handle: f.handle,
        occurrenceId: null,
        claimedGeneration: null,
        matrixDigest: matrix.digest,
        createdAt: now,
        updatedAt: now,
        version: 1,
      };
      // HAR-21 / seed §9: no new dependent child work under a parent Mission known to be
      // non-active (a spawn under a stopped parent must not restart what the stop ended). Unknown
      // or stale is not refused here, as the item's own Mission is not: the item is created
      // queued, and its dispatch checks the whole chain and fails closed.
      await this.#refuseParentNonActive(repo, item, now);
      return this.#insertNew(repo, item, now, actor, 'the item id is taken');
    });
  }

  /**
   * AOC-REQ-006, A7#21: a retired generation's command (dispatch, resume, complete, retry, create,
   * taint) is refused inside the command's transaction, not only when its credential is
   * authenticated (a takeover may commit in between). `generation` undefined: an operator.
   */
  async #refuseRetired(occ: OccurrenceSide, item: WorkItemRecord, generation?: number): Promise<void> {
    await this.#refuseRetiredLineage(occ, item.lineage, generation);
  }

  async #refuseRetiredLineage(
    occ: OccurrenceSide,
    lineage: string | null,
    generation: number | undefined,
  ): Promise<void> {
    if (generation === undefined || lineage === null) return;
    const current = await occ.currentGeneration(lineage);
    if (current !== null && current !== generation)
      throw new BatonError('generation_retired', 'this executor generation was retired by a takeover', {
        lineage,
      });
  }

  // --- HAR-21/23: the parent Mission chain of dependent child work --------------------------------

  /**
   * The item and its ancestors by `parent_id`, the item first. `complete: false` when a link is
   * missing or loops: the chain is then ambiguous and the check fails closed (HAR-28).
   */
  async #chainOf(
    repo: MissionsReader,
    item: WorkItemRecord,
  ): Promise<{ chain: WorkItemRecord[]; complete: boolean }> {
    const chain = [item];
    const seen = new Set([item.id]);
    for (let cur = item; cur.parentId !== null;) {
      if (seen.has(cur.parentId)) return { chain, complete: false };
      const parent = await repo.getItem(cur.parentId);
      if (parent === undefined) return { chain, complete: false };
      seen.add(parent.id);
      chain.push(parent);
      cur = parent;
    }
    return { chain, complete: true };
  }

  /**
   * HAR-21/23 (seed §9, §9.1): the worst assessment of the parent Missions `item` depends on, for
   * its action class — the first non-active one, else the first unknown or stale one; undefined
   * when it depends on none or all are active and fresh. An ambiguous chain is `unknown`. The
   * parent views are read, not locked: the caller holds the item's lock, and a parent's stop
   * propagation locks the parent's view and then this item, so the two still serialise.
   */
  async #parentAssessment(
    repo: MissionsReader,
    item: WorkItemRecord,
    now: number,
  ): Promise<ParentAssessment | undefined> {
    if (!isDependent(item)) return undefined;
    const { chain, complete } = await this.#chainOf(repo, item);
    if (!complete) return assess(undefined, undefined, item.actionClass, now, this.#bounds);
    let worst: ParentAssessment | undefined;
    for (const m of dependencies(chain)) {
      const a = assess(
        await repo.getView(m.origin, m.id),
        m.authority_hash,
        item.actionClass,
        now,
        this.#bounds,
      );
      const named = { ...a, mission: { id: m.id, origin: m.origin } };
      if (a.verdict === 'non_active') return named;
      if (a.verdict !== 'active') worst ??= named;
    }
    return worst;
  }

  /**
   * HAR-21 / seed §9: spawn and retry of dependent child work are refused under a non-active parent
   * Mission. `dependencies` leaves out the item's own Mission (dispatch checks it separately), but
   * for child work the own Mission is the parent's too — a task node copies its parent item's
   * binding, a same-Mission handle's `parent_mission` is its binding — so a known non-active own
   * Mission refuses the spawn or retry as well. Only the Mission's state counts here, as for a
   * parent view's; unknown or stale is left to the dispatch check. Other work under a Mission known
   * final is not refused but created suppressed (`#insertNew`).
   */
  async #refuseParentNonActive(repo: MissionsReader, item: WorkItemRecord, now: number): Promise<void> {
    const own = item.binding;
    if (isDependent(item) && own !== null) {
      const v = await repo.getView(own.mission_origin, own.mission_id);
      const a = assess(v, undefined, item.actionClass, now, this.#bounds);
      if (a.verdict === 'non_active')
        throw new BatonError('mission_not_active', `the Mission of this child work is ${a.state} (HAR-21)`, {
          reason: 'parent_mission_not_active',
        });
    }
    const p = await this.#parentAssessment(repo, item, now);
    if (p?.verdict === 'non_active')
      throw new BatonError('mission_not_active', `a parent Mission is ${p.state} (HAR-21)`, {
        reason: 'parent_mission_not_active',
      });
  }

  /**
   * Insert a new item (a create or a retry) and its `work_created` event. Seed §7 (HAR-13), A7#14,
   * A7#24: work whose own Mission the view knows is final — terminal, sticky (A3.3), or past its
   * `mission_expiry` — is never queued: it is created `suppressed`, with signed Harness Evidence
   * `queue_suppressed` / `suppress` / `mission_not_active` (`successor_binding_required` when
   * superseded: only a rebind to the successor lifts it) and the view's state and source (HAR-26),
   * in the same transaction. A suspended Mission may resume: its work is queued, and paused at
   * dispatch. A taken id is `work_item_conflict`, nothing written.
   */
  async #insertNew(
    repo: MissionsRepository,
    item: WorkItemRecord,
    now: number,
    actor: string,
    taken: string,
  ): Promise<WorkItemRecord> {
    const v =
      item.binding === null
        ? undefined
        : await repo.getView(item.binding.mission_origin, item.binding.mission_id);
    const stop = v === undefined ? undefined : missionStopOf(v, now);
    const final = stop !== undefined && (isTerminal(v?.state ?? null) || stop.row === 'expired');
    const made: WorkItemRecord = final ? { ...item, state: 'suppressed' } : item;
    if (!(await repo.insertItem(made))) throw new BatonError('work_item_conflict', taken);
    if (!final) {
      await repo.appendEvents([workCreated(made)], now, actor);
      return made;
    }
    const reason = stop?.state === 'superseded' ? 'successor_binding_required' : 'mission_not_active';
    // The view as assessed for the item's class (state `expired` past mission_expiry). Never
    // stored queued: the record names no prior harness state, only the resulting one.
    const a = assess(v, undefined, item.actionClass, now, this.#bounds);
    const evidence = {
      ...draft(item, made, a, 'queue_suppressed', 'suppress', reason),
      prior: null,
    };
    await this.#emit(repo, [evidence], now, actor, [workCreated(made)]);
    return made;
  }

  // --- A3.1 dispatch / resume --------------------------------------------------------------------

  /**
   * Dispatch or resume one item (A3.1). A stop is COMMITTED (transition + evidence) and then
   * answered with its code (C-A25); only `continue` returns normally.
   */
  async dispatch(itemId: string, actor: string, generation?: number): Promise<DispatchAnswer> {
    const failed = await this.#refreshIfNeeded(itemId);
    const d = await this.#o.uow.run((repo, occ) =>
      this.#dispatchInTx(repo, occ, itemId, actor, generation, failed?.code),
    );
    if (d.kind === 'refused') throw refusalError(d, failed);
    if (d.kind === 'stop') {
      const stop = new BatonError(d.code, `the item was ${d.item.state}: ${d.evidence.reason}`, {
        itemId,
        state: d.item.state,
        decision: d.behaviour,
        reason: d.evidence.reason,
      });
      throw withStatusError(stop, failed);
    }
    return { item: d.item, recheckAt: d.recheckAt };
  }

  /**
   * A3.1 step 3: a stale or unknown view is refreshed from Status OUTSIDE the check's transaction.
   * The first refresh that failed, if any (the check then fails closed on the view as it is).
   */
  async #refreshIfNeeded(itemId: string): Promise<BatonError | undefined> {
    const fetch = this.#fetchStatus;
    if (fetch === undefined) return undefined;
    const found = await this.#o.uow.read(async (r) => {
      const item = await r.getItem(itemId);
      if (item === undefined) return undefined;
      const deps = isDependent(item) ? dependencies((await this.#chainOf(r, item)).chain) : [];
      return { item, deps };
    });
    const binding = found?.item.binding;
    if (found === undefined || binding === null || binding === undefined) return undefined;
    let failed = await this.#refreshBinding(binding, found.item.actionClass);
    // HAR-21: the parent Missions the item depends on are refreshed the same way (A3.1 step 3).
    for (const m of found.deps) {
      const parent = await this.#refreshBinding(
        {
          mission_origin: m.origin,
          mission_id: m.id,
          ...(m.authority_hash !== undefined && { authority_hash: m.authority_hash }),
        },
        found.item.actionClass,
      );
      failed ??= parent;
    }
    return failed;
  }

  /**
   * Refresh one Mission's view if unknown or past its bound for the class — a stale `active` view
   * and a `suspended` one alike, never a final one (needsRefresh); the fetch's typed failure, if any.
   */
  async #refreshBinding(
    b: Pick<MissionBinding, 'mission_origin' | 'mission_id' | 'authority_hash'>,
    actionClass: WorkItemRecord['actionClass'],
  ): Promise<BatonError | undefined> {
    const fetch = this.#fetchStatus;
    if (fetch === undefined) return undefined;
    const view = await this.#o.uow.read((r) => r.getView(b.mission_origin, b.mission_id));
    if (!needsRefresh(view, actionClass, this.#now(), this.#bounds, b.authority_hash)) return undefined;
    let status: VerifiedMissionStatus;
    try {
      status = await fetch(b.mission_origin, b.mission_id);
    } catch (error) {
      if (!(error instanceof BatonError)) throw error;
      // Unavailable, refused, an unpinned origin: the view stays stale/unknown, so the check
      // pauses (A3.5). Not swallowed: the listeners get the error, the caller its code.
      for (const listen of this.#errorListeners)
        listen(error, `status refresh ${b.mission_origin}#${b.mission_id}`);
      return error;
    }
    try {
      await this.applyVerifiedStatus(status);
    } catch (error) {
      // Verified under a pin unpinned (or replaced) since: not applied, so the check fails closed
      // on the view as it is, like a fetch for an unpinned origin (docs/missions.md "Unpinning").
      if (!isBatonError(error, 'mission_issuer_not_found')) throw error;
      for (const listen of this.#errorListeners)
        listen(error, `status refresh ${b.mission_origin}#${b.mission_id}`);
      return error;
    }
    return undefined;
  }

  async #dispatchInTx(
    repo: MissionsRepository,
    occ: OccurrenceSide,
    itemId: string,
    actor: string,
    generation?: number,
    statusError?: string,
  ): Promise<Decision> {
    const now = this.#now();
    const peek = await repo.getItem(itemId);
    if (peek === undefined) throw new BatonError('work_item_not_found', 'no such work item');
    // Lock order everywhere: the lineage (the fence, as entry takes it), mission view, then items
    // (then occurrences). An item's lineage never changes, so the peeked one is the item's.
    await this.#refuseRetired(occ, peek, generation);
    const view =
      peek.binding === null
        ? undefined
        : await repo.lockView(peek.binding.mission_origin, peek.binding.mission_id);
    const item = await repo.lockItem(itemId);
    if (item === undefined) throw new BatonError('work_item_not_found', 'no such work item');
    const a =
      item.binding === null
        ? undefined
        : assess(view, item.binding.authority_hash, item.actionClass, now, this.#bounds);
    const matrix =
      item.binding === null ? DEFAULT_MATRIX : await this.#matrix(repo, item.binding.stop_policy);
    const inFlight = item.occurrenceId === null ? false : await occ.inFlight(item.occurrenceId);
    const tainted = await this.#tainted(repo, item);
    const parent = await this.#parentAssessment(repo, item, now);
    const d = decideCheck({
      item,
      assessment: a,
      matrix: matrix.matrix,
      now,
      inFlight,
      mode: 'dispatch',
      tainted,
      ...(parent !== undefined && { parent }),
    });
    if (d.kind === 'refused') return d;
    const next =
      d.kind === 'continue' && generation !== undefined
        ? { ...d.item, claimedGeneration: generation }
        : d.item;
    // A stop's state change names the failed refresh's code on the item's chain (A2.6's object
    // has no member for it): why the view it stopped on was still unknown or stale.
    const why: JsonObject =
      d.kind === 'stop' && statusError !== undefined ? { status_error: statusError } : {};
    const moved = await this.#move(repo, item, next, why);
    if (d.kind === 'stop' && d.behaviour === 'terminate' && item.occurrenceId !== null) {
      await occ.releaseReserved(item.occurrenceId, d.evidence.reason, now);
    }
    await this.#emit(repo, [d.evidence], now, actor, [moved]);
    // A3.7 only for a Mission that is itself non-active: a binding's `authority_hash` mismatch stops
    // this item alone (A3.2 step 7), #propagate does nothing for it.
    if (d.kind === 'stop' && a?.verdict === 'non_active' && view !== undefined) {
      await this.#propagate(repo, occ, view, now, actor);
    }
    return { ...d, item: next };
  }

  /** `generation`: the executor's, fenced in the transaction (AOC-REQ-006); undefined: an operator. */
  async complete(itemId: string, actor: string, generation?: number): Promise<WorkItemRecord> {
    return this.#o.uow.run(async (repo, occ) => {
      const now = this.#now();
      const item = await this.#lockedItem(repo, itemId, occ, generation);
      const next = decideComplete(item, now);
      if (isRefusal(next)) throw refusalError(next);
      await repo.appendEvents([await this.#move(repo, item, next)], now, actor);
      return next;
    });
  }

  /** With `generation`: fenced first, the lineage locked before the view and item (lock order). */
  async #lockedItem(
    repo: MissionsRepository,
    itemId: string,
    occ?: OccurrenceSide,
    generation?: number,
  ): Promise<WorkItemRecord> {
    const peek = await repo.getItem(itemId);
    if (peek === undefined) throw new BatonError('work_item_not_found', 'no such work item');
    if (occ !== undefined) await this.#refuseRetired(occ, peek, generation);
    if (peek.binding !== null) await repo.lockView(peek.binding.mission_origin, peek.binding.mission_id);
    const item = await repo.lockItem(itemId);
    if (item === undefined) throw new BatonError('work_item_not_found', 'no such work item');
    return item;
  }

  /**
   * Operator stop (reason `operator_stop`); terminate releases the reserved occurrence. The item is
   * held (HAR-08): only an operator requeue or rebind lifts the stop, never a resume or retry.
   */
  async stop(itemId: string, decision: unknown, actor: string): Promise<WorkItemRecord> {
    const behaviour: StopBehaviour = readStopBehaviour(decision);
    return this.#o.uow.run(async (repo, occ) => {
      const now = this.#now();
      const item = await this.#lockedItem(repo, itemId);
      const view =
        item.binding === null
          ? undefined
          : await repo.getView(item.binding.mission_origin, item.binding.mission_id);
      const s = decideOperatorStop(item, behaviour, observed(view), now);
      if (s === undefined)
        throw new BatonError('work_item_not_dispatchable', `a ${item.state} item cannot be stopped that way`);
      const moved = await this.#move(repo, item, s.item);
      if (behaviour === 'terminate' && item.occurrenceId !== null)
        await occ.releaseReserved(item.occurrenceId, 'operator_stop', now);
      await this.#emit(repo, [s.evidence], now, actor, [moved]);
      return s.item;
    });
  }

  /** Operator requeue (A2.7): back to queued; the next dispatch checks. Superseded needs a rebind. */
  async requeue(itemId: string, actor: string): Promise<WorkItemRecord> {
    return this.#o.uow.run(async (repo) => {
      const now = this.#now();
      const item = await this.#lockedItem(repo, itemId);
      const view =
        item.binding === null
          ? undefined
          : await repo.getView(item.binding.mission_origin, item.binding.mission_id);
      const next = decideRequeue({ ...item, hold: false }, view?.state ?? null, now);
      if (isRefusal(next)) throw refusalError(next);
      await repo.appendEvents([await this.#move(repo, item, next)], now, actor);
      return next;
    });
  }

  /**
   * A3.8: a retry is a new item (`retry_of`, same idempotency key = occurrence creationKey, C-A28).
   * `generation`: the executor's, fenced in the transaction (AOC-REQ-006); undefined: an operator.
   */
  async retry(itemId: string, actor: string, generation?: number): Promise<WorkItemRecord> {
    return this.#o.uow.run(async (repo, occ) => {
      const now = this.#now();
      const original = await this.#lockedItem(repo, itemId, occ, generation);
      const next = decideRetry(original, this.#o.ids.id('wrk'), now);
      if (isRefusal(next)) throw refusalError(next);
      // HAR-21: no retry of dependent child work under a non-active parent Mission (a refusal
      // writes nothing; the copy's dispatch checks the whole chain again).
      await this.#refuseParentNonActive(repo, next, now);
      return this.#insertNew(repo, next, now, actor, 'the retry id is taken');
    });
  }

  // --- rebind to a successor (A7#24) and session taint (HAR-29) ------------------------------------

  /**
   * Operator rebind of a superseded Mission's held item to its successor (decideRebind): the
   * successor's view is refreshed from Status first if stale (outside the transaction, A3.1 step
   * 3), then both views and the item are locked and the successor assessed for the item's class.
   * Evidenced by `rebound` on the item and on both Missions' chains; a refusal writes nothing.
   */
  async rebind(itemId: string, input: unknown, actor: string): Promise<WorkItemRecord> {
    const to = readRebind(input);
    const peek = await this.#o.uow.read((r) => r.getItem(itemId));
    if (peek === undefined) throw new BatonError('work_item_not_found', 'no such work item');
    const from = peek.binding;
    if (from === null)
      throw new BatonError('work_item_not_dispatchable', 'an unbound item has no Mission to succeed');
    const failed = await this.#refreshBinding(to, peek.actionClass);
    return this.#o.uow.run(async (repo) => {
      const now = this.#now();
      const views = await this.#lockViews(repo, [from, to]);
      const item = await repo.lockItem(itemId);
      if (item === undefined) throw new BatonError('work_item_not_found', 'no such work item');
      if (item.binding === null || !sameBinding(item.binding, from))
        throw new BatonError('work_item_conflict', 'the item was rebound meanwhile');
      const matrix = await this.#matrix(repo, to.stop_policy);
      const successorView = views.get(`${to.mission_origin}#${to.mission_id}`);
      const a = assess(successorView, to.authority_hash, item.actionClass, now, this.#bounds);
      const d = decideRebind({
        item,
        predecessorState: views.get(`${from.mission_origin}#${from.mission_id}`)?.state ?? null,
        successor: to,
        successorAssessment: a,
        matrixDigest: matrix.digest,
        now,
      });
      if (isRefusal(d)) throw refusalError(d, failed);
      await repo.rebindItem(d.item, item.version);
      const body: JsonObject = {
        work_item: item.id,
        from: missionOf(item) as unknown as JsonObject,
        to: missionOf(d.item) as unknown as JsonObject,
        predecessor_state: 'superseded',
        successor_state: a.state,
        state_source: a.stateSource,
        freshness: freshness(a),
        matrix_digest: matrix.digest,
        version: d.item.version,
      };
      await repo.appendEvents(
        groupBySubject([
          { subject: workSubject(item.id), type: 'rebound', body },
          {
            subject: workSubject(item.id),
            type: 'work_state_changed',
            body: { from: item.state, to: d.item.state, version: d.item.version },
          },
          { subject: missionSubject(from.mission_origin, from.mission_id), type: 'rebound', body },
          { subject: missionSubject(to.mission_origin, to.mission_id), type: 'rebound', body },
        ]),
        now,
        actor,
      );
      return d.item;
    });
  }

  /** Lock views in one global order (origin#id), so two rebinds never deadlock on PostgreSQL. */
  async #lockViews(
    repo: MissionsRepository,
    bindings: readonly MissionBinding[],
  ): Promise<Map<string, MissionViewRecord | undefined>> {
    const keys = [...new Set(bindings.map((b) => `${b.mission_origin}#${b.mission_id}`))].sort();
    const out = new Map<string, MissionViewRecord | undefined>();
    for (const b of bindings) out.set(`${b.mission_origin}#${b.mission_id}`, undefined);
    for (const k of keys) {
      const b = bindings.find((x) => `${x.mission_origin}#${x.mission_id}` === k);
      if (b !== undefined) out.set(k, await repo.lockView(b.mission_origin, b.mission_id));
    }
    return out;
  }

  async #tainted(repo: MissionsReader, item: WorkItemRecord): Promise<boolean> {
    if (item.sessionId === null || !TAINT_GUARDED.includes(item.actionClass)) return false;
    return (await repo.getSession(item.sessionId))?.tainted ?? false;
  }

  /**
   * HAR-29 (draft §session-taint): content the harness did not obtain from the Subject, the
   * Approver or a trusted source entered the session. The taint is sticky (no source untaints);
   * the session's queued, running and paused egress items (TAINT_GUARDED) are suppressed now with
   * `session_tainted` evidence, and every later dispatch or entry of one is (decideCheck).
   * `generation`: an executor's, fenced in the transaction (AOC-REQ-006); undefined: an operator.
   */
  async taintSession(
    sessionId: string,
    input: unknown,
    actor: string,
    generation?: number,
  ): Promise<SessionRecord> {
    const { source } = readTaint(input);
    return this.#o.uow.run(async (repo, occ) => {
      const now = this.#now();
      // The lineage first (lock order); a session's lineage never changes.
      const peek = await repo.getSession(sessionId);
      if (peek === undefined) throw new BatonError('session_not_found', 'no such session');
      await this.#refuseRetiredLineage(occ, peek.lineage, generation);
      const before = await repo.lockSession(sessionId);
      if (before === undefined) throw new BatonError('session_not_found', 'no such session');
      const after: SessionRecord = before.tainted
        ? before
        : { ...before, tainted: true, version: before.version + 1 };
      if (!before.tainted) await repo.updateSession(after, before.version);
      const subject = sessionSubject(sessionId);
      const drafts: EvidenceDraft[] = [];
      const moves: PlannedEvent[] = [
        {
          subject,
          type: 'session_tainted',
          body: { source, first: !before.tainted, version: after.version },
        },
      ];
      for (const item of await repo.lockSessionItems(sessionId)) {
        if (!TAINT_GUARDED.includes(item.actionClass)) continue;
        const view =
          item.binding === null
            ? undefined
            : await repo.getView(item.binding.mission_origin, item.binding.mission_id);
        const s = decideStop(item, 'suppress', 'session_tainted', observed(view), now);
        if (s === undefined) continue;
        moves.push(await this.#move(repo, item, s.item));
        drafts.push(s.evidence);
      }
      await this.#emit(repo, drafts, now, actor, moves);
      return after;
    });
  }

  /** A governed session and its whole evidence chain (`session:<id>`), in one read. */
  async getSession(id: string): Promise<{ session: SessionRecord; evidence: StoredEvent[] }> {
    return this.#o.uow.read(async (r) => {
      const session = await found(r, id);
      return { session, evidence: await r.listEvents(sessionSubject(id)) };
    });
  }

  /**
   * A governed session without its chain: the chain gains events with every item of the session,
   * so a caller that shows it pages it (`GET /v1/harness/sessions/{id}`).
   */
  getSessionRecord(id: string): Promise<SessionRecord> {
    return this.#o.uow.read((r) => found(r, id));
  }

  // --- views: only verified inputs move them (C-A29) ---------------------------------------------

  /** After the consuming half verified a Status answer (A3.2 steps 1–8): step 9 + A3.3 + A3.7. */
  async applyVerifiedStatus(
    s: VerifiedMissionStatus,
  ): Promise<{ applied: boolean; reason?: string; stopped: number }> {
    return this.#o.uow.run(async (repo, occ) => {
      await refuseUnpinned(repo, s);
      const now = this.#now();
      const before = (await repo.lockView(s.origin, s.missionId)) ?? emptyView(s.origin, s.missionId, now);
      const change = applyStatus(before, s, now);
      await repo.archiveStatus(s, now);
      const body: JsonObject = {
        jws_digest: s.jwsDigest,
        kid: s.kid,
        thumbprint: s.jwkThumbprint,
        state: s.state,
        expires_at: s.expiresAt,
        checked_at: s.checkedAt,
        applied: change.applied,
        ...(!change.applied && { reason: change.reason }),
      };
      await repo.appendEvents(
        [{ subject: missionSubject(s.origin, s.missionId), type: 'mission_status_verified', body }],
        now,
        'system',
      );
      if (!change.applied) return { applied: false, reason: change.reason, stopped: 0 };
      await repo.saveView(change.view, before.version);
      const stopped = isActive(change.view.state)
        ? 0
        : await this.#propagate(repo, occ, change.view, now, 'system');
      return { applied: true, stopped };
    });
  }

  /**
   * After the consuming half verified a lifecycle SET (A3.4 steps 1–4): replay (step 5), ordering
   * (step 6) and application with stop propagation (step 7), in one transaction. The push route
   * answers 202 for every result but `replay_conflict` (400 `invalid_request`, C-A18).
   */
  async applyVerifiedSignal(s: VerifiedMissionSignal): Promise<SignalAnswer> {
    return this.#o.uow.run((repo, occ) => this.#signalInTx(repo, occ, s));
  }

  /**
   * A batch of verified lifecycle SETs (an RFC 8936 poll answer) in ONE transaction, in the given
   * order: each one's replay (step 5), ordering (step 6) and application (step 7) exactly as
   * `applyVerifiedSignal` would decide them one after another, so a replayed `jti` or a version
   * going backwards inside the batch is a duplicate/conflict/ignored SET, never a second apply
   * (issue 11 §8). One COMMIT for all: nothing of the batch is applied unless all of it is. If the
   * batch throws, each SET is applied alone, so a SET whose application fails refuses only itself
   * (`failed`: not applied, to be left unacknowledged and redelivered).
   */
  async applyVerifiedSignals(signals: readonly VerifiedMissionSignal[]): Promise<BatchedSignal[]> {
    if (signals.length === 0) return [];
    return this.applyTakenSignals(() => signals);
  }

  /**
   * `applyVerifiedSignals` of the SETs `take()` answers once the transaction has begun (one
   * answer per SET, in that order), so that a batcher (SignalBatcher) hands over every SET that
   * arrived while the engine gathered its group commit, not only those waiting when it asked.
   * `take` must answer the same SETs each time it is called: the engine may run the transaction's
   * function again, and if the transaction never began the SETs are taken to be applied alone.
   */
  async applyTakenSignals(take: () => readonly VerifiedMissionSignal[]): Promise<BatchedSignal[]> {
    try {
      return await this.#o.uow.run(async (repo, occ) => {
        const taken = take();
        // A lone SET (a push nobody joined) as `applyVerifiedSignal`: a batch buys it nothing.
        const [only] = taken;
        if (taken.length === 1 && only !== undefined)
          return [{ ok: true, ...(await this.#signalInTx(repo, occ, only)) }];
        // Evidence in one write per chain at the end; each view read once (no step reads the log).
        const flush = repo.batch();
        const out: BatchedSignal[] = [];
        for (const s of taken) out.push({ ok: true, ...(await this.#signalInTx(repo, occ, s)) });
        await flush();
        return out;
      });
    } catch (error) {
      const signals = take();
      if (signals.length === 1) return [{ ok: false, error }];
      const out: BatchedSignal[] = [];
      for (const s of signals) {
        out.push(
          await this.applyVerifiedSignal(s).then(
            (a): BatchedSignal => ({ ok: true, ...a }),
            (e: unknown): BatchedSignal => ({ ok: false, error: e }),
          ),
        );
      }
      return out;
    }
  }

  async #signalInTx(
    repo: MissionsRepository,
    occ: OccurrenceSide,
    s: VerifiedMissionSignal,
  ): Promise<SignalAnswer> {
    await refuseUnpinned(repo, s);
    const now = this.#now();
    const subject = missionSubject(s.origin, s.missionId);
    const seen = await repo.recordSet(s.origin, s.jti, s.digest, now, s.expiresAt * 1000);
    if (seen !== 'new') {
      const type = seen === 'same' ? 'mission_signal_duplicate' : 'mission_signal_rejected';
      await repo.appendEvents(
        [{ subject, type, body: { jti: s.jti, digest: s.digest, same_bytes: seen === 'same' } }],
        now,
        'system',
      );
      return { result: seen === 'same' ? 'duplicate' : 'replay_conflict', gap: false, stopped: 0 };
    }
    const before = (await repo.lockView(s.origin, s.missionId)) ?? emptyView(s.origin, s.missionId, now);
    const change = applySignal(before, s, now, signalLiveUntil(s, now, this.#bounds));
    if (!change.applied) {
      await repo.appendEvents(
        [
          {
            subject,
            type: 'mission_signal_ignored',
            body: { jti: s.jti, version: s.version, reason: change.reason },
          },
        ],
        now,
        'system',
      );
      return { result: 'ignored', gap: false, stopped: 0 };
    }
    await repo.saveView(change.view, before.version);
    const events: PlannedEvent[] = [
      {
        subject,
        type: 'mission_signal_applied',
        body: {
          jti: s.jti,
          version: s.version,
          prior_state: s.priorState,
          state: s.state,
          committed_at: s.committedAt,
          digest: s.digest,
        },
      },
    ];
    if (change.gap)
      events.push({
        subject,
        type: 'mission_signal_gap',
        body: { last: before.signalVersion, version: s.version },
      });
    await repo.appendEvents(events, now, 'system');
    const stopped = isActive(s.state) ? 0 : await this.#propagate(repo, occ, change.view, now, 'system');
    return { result: 'applied', gap: change.gap, stopped };
  }

  /** A3.2 step 9 failure: the view becomes unknown (never keeps a stale `active`); terminal stays. */
  async recordStatusRefused(origin: string, missionId: string, check: string, code: string): Promise<void> {
    await this.#o.uow.run(async (repo) => {
      const now = this.#now();
      const before = await repo.lockView(origin, missionId);
      await repo.appendEvents(
        [
          {
            subject: missionSubject(origin, missionId),
            type: 'mission_status_refused',
            body: { check, code },
          },
        ],
        now,
        'system',
      );
      if (before === undefined || before.state === null || isTerminal(before.state)) return;
      await repo.saveView(
        {
          ...before,
          state: null,
          stateSource: null,
          freshUntil: null,
          updatedAt: now,
          version: before.version + 1,
        },
        before.version,
      );
    });
  }

  // --- A3.7 stop propagation ---------------------------------------------------------------------

  async #propagate(
    repo: MissionsRepository,
    occ: OccurrenceSide,
    view: MissionViewRecord,
    now: number,
    actor: string,
  ): Promise<number> {
    // The Mission's own effective state, never one binding's view of it: an `authority_hash`
    // mismatch is "not active for that binding" (A3.2 step 7) and stops nothing else; a passed
    // `mission_expiry` on a view still reading `active` stops on the `expired` row, reported as
    // `expired` (A2.8: suppress|terminate|handoff, never pause).
    const mission = missionStopOf(view, now);
    if (mission === undefined) return 0;
    const stopped: MissionRef = { id: view.missionId, origin: view.origin };
    const items = await repo.lockDependents(view.origin, view.missionId);
    const independent = new Set<string>();
    for (const i of items) {
      const m = i.handle?.governed_by.mission;
      if (i.handle?.governed_by.kind !== 'independent_mission' || m === undefined) continue;
      const v = await repo.getView(m.origin, m.id);
      if (assess(v, m.authority_hash, i.actionClass, now, this.#bounds).verdict === 'active')
        independent.add(`${m.origin}#${m.id}`);
    }
    const targets = propagationTargets(stopped, items, (m) => independent.has(`${m.origin}#${m.id}`));
    const o = { ...observed(view), state: mission.state };
    const drafts: EvidenceDraft[] = [];
    const moves: PlannedEvent[] = [];
    let count = 0;
    for (const t of targets) {
      // A dependent child bound to another Mission: its record describes that Mission as observed,
      // and names the stopped one as the cause (seed §11: one Mission per record; §9.1).
      const b = t.item.binding;
      const foreign = b !== null && !(b.mission_id === stopped.id && b.mission_origin === stopped.origin);
      const own = foreign ? observed(await repo.getView(b.mission_origin, b.mission_id)) : o;
      const cause = foreign ? { id: stopped.id, origin: stopped.origin, state: mission.state } : undefined;
      if (t.action === 'continue') {
        drafts.push({
          ...baseDraft(t.item, own),
          eventType: 'subagent_continued',
          decision: 'continue',
          reason: 'independent_mission_active',
          ...(cause !== undefined && { cause }),
        });
        continue;
      }
      const matrix =
        t.item.binding === null ? DEFAULT_MATRIX : await this.#matrix(repo, t.item.binding.stop_policy);
      const inFlight = t.item.occurrenceId === null ? false : await occ.inFlight(t.item.occurrenceId);
      // A2.8: a superseded Mission's own work waits for a successor binding (A7#24).
      const reason =
        view.state === 'superseded' && t.reason === 'mission_not_active'
          ? 'successor_binding_required'
          : t.reason;
      const s = decideStop(
        t.item,
        behaviourFor(matrix.matrix, mission.row, t.item.actionClass, inFlight),
        reason,
        own,
        now,
      );
      if (s === undefined) continue;
      moves.push(await this.#move(repo, t.item, s.item));
      if (s.behaviour === 'terminate' && t.item.occurrenceId !== null)
        await occ.releaseReserved(t.item.occurrenceId, t.reason, now);
      drafts.push(cause === undefined ? s.evidence : { ...s.evidence, cause });
      count++;
    }
    // HAR-17: the Mission's cached connections are unusable for new governed work.
    await repo.flagCache(view.origin, view.missionId, 'mission_not_active', now);
    await this.#emit(repo, drafts, now, actor, moves);
    return count;
  }

  // --- A3.6 provider entry (called by the store inside the occurrences' enter transaction) -------

  /**
   * `enter`: repeat A3.1 steps 1–4 for the governed occurrence's item, in the caller's transaction.
   * One statement reads and locks what the common `continue` needs (issue 11 §8); anything else
   * (a stop, a refusal, an unknown matrix) is decided by the full check below, on the same rows.
   */
  async checkEntryInTx(
    repo: MissionsRepository,
    occ: OccurrenceSide,
    occurrenceId: string,
    actor: string,
  ): Promise<EntryCheck | undefined> {
    const facts = await repo.lockEntryFacts(occurrenceId);
    if (facts === undefined) return undefined;
    const known = (ref: string): boolean => this.#matrices.has(ref);
    const checked = entryContinuesWithText(facts, this.#now(), this.#bounds, known);
    if (checked !== undefined)
      return { decision: 'continue', release: false, checked: checked.body, checkedText: checked.text };
    return this.#checkEntryFully(repo, occ, occurrenceId, actor);
  }

  async #checkEntryFully(
    repo: MissionsRepository,
    occ: OccurrenceSide,
    occurrenceId: string,
    actor: string,
  ): Promise<EntryCheck | undefined> {
    // The gate, the view locked, then the item locked (already held by lockEntryFacts).
    const read = await repo.lockEntryGate(occurrenceId);
    if (read === undefined) return undefined;
    const { view, item } = read;
    const now = this.#now();
    if (item === undefined)
      throw new BatonError('store_corrupt', 'a governed occurrence names a missing work item');
    const a =
      item.binding === null
        ? undefined
        : assess(view, item.binding.authority_hash, item.actionClass, now, this.#bounds);
    const matrix =
      item.binding === null ? DEFAULT_MATRIX : await this.#matrix(repo, item.binding.stop_policy);
    const parent = await this.#parentAssessment(repo, item, now);
    const d = decideCheck({
      item,
      assessment: a,
      matrix: matrix.matrix,
      now,
      inFlight: false,
      mode: 'enter',
      tainted: await this.#tainted(repo, item),
      ...(parent !== undefined && { parent }),
    });
    const checked = (decision: string, extra?: JsonObject): JsonObject =>
      missionChecked(item, a, decision, extra);
    if (d.kind === 'continue') return { decision: 'continue', release: false, checked: checked('continue') };
    if (d.kind === 'refused') {
      // The item was already stopped (say by a SET): refuse without a second transition.
      const code =
        a === undefined
          ? 'mission_binding_missing'
          : a.verdict === 'active'
            ? 'work_item_not_dispatchable'
            : a.verdict === 'non_active'
              ? 'mission_not_active'
              : 'mission_status_unavailable';
      return {
        decision: 'stop',
        code,
        release: false,
        checked: checked('suppress', { item_state: item.state }),
      };
    }
    const moved = await this.#move(repo, item, d.item);
    await this.#emit(repo, [d.evidence], now, actor, [moved]);
    // As at dispatch: a binding-only `authority_hash` mismatch stops this entry's item alone.
    if (a?.verdict === 'non_active' && view !== undefined)
      await this.#propagateExcept(repo, occ, view, now, actor);
    return {
      decision: 'stop',
      code: d.code,
      release: d.behaviour === 'terminate',
      checked: checked(d.behaviour, { reason: d.evidence.reason }),
    };
  }

  async #propagateExcept(
    repo: MissionsRepository,
    occ: OccurrenceSide,
    view: MissionViewRecord,
    now: number,
    actor: string,
  ): Promise<void> {
    // The entry's own occurrence is released by the enter transaction itself (it holds that row).
    await this.#propagate(
      repo,
      {
        ...occ,
        releaseReserved: async () => Promise.resolve('none' as const),
        inFlight: (id) => occ.inFlight(id),
      },
      view,
      now,
      actor,
    );
  }

  /** `create` checks too (A3.6) but only `enter` decides: refuse unless the item runs under an active Mission. */
  async linkAtCreateInTx(
    repo: MissionsRepository,
    occurrenceId: string,
    workItemId: string,
    lineage: string,
  ): Promise<void> {
    // Another lineage's item, or one of no lineage, is answered as an unknown one (no existence
    // leak), before its binding is looked at or anything is locked.
    const peek = await repo.getItem(workItemId);
    if (!reachable(peek, lineage)) throw new BatonError('work_item_not_found', 'no such work item');
    if (peek.binding === null)
      throw new BatonError('mission_binding_missing', 'the work item has no mission binding (HAR-07)');
    const view = await repo.lockView(peek.binding.mission_origin, peek.binding.mission_id);
    const item = await repo.lockItem(workItemId);
    if (!reachable(item, lineage) || item.binding === null)
      throw new BatonError('work_item_not_found', 'no such work item');
    if (item.state !== 'running')
      throw new BatonError(
        'work_item_not_dispatchable',
        `a ${item.state} item cannot create governed occurrences`,
      );
    const a = assess(view, item.binding.authority_hash, item.actionClass, this.#now(), this.#bounds);
    if (a.verdict === 'non_active') throw new BatonError('mission_not_active', 'the Mission is not active');
    if (a.verdict !== 'active')
      throw new BatonError('mission_status_unavailable', 'the Mission state is unknown or stale');
    // HAR-21: dependent child work creates nothing governed unless its parent chain is active too.
    const p = await this.#parentAssessment(repo, item, this.#now());
    if (p?.verdict === 'non_active')
      throw new BatonError('mission_not_active', 'a parent Mission is not active (HAR-21)');
    if (p !== undefined)
      throw new BatonError('mission_status_unavailable', 'a parent Mission state is unknown or stale');
    await repo.linkOccurrence({
      occurrenceId,
      workItemId,
      missionOrigin: item.binding.mission_origin,
      missionId: item.binding.mission_id,
      actionClass: item.actionClass,
    });
    if (item.occurrenceId !== occurrenceId) {
      await repo.updateItem(
        { ...item, occurrenceId, updatedAt: this.#now(), version: item.version + 1 },
        item.version,
      );
      await repo.appendEvents(
        [{ subject: workSubject(item.id), type: 'occurrence_linked', body: { occurrence_id: occurrenceId } }],
        this.#now(),
        'system',
      );
    }
  }

  // --- reads -------------------------------------------------------------------------------------

  getItem(id: string): Promise<WorkItemRecord> {
    return this.#o.uow.read(async (r) => {
      const i = await r.getItem(id);
      if (i === undefined) throw new BatonError('work_item_not_found', 'no such work item');
      return i;
    });
  }

  listItems(filter: ItemFilter = {}): Promise<WorkItemRecord[]> {
    return this.#o.uow.read((r) => r.listItems(filter));
  }

  getView(origin: string, missionId: string): Promise<MissionViewRecord | undefined> {
    return this.#o.uow.read((r) => r.getView(origin, missionId));
  }

  /** The view as a check at `now` would read it for a class (for `GET /v1/missions/...`). */
  assessView(
    view: MissionViewRecord | undefined,
    actionClass: WorkItemRecord['actionClass'] = 'consequential_write',
    authorityHash?: string,
  ): Assessment {
    return assess(view, authorityHash, actionClass, this.#now(), this.#bounds);
  }

  /**
   * HAR-17 / A3.9: a cached connection was made unusable because of Mission state (the SDK's
   * ConnectionCache reports it): Harness Evidence `cache_disabled` on the Mission's chain, and the
   * Mission's cache flag. Token failures are not Mission state and are not recorded here.
   */
  async recordCacheDisabled(
    c: {
      readonly missionOrigin: string;
      readonly missionId: string;
      readonly authorityHash: string | null;
      readonly actor: string;
    },
    reason: 'mission_not_active' | 'authority_hash_mismatch' | 'mission_state_stale',
  ): Promise<void> {
    await this.#o.uow.run(async (repo) => {
      const now = this.#now();
      const o = observed(await repo.getView(c.missionOrigin, c.missionId));
      const mission: MissionRef = {
        id: c.missionId,
        origin: c.missionOrigin,
        ...(c.authorityHash !== null && { authority_hash: c.authorityHash }),
      };
      const d: EvidenceDraft = {
        eventType: 'cache_disabled',
        mission,
        actor: c.actor,
        state: o.state,
        stateSource: o.stateSource,
        checkedAt: o.checkedAt,
        expiresAt: o.freshUntil,
        decision: 'suppress',
        reason,
      };
      await repo.flagCache(c.missionOrigin, c.missionId, reason, now);
      await this.#emit(repo, [d], now, c.actor);
    });
  }

  events(subject: string): Promise<StoredEvent[]> {
    return this.#o.uow.read((r) => r.listEvents(subject));
  }

  cacheFlags(origin: string, missionId: string): Promise<{ reason: string; at: number }[]> {
    return this.#o.uow.read((r) => r.listCacheFlags(origin, missionId));
  }
}

/**
 * A Status answer or SET verified under a pin is applied only while its origin is still pinned
 * with that pin, read (and held) in the applying transaction: one verified just before an unpin,
 * or before a re-pin with another pin, is refused here and changes nothing (docs/missions.md
 * "Unpinning an issuer"; A3.2 step 1, A3.4 step 1: only a pinned issuer's inputs are trusted).
 */
async function refuseUnpinned(
  repo: MissionsRepository,
  s: VerifiedMissionStatus | VerifiedMissionSignal,
): Promise<void> {
  if (s.pinDigest === undefined) return;
  const pinned = await repo.lockIssuerPin(s.origin);
  if (pinned !== s.pinDigest)
    throw new BatonError(
      'mission_issuer_not_found',
      pinned === undefined
        ? 'the issuer was unpinned after the answer was verified; it is not applied'
        : 'the issuer was pinned again with another pin after the answer was verified; it is not applied',
      { issuer: s.origin },
    );
}

/** The session `id`, or `session_not_found`. */
async function found(r: MissionsReader, id: string): Promise<SessionRecord> {
  const session = await r.getSession(id);
  if (session === undefined) throw new BatonError('session_not_found', 'no such session');
  return session;
}

function observed(view: MissionViewRecord | undefined): {
  state: string;
  stateSource: string;
  checkedAt: number | null;
  freshUntil: number | null;
} {
  return {
    state: reportedState(view?.state),
    stateSource: view?.stateSource ?? 'harness',
    checkedAt: view?.checkedAt ?? null,
    freshUntil: view?.freshUntil ?? null,
  };
}

function baseDraft(
  item: WorkItemRecord,
  o: ReturnType<typeof observed>,
): Omit<EvidenceDraft, 'eventType' | 'decision' | 'reason'> {
  return {
    mission: missionOf(item),
    sessionId: item.sessionId,
    workItem: item.id,
    actor: item.handle?.actor.client_id ?? null,
    state: o.state,
    prior: item.state,
    resulting: item.state,
    stateSource: o.stateSource,
    checkedAt: o.checkedAt,
    expiresAt: o.freshUntil,
  };
}

function workCreated(item: WorkItemRecord): PlannedEvent {
  return {
    subject: workSubject(item.id),
    type: 'work_created',
    body: {
      kind: item.kind,
      binding: item.binding as unknown as JsonObject,
      action_class: item.actionClass,
      matrix_digest: item.matrixDigest,
      retry_of: item.retryOf,
      parent_item: item.parentId,
      handle: item.handle as unknown as JsonObject,
    },
  };
}

/** The evidence log appends consecutive events of a subject together; keep each subject's order. */
function groupBySubject(events: readonly PlannedEvent[]): PlannedEvent[] {
  const order: string[] = [];
  const by = new Map<string, PlannedEvent[]>();
  for (const e of events) {
    let list = by.get(e.subject);
    if (list === undefined) by.set(e.subject, (list = []));
    if (!order.includes(e.subject)) order.push(e.subject);
    list.push(e);
  }
  return order.flatMap((s) => by.get(s) ?? []);
}

/**
 * An executor creates only in its own lineage: an input naming another contradicts the credential
 * and is refused `forbidden`, as an executor's `GET /v1/occurrences?lineage=` naming another is —
 * never answered with a record in its own lineage in place of the one it asked for. The input may
 * name its own lineage or none. Undefined `executor`: an operator, any lineage.
 */
function refuseOtherLineage(named: string | null, executor: string | undefined): void {
  if (executor !== undefined && named !== null && named !== executor)
    throw new BatonError('forbidden', 'an executor creates only in its own lineage', { path: '$.lineage' });
}

/**
 * Whether an executor of `executor` may name this session or item (it exists and is in that
 * lineage; a record of no lineage is an operator's, no executor's). Undefined: an operator, any.
 */
function reachable<T extends { readonly lineage: string | null }>(
  rec: T | undefined,
  executor: string | undefined,
): rec is T {
  return rec !== undefined && (executor === undefined || rec.lineage === executor);
}

/**
 * HAR-04/05/20 / A7#17: a child copies or narrows its parent's binding; one under a different
 * Mission is only a sub-agent handle that records the relation.
 */
function checkChild(
  binding: MissionBinding,
  parent: MissionBinding | undefined,
  handle: WorkItemRecord['handle'],
): void {
  if (parent === undefined) return;
  if (!sameBinding(binding, parent)) {
    const g = handle?.governed_by;
    const recorded =
      handle !== null &&
      handle.parent_mission.id === parent.mission_id &&
      handle.parent_mission.origin === parent.mission_origin &&
      g !== undefined &&
      (g.kind === 'child_mission' || g.kind === 'independent_mission') &&
      g.mission?.id === binding.mission_id &&
      g.mission.origin === binding.mission_origin;
    if (!recorded)
      throw new BatonError(
        'mission_binding_invalid',
        'a child under another Mission must record its relation to the parent (HAR-05)',
      );
    return;
  }
  // Same Mission: the child may not widen (drop or change a known authority hash).
  if (parent.authority_hash !== undefined && binding.authority_hash !== parent.authority_hash) {
    throw new BatonError(
      'mission_binding_invalid',
      'a child binding may copy or narrow, never widen, its parent’s (HAR-04)',
    );
  }
}
