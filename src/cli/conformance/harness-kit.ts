/**
 * What every harness conformance case does: create and move Missions on the reference issuer
 * (admin API, SETs pushed to the runner's receiver), enqueue and dispatch governed work through
 * the harness service, create and enter governed occurrences through the occurrences service, and
 * read back items, signed Harness Evidence and the evidence chain. Verdicts come from those facts
 * and the sandbox's effect counter.
 */
import type { JsonObject } from '../../core/json.js';
import {
  verifyHarnessEvidence,
  type HarnessEvidence,
  type MissionBinding,
  type StatusFetchResult,
  type WorkItemRecord,
} from '../../missions/index.js';
import type { OccurrenceView } from '../../occurrences/index.js';
import { verifyEvidence } from '../../store/index.js';
import { AUTHORITY_SET, CLIENT_ID, INTENT, type HarnessEnv } from './harness-env.js';
import { invoiceRequest, Kit, type Executor } from './kit.js';

export class HarnessKit extends Kit {
  /** Parts of the case's A7 test this suite cannot run, with the reason: the case is NOT_RUN. */
  readonly notRun: string[] = [];
  #n = 0;

  constructor(
    override readonly env: HarnessEnv,
    readonly caseId: string,
  ) {
    super(env);
  }

  /** A part of the A7 test that is not exercised here: never counted as passed. */
  skip(reason: string): void {
    this.notRun.push(reason);
  }

  /** A name unique to this case (lineages, invoices, item ids). */
  name(prefix: string): string {
    return `${prefix}-${this.caseId.toLowerCase()}-${++this.#n}`;
  }

  /** Wait until every SET delivery the issuer started has been answered… */
  async delivered(): Promise<void> {
    await this.env.issuerAdmin('/admin/deliveries');
    // …and every Status check the push route started for a version gap has applied.
    await this.env.settled();
  }

  async mission(extra: JsonObject = {}): Promise<string> {
    const created = await this.env.issuerAdmin('/admin/missions', {
      intent: INTENT,
      authority_set: AUTHORITY_SET,
      mission_expiry: '2099-12-31T23:59:59Z',
      clients: [CLIENT_ID],
      ...extra,
    });
    if (created.status !== 201) throw new Error(`the issuer refused the mission (${created.status})`);
    await this.delivered();
    return created.body['mission_id'] as string;
  }

  /** A lifecycle operation on the issuer (revoke, suspend, resume, supersede…), SETs delivered. */
  async operate(missionId: string, op: string, body: JsonObject = {}): Promise<number> {
    const res = await this.env.issuerAdmin(`/admin/missions/${missionId}/${op}`, body);
    await this.delivered();
    return res.status;
  }

  async faults(status: readonly string[], sets: readonly string[] = [], count = 1): Promise<void> {
    const res = await this.env.issuerAdmin('/admin/faults', { status, sets, count });
    if (res.status !== 200) throw new Error(`the issuer refused the faults (${res.status})`);
  }

  /** Disarm every fault on the issuer; a refusal or an unreachable issuer throws (never ignored). */
  async clearFaults(): Promise<void> {
    const res = await fetch(`${this.env.issuer.url}/admin/faults`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${this.env.issuer.adminToken}` },
      signal: AbortSignal.timeout(10_000),
    });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`the issuer refused to clear the faults (${res.status})`);
  }

  binding(missionId: string, over: Partial<MissionBinding> = {}): MissionBinding {
    return {
      mission_id: missionId,
      mission_origin: this.env.pin.issuer,
      stop_policy: 'baton-default@1',
      ...over,
    };
  }

  enqueue(missionId: string | null, over: JsonObject = {}): Promise<WorkItemRecord> {
    return this.env.harness.createItem(
      {
        kind: 'queue_item',
        action_class: 'consequential_write',
        ...(missionId !== null && { mission_binding: this.binding(missionId) as unknown as JsonObject }),
        idempotency_key: this.name('idem'),
        ...over,
      },
      'executor',
    );
  }

  /** Takeover, enqueue under the Mission and dispatch: a running item and its executor. */
  async running(missionId: string, over: JsonObject = {}): Promise<{ e: Executor; item: WorkItemRecord }> {
    const e = await this.executor(this.name('lineage'));
    const queued = await this.enqueue(missionId, { lineage: e.lineage, ...over });
    const { item } = await this.env.harness.dispatch(queued.id, 'executor', e.generation);
    return { e, item };
  }

  /** Create the governed occurrence of a running item (its idempotency key is the creation key). */
  async governed(e: Executor, item: WorkItemRecord, role: string): Promise<OccurrenceView> {
    const key = item.idempotencyKey ?? this.name('key');
    const { occurrence } = await this.env.svc.create({
      ...this.createInput(e, key, invoiceRequest(key), 'payouts'),
      workItemId: item.id,
    });
    this.roles.set(role, occurrence.id);
    return occurrence;
  }

  /** Baton's own Status fetch, applied as the status-check route does (A3.2; C-A29). */
  async statusCheck(missionId: string): Promise<StatusFetchResult> {
    const result = await this.env.status.check(missionId);
    if (result.kind === 'verified') await this.env.harness.applyVerifiedStatus(result.status);
    else if (result.reason === 'refused')
      await this.env.harness.recordStatusRefused(
        this.env.pin.issuer,
        missionId,
        result.refusal?.check ?? 'refused',
        'refused',
      );
    return result;
  }

  item(id: string): Promise<WorkItemRecord> {
    return this.env.harness.getItem(id);
  }

  /** The item's Harness Evidence, each one verified against the domain key (C-A5). */
  async evidence(itemId: string): Promise<HarnessEvidence[]> {
    const events = await this.env.harness.events(`work:${itemId}`);
    return Promise.all(
      events
        .filter((x) => x.type === 'harness_evidence')
        .map((x) => verifyHarnessEvidence(x.body, this.env.domainPublicKey)),
    );
  }

  async chainVerifies(): Promise<boolean> {
    return (await verifyEvidence(this.env.engine)).ok;
  }

  async occurrenceEvents(id: string): Promise<{ type: string; body: unknown }[]> {
    return (await this.env.svc.getOccurrence(id)).evidence.map((x) => ({ type: x.type, body: x.body }));
  }

  async viewVersion(missionId: string): Promise<number> {
    return (await this.env.harness.getView(this.env.pin.issuer, missionId))?.version ?? 0;
  }

  /** Every effect the sandbox applied for occurrences this case created. */
  async totalEffects(): Promise<number> {
    let n = 0;
    for (const id of this.roles.values()) n += this.effects(await this.view(id));
    return n;
  }
}
