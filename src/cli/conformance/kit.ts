/**
 * What every conformance case does with the world: act as an executor (takeover, create, enter,
 * send once), ask status sources, and read back facts. Verdicts are computed from those facts —
 * states, entry counts, authority figures, evidence, and the sandbox's effect counter — never
 * written down in advance.
 */
import { digestJcs } from '../../core/digest.js';
import { errorCodeOf, isBatonError } from '../../core/errors.js';
import type { JsonObject } from '../../core/json.js';
import type {
  AuthorityRecord,
  CreateResult,
  EntryTicket,
  ObserveResult,
  OccurrenceView,
  RegisteredProfile,
  TakeoverResult,
} from '../../occurrences/index.js';
import { lineageLister, Reconciler, recordSend, type SendResult } from '../../providers/index.js';
import type { Env } from './env.js';
import { occurrenceFacts, type OccurrenceFacts } from './facts.js';

export interface Check {
  readonly name: string;
  readonly ok: boolean;
}

export interface Executor {
  readonly lineage: string;
  readonly credential: string;
  readonly generation: number;
  readonly takeover: TakeoverResult;
}

export const AMOUNT = 1000;

/** The provider applies the payment, but neither its answer nor its webhook reaches Baton. */
export const LOST: string[] = ['drop_response_after_apply', 'drop_webhook'];

export function invoiceRequest(invoice: string, amount = AMOUNT, payee = 'acme-supplies'): JsonObject {
  return { amount, currency: 'eur', payee, invoice };
}

export class Kit {
  readonly checks: Check[] = [];
  readonly roles = new Map<string, string>();

  constructor(readonly env: Env) {}

  check(name: string, ok: boolean): boolean {
    this.checks.push({ name, ok });
    return ok;
  }

  async executor(lineage: string): Promise<Executor> {
    const takeover = await this.env.svc.takeover({ lineage });
    this.env.secrets.add(takeover.credential);
    return { lineage, credential: takeover.credential, generation: takeover.generation, takeover };
  }

  async authority(id: string, total = 10_000): Promise<AuthorityRecord> {
    return this.env.svc.createAuthority({ id, unit: 'EUR-cents', total });
  }

  createInput(
    e: Executor,
    creationKey: string,
    request: JsonObject,
    authority: string,
    profile?: RegisteredProfile,
  ) {
    this.env.secrets.add(JSON.stringify(request));
    const p = profile ?? this.env.profile;
    return {
      credential: e.credential,
      creationKey,
      provider: { profileId: p.id, profileVersion: p.version },
      request,
      authority: { id: authority, amount: Number(request['amount']) },
    };
  }

  async create(e: Executor, role: string, invoice: string, authority: string): Promise<OccurrenceView> {
    const { occurrence } = await this.env.svc.create(
      this.createInput(e, invoice, invoiceRequest(invoice), authority),
    );
    this.roles.set(role, occurrence.id);
    return occurrence;
  }

  enter(e: Executor, occurrenceId: string): Promise<EntryTicket> {
    return this.env.svc.enter({ credential: e.credential, occurrenceId });
  }

  /** Send once through the adapter (sandbox fault rules on the native key first) and record the answer. */
  async send(
    ticket: EntryTicket,
    faults: readonly string[] = [],
  ): Promise<{ sent: SendResult; ack: ObserveResult }> {
    for (const fault of faults) this.env.sandbox.addFault({ key: ticket.nativeKey ?? '' }, fault);
    const sent = await this.env.adapterFor(ticket).send(ticket);
    const ack = await recordSend(this.env.svc, sent);
    // Webhooks are a pinned source too: let them land so every check sees a settled world.
    await this.env.sandbox.webhooksIdle();
    return { sent, ack };
  }

  async pay(e: Executor, role: string, invoice: string, authority: string, faults: readonly string[] = []) {
    const o = await this.create(e, role, invoice, authority);
    const ticket = await this.enter(e, o.id);
    return { ticket, ...(await this.send(ticket, faults)) };
  }

  /**
   * A reconciler over one lineage's unresolved occurrences. A visit that fails (a source that could
   * not be asked, an observation not recorded) is a failed check naming the occurrence and the
   * error's code (never its message), so the case fails instead of passing on a silent `error` count
   * (AOC-REQ-007, AOC-REQ-009).
   */
  reconciler(lineage: string, maxPasses = 1): Reconciler {
    return new Reconciler({
      service: this.env.svc,
      sources: this.env.sources,
      list: lineageLister(this.env.svc, lineage),
      maxPasses,
      onError: (error, occurrenceId) => {
        const code = errorCodeOf(error);
        this.check(`reconcile visits ${occurrenceId} without error (failed: ${code})`, false);
      },
    });
  }

  async ask(occurrenceId: string, source: string, view?: OccurrenceView): Promise<ObserveResult> {
    const o = view ?? (await this.env.svc.getOccurrence(occurrenceId)).occurrence;
    const profile = (await this.env.svc.getProfile(o.provider.profileId, o.provider.profileVersion)).document;
    const reading = await this.env.sources.query(profile, o, source);
    return this.env.svc.observe({ ...reading.observation, occurrenceId });
  }

  /** The refusal code of an attempt that must be refused, or `accepted` when it was not. */
  async refusal(attempt: Promise<unknown>): Promise<string> {
    try {
      await attempt;
      return 'accepted';
    } catch (error) {
      if (isBatonError(error)) return error.code;
      throw error;
    }
  }

  async refused(name: string, attempt: Promise<unknown>, code: string): Promise<boolean> {
    const got = await this.refusal(attempt);
    return this.check(`${name}: refused ${code}${got === code ? '' : ` (got ${got})`}`, got === code);
  }

  effects(occurrence: Pick<OccurrenceView, 'provider'>): number {
    const key = occurrence.provider.nativeKey;
    return key === null ? 0 : this.env.sandbox.effectCount(key);
  }

  async view(id: string): Promise<OccurrenceView> {
    return (await this.env.svc.getOccurrence(id)).occurrence;
  }

  async entries(id: string): Promise<number> {
    const { evidence } = await this.env.svc.getOccurrence(id);
    return evidence.filter((e) => e.type === 'provider_entered').length;
  }

  /** A payment made straight at the sandbox, around Baton: the disclosed direct bypass path. */
  async direct(key: string, invoice: string): Promise<number> {
    const res = await fetch(`${this.env.sandbox.url}/v1/accounts/acct_sandbox/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(invoiceRequest(invoice, 100, 'someone-else')),
    });
    await res.arrayBuffer();
    return res.status;
  }

  async admin(method: string, path: string, body?: unknown): Promise<number> {
    const res = await fetch(`${this.env.sandbox.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.env.adminToken}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    await res.arrayBuffer();
    return res.status;
  }

  async facts(): Promise<OccurrenceFacts[]> {
    const out: OccurrenceFacts[] = [];
    for (const [role, id] of this.roles) out.push(await occurrenceFacts(this.env, role, id));
    return out;
  }
}

export function digestOf(value: unknown): string {
  return digestJcs(value);
}

export type { CreateResult };
