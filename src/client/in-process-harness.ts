/**
 * `executor.harness` in process (issue 11 §5): the same calls as HarnessClient over HTTP, made on
 * a MissionsService in this process, with what the HTTP routes add (src/server/routes/harness.ts):
 * the executor's lineage on what it creates, its own lineage's items and sessions only (another's
 * are `work_item_not_found`, as over HTTP), its evidence actor `executor:<lineage>#<generation>`,
 * and its generation on dispatch and resume, fenced inside their transaction. There is no bearer
 * to authenticate here, so before each call the lineage's current generation is read and a retired
 * one refused (`generation_retired`), as the server refuses a retired credential.
 */
import { BatonError } from '../core/errors.js';
import type { JsonObject } from '../core/json.js';
import type { MissionsService, SessionRecord, WorkItemRecord } from '../missions/index.js';
import type { OccurrencesService } from '../occurrences/index.js';
import type { EnqueueInput, ExecutorHarness, HarnessDispatch } from './harness.js';
import type { ExecutorBinding } from './types.js';

/** Stored evidence events as the HTTP answer carries them (plain JSON objects). */
const asJson = (events: readonly object[]): JsonObject[] => events as JsonObject[];

export class InProcessHarness implements ExecutorHarness {
  readonly #missions: MissionsService | undefined;
  readonly #service: OccurrencesService;
  readonly #lineage: string;
  readonly #generation: number;
  readonly #actor: string;

  constructor(missions: MissionsService | undefined, service: OccurrencesService, b: ExecutorBinding) {
    this.#missions = missions;
    this.#service = service;
    this.#lineage = b.lineage;
    this.#generation = b.generation;
    this.#actor = `executor:${b.lineage}#${b.generation}`;
  }

  /** The harness, once this executor's generation is still the lineage's. */
  async #current(): Promise<MissionsService> {
    const h = this.#missions;
    if (h === undefined)
      throw new BatonError(
        'unavailable',
        'this in-process client has no harness: give InProcessBatonClientOptions.harness',
      );
    const { generation } = await this.#service.getLineage(this.#lineage);
    if (generation !== this.#generation)
      throw new BatonError('generation_retired', 'this executor generation was retired by a takeover', {
        lineage: this.#lineage,
      });
    return h;
  }

  async #ownItem(itemId: string): Promise<MissionsService> {
    const h = await this.#current();
    if ((await h.getItem(itemId)).lineage !== this.#lineage)
      throw new BatonError('work_item_not_found', 'no such work item');
    return h;
  }

  async #ownSession(
    sessionId: string,
  ): Promise<{ h: MissionsService; found: Awaited<ReturnType<MissionsService['getSession']>> }> {
    const h = await this.#current();
    const found = await h.getSession(sessionId);
    if (found.session.lineage !== this.#lineage)
      throw new BatonError('work_item_not_found', 'no such session');
    return { h, found };
  }

  async session(binding: EnqueueInput['mission_binding'], sessionId?: string): Promise<SessionRecord> {
    const h = await this.#current();
    const input = {
      mission_binding: binding,
      ...(sessionId !== undefined && { session_id: sessionId }),
      lineage: this.#lineage,
    };
    return h.createSession(input, this.#actor);
  }

  async taint(sessionId: string, source: string): Promise<SessionRecord> {
    const { h } = await this.#ownSession(sessionId);
    return h.taintSession(sessionId, { source }, this.#actor);
  }

  async getSession(sessionId: string): Promise<{ session: SessionRecord; evidence: JsonObject[] }> {
    const { found } = await this.#ownSession(sessionId);
    return { session: found.session, evidence: asJson(found.evidence) };
  }

  async enqueue(input: EnqueueInput): Promise<WorkItemRecord> {
    const h = await this.#current();
    return h.createItem({ kind: 'queue_item', ...input, lineage: this.#lineage }, this.#actor);
  }

  async spawn(
    parentItem: string,
    handle: JsonObject,
    input: Omit<EnqueueInput, 'kind' | 'parent_item'>,
  ): Promise<WorkItemRecord> {
    const h = await this.#current();
    const item = {
      ...input,
      kind: 'subagent_handle',
      parent_item: parentItem,
      handle,
      lineage: this.#lineage,
    };
    return h.createItem(item, this.#actor);
  }

  async dispatch(itemId: string): Promise<HarnessDispatch> {
    const h = await this.#ownItem(itemId);
    return h.dispatch(itemId, this.#actor, this.#generation);
  }

  resume(itemId: string): Promise<HarnessDispatch> {
    return this.dispatch(itemId);
  }

  async retry(itemId: string): Promise<WorkItemRecord> {
    const h = await this.#ownItem(itemId);
    return h.retry(itemId, this.#actor);
  }

  async complete(itemId: string): Promise<WorkItemRecord> {
    const h = await this.#ownItem(itemId);
    return h.complete(itemId, this.#actor);
  }

  async get(itemId: string): Promise<{ item: WorkItemRecord; evidence: JsonObject[] }> {
    const h = await this.#ownItem(itemId);
    return { item: await h.getItem(itemId), evidence: asJson(await h.events(`work:${itemId}`)) };
  }
}
