/**
 * `executor.harness` in process (issue 11 §5): the same calls as HarnessClient over HTTP, made on
 * a MissionsService in this process under the same executor rules as the HTTP routes
 * (src/missions/executor-scope.ts: its lineage on what it creates, its own lineage's items and
 * sessions only, its evidence actor), and its generation on every command (dispatch, resume,
 * retry, complete, enqueue, spawn, session, taint), fenced inside its transaction. There is no bearer to authenticate here, so before each call the lineage's
 * current generation is read and a retired one refused (`generation_retired`), as the server
 * refuses a retired credential before the route runs.
 */
import { BatonError } from '../core/errors.js';
import type { JsonObject } from '../core/json.js';
import {
  executorActor,
  sessionSubject,
  visibleItem,
  visibleSession,
  type ExecutorScope,
  type MissionsService,
  type SessionRecord,
  type WorkItemRecord,
} from '../missions/index.js';
import type { OccurrencesService } from '../occurrences/index.js';
import type { EnqueueInput, ExecutorHarness, HarnessDispatch } from './harness.js';

/** Stored evidence events as the HTTP answer carries them (plain JSON objects). */
const asJson = (events: readonly object[]): JsonObject[] => events as JsonObject[];

export class InProcessHarness implements ExecutorHarness {
  readonly #missions: MissionsService | undefined;
  readonly #service: OccurrencesService;
  readonly #scope: ExecutorScope;
  readonly #actor: string;

  constructor(missions: MissionsService | undefined, service: OccurrencesService, scope: ExecutorScope) {
    this.#missions = missions;
    this.#service = service;
    this.#scope = { lineage: scope.lineage, generation: scope.generation };
    this.#actor = executorActor(scope);
  }

  /** The harness, once this executor's generation is still the lineage's. */
  async #current(): Promise<MissionsService> {
    const h = this.#missions;
    if (h === undefined)
      throw new BatonError(
        'unavailable',
        'this in-process client has no harness: give InProcessBatonClientOptions.harness',
      );
    const { lineage, generation } = this.#scope;
    if ((await this.#service.currentGeneration(lineage)) !== generation)
      throw new BatonError('generation_retired', 'this executor generation was retired by a takeover', {
        lineage,
      });
    return h;
  }

  async #ownItem(itemId: string): Promise<MissionsService> {
    const h = await this.#current();
    await visibleItem(h, itemId, this.#scope.lineage);
    return h;
  }

  async session(binding: EnqueueInput['mission_binding'], sessionId?: string): Promise<SessionRecord> {
    const h = await this.#current();
    const input = { mission_binding: binding, ...(sessionId !== undefined && { session_id: sessionId }) };
    return h.createSession(input, this.#actor, this.#scope.lineage, this.#scope.generation);
  }

  async taint(sessionId: string, source: string): Promise<SessionRecord> {
    const h = await this.#current();
    await visibleSession(h, sessionId, this.#scope.lineage);
    return h.taintSession(sessionId, { source }, this.#actor, this.#scope.generation);
  }

  async getSession(sessionId: string): Promise<{ session: SessionRecord; evidence: JsonObject[] }> {
    const h = await this.#current();
    const session = await visibleSession(h, sessionId, this.#scope.lineage);
    return { session, evidence: asJson(await h.events(sessionSubject(sessionId))) };
  }

  async enqueue(input: EnqueueInput): Promise<WorkItemRecord> {
    const h = await this.#current();
    return h.createItem(
      { kind: 'queue_item', ...input },
      this.#actor,
      this.#scope.lineage,
      this.#scope.generation,
    );
  }

  async spawn(
    parentItem: string,
    handle: JsonObject,
    input: Omit<EnqueueInput, 'kind' | 'parent_item'>,
  ): Promise<WorkItemRecord> {
    const h = await this.#current();
    const item = { ...input, kind: 'subagent_handle', parent_item: parentItem, handle };
    return h.createItem(item, this.#actor, this.#scope.lineage, this.#scope.generation);
  }

  async dispatch(itemId: string): Promise<HarnessDispatch> {
    const h = await this.#ownItem(itemId);
    return h.dispatch(itemId, this.#actor, this.#scope.generation);
  }

  resume(itemId: string): Promise<HarnessDispatch> {
    return this.dispatch(itemId);
  }

  async retry(itemId: string): Promise<WorkItemRecord> {
    const h = await this.#ownItem(itemId);
    return h.retry(itemId, this.#actor, this.#scope.generation);
  }

  async complete(itemId: string): Promise<WorkItemRecord> {
    const h = await this.#ownItem(itemId);
    return h.complete(itemId, this.#actor, this.#scope.generation);
  }

  async get(itemId: string): Promise<{ item: WorkItemRecord; evidence: JsonObject[] }> {
    const h = await this.#current();
    const item = await visibleItem(h, itemId, this.#scope.lineage);
    return { item, evidence: asJson(await h.events(`work:${itemId}`)) };
  }
}
