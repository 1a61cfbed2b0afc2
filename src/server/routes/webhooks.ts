/**
 * `POST /v1/webhooks/{profileId}`: the provider's webhook receiver inside `baton serve` (issue 13
 * §4, docs/api.md "Webhooks", docs/providers.md "Reconciliation in serve"). In order:
 * 1. the body is kept as its exact bytes (this route's own content-type parser, scoped to it);
 * 2. the occurrence it names is located: each registered version of the profile reads the native
 *    key by its own rule, and only a version that finds an occurrence BOUND to itself counts — the
 *    body is parsed for this only, never trusted (AOC-REQ-003: a status source is authenticated
 *    against the binding's profile, so a newer version with another pin changes nothing for
 *    occurrences bound to older ones); when none does, the same by the provider reference each
 *    version reads, at the one occurrence that reference is bound to (an event its entry request
 *    did not cause names another request's key, or none);
 * 3. the signature is checked over the raw bytes with the scheme and key of THAT version's webhook
 *    source pin (`stripe-signature`, `standard-webhooks` v1/v1a, or the sandbox's own) and its
 *    timestamp tolerance (providers/webhook-delivery.ts); a delivery about no known occurrence is
 *    checked with the newest version's pin and writes nothing (202 when it verifies; its event
 *    id is not remembered). An
 *    unauthenticated or stale delivery is refused (401 problem) and, when it names a known
 *    occurrence, recorded as evidence that changes nothing (AOC-CASE-009) — once per body and
 *    reason, at most REFUSED_EVIDENCE_CAP per occurrence;
 * 4. the event id is remembered (migration 010), only for a delivery verified under the pin of
 *    the version its occurrence is bound to, IN THE SAME TRANSACTION as the observation (one
 *    commit per delivery, issue 13 §2): a duplicate delivery answers 200 and records nothing new;
 * 5. the event becomes an observation judged by the service against the occurrence's own pinned
 *    profile — an out-of-order event never moves an occurrence backwards (outcomes only rank up,
 *    occurrences/machine/observe.ts), and after a takeover it is evidence only (AOC-REQ-007).
 * The route is public: the signature is the authentication, a bearer token is not asked for.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../../core/clock.js';
import { sha256HexTag } from '../../core/digest.js';
import { BatonError } from '../../core/errors.js';
import type {
  OccurrenceLocator,
  OccurrencesService,
  ProviderProfile,
  StatusSource,
} from '../../occurrences/index.js';
import {
  deliveryNamedKey,
  deliveryNamedReference,
  interpretDelivery,
  webhookSource,
  type Delivery,
  type DeliveryMeaning,
  type DeliveryObserver,
  type KeyResolver,
} from '../../providers/index.js';
import { ReconciliationStore } from '../../store/reconciliation.js';
import type { StoreEngine } from '../../store/engine.js';
import { problem } from '../schemas/common.js';
import type { ReconcileMetrics } from '../reconcile-metrics.js';
import type { RouteSpec } from '../route.js';
import { bool, name, object } from '../schemas/common.js';

export const WEBHOOK_URL = '/v1/webhooks/:profileId';
const BODY_LIMIT = 1_048_576;

export interface WebhookDeps {
  readonly engine: StoreEngine;
  readonly service: OccurrencesService;
  readonly keys: KeyResolver;
  readonly clock: Clock;
  readonly metrics: ReconcileMetrics;
  /** The replay window either side of now (default: the schemes' documented five minutes). */
  readonly toleranceMs?: number;
}

const received = object({ received: bool, duplicate: bool, recorded: bool, effective: bool }, ['effective']);
const params = object({ profileId: name });

/** For the OpenAPI document only: the route itself is registered by `registerWebhookRoute`. */
export const webhookRouteSpec: RouteSpec = {
  method: 'POST',
  url: WEBHOOK_URL,
  operationId: 'receiveWebhook',
  summary:
    'A provider webhook delivery, authenticated over the raw body by the webhook pin of the profile version the named occurrence is bound to (401 webhook_unauthenticated / webhook_stale; a body over 1 MiB is 413 webhook_body_too_large); a duplicate event id answers 200 and records nothing',
  tag: 'providers',
  roles: 'public',
  schema: {
    body: { type: 'object', description: 'the provider’s event, signed as sent' },
    params,
    response: { 200: received, 202: received },
  },
  handler: () => Promise.reject(new BatonError('internal', 'registered by registerWebhookRoute')),
};

/** One registered version of the profile, with its webhook source. */
interface Pinned {
  readonly profileId: string;
  readonly document: ProviderProfile;
  readonly source: StatusSource;
}

/**
 * A delivery located at a known occurrence: the version it is bound to, and how the delivery's
 * transaction finds the occurrence again — by native key (the unique native-key index) or by the
 * provider reference bound to it (migration 034).
 */
interface Located {
  readonly p: Pinned;
  readonly at: OccurrenceLocator;
}

type Answer = { status: number; body: Record<string, boolean> };
const NOTHING = { received: true, duplicate: false, recorded: false };
type Refused = DeliveryMeaning & { kind: 'refused' };

class Intake {
  readonly store: ReconciliationStore;
  constructor(readonly d: WebhookDeps) {
    this.store = new ReconciliationStore(d.engine);
  }

  /** Every registered version of the profile that pins a webhook source, newest first. */
  async pins(profileId: string): Promise<[Pinned, ...Pinned[]]> {
    const out: Pinned[] = [];
    for (const version of await this.store.profileVersions(profileId)) {
      const { document } = await this.d.service.getProfile(profileId, version);
      const source = webhookSource(document);
      if (source !== undefined) out.push({ profileId, document, source });
    }
    const [newest, ...rest] = out;
    if (newest === undefined) {
      this.d.metrics.countDelivery('no_source');
      throw new BatonError(
        'webhook_source_missing',
        'no registered version of this profile pins a webhook source',
        { profileId },
      );
    }
    return [newest, ...rest];
  }

  /**
   * AOC-REQ-003: the occurrence the delivery names and the profile version it is BOUND to. The body
   * is parsed here only to locate it (each version's own reading rule, account and environment);
   * only a version that located an occurrence bound to itself counts, so a newer version — an
   * operator's, with another pin — never decides how a delivery about an older one is judged.
   */
  async locate(pins: readonly Pinned[], body: Buffer): Promise<Located | undefined> {
    for (const p of pins) {
      const named = deliveryNamedKey(p.source, body);
      if (named === undefined) continue;
      const key = { key: named.key, ...this.place(p, named.account) };
      const bound = await this.store.boundVersion(p.profileId, key.account, key.environment, key.key);
      if (bound === p.document.version) return { p, at: { nativeKey: key } };
    }
    return this.locateByReference(pins, body);
  }

  /**
   * No version found an occurrence by native key: an event the entry request did not cause names
   * another request's key, or none (Stripe: `payment_intent.canceled` after a cancel call). It is
   * located by the provider reference each version reads, at the ONE occurrence that reference is
   * bound to, bound to that version; two such occurrences locate nothing (fail closed). Whether
   * the event is about that attempt is still the binding judgement's (occurrences/machine/assess.ts).
   */
  async locateByReference(pins: readonly Pinned[], body: Buffer): Promise<Located | undefined> {
    for (const p of pins) {
      const named = deliveryNamedReference(p.source, body);
      if (named === undefined) continue;
      const ref = { reference: named.reference, ...this.place(p, named.account) };
      const bound = await this.store.boundVersionByReference(
        p.profileId,
        ref.account,
        ref.environment,
        ref.reference,
      );
      if (bound === p.document.version) return { p, at: { reference: ref } };
    }
    return undefined;
  }

  /** The account the event names (or the version's own) and the version's environment. */
  place(p: Pinned, account: string | undefined) {
    return { account: account ?? p.document.account, environment: p.document.environment };
  }

  /** The one transaction of a delivery: the occurrence found, the event id remembered, the observation. */
  record(at: Located, now: number, eventId: string, status: boolean, observe?: DeliveryObserver) {
    const event = { profileId: at.p.profileId, receivedAt: now, eventId };
    // Never called: without an observer no locator is passed, so no occurrence is found.
    const fallback: DeliveryObserver = () => {
      throw new BatonError('internal', 'a delivery without an observation named an occurrence');
    };
    return this.d.service.recordProviderEvent(
      { ...event, ...(status && observe !== undefined && at.at) },
      observe ?? fallback,
      `webhook:${at.p.profileId}`,
    );
  }

  /**
   * AOC-CASE-009: an unauthenticated delivery about a known occurrence is kept, and changes
   * nothing; bounded (REFUSED_EVIDENCE_CAP): the same body refused for the same reason is kept
   * once, and past the cap only one `refused_evidence_capped` event is appended. Kept only when
   * located by Baton's native key (RefusedDeliveryInput says why: Stripe's browser-side client
   * secret holds the PaymentIntent id, a reference).
   */
  async refuse(m: Refused, at: Located | undefined, body: Buffer, now: number): Promise<never> {
    this.d.metrics.countDelivery(m.stale ? 'stale' : 'unauthenticated');
    const nativeKey = at?.at.nativeKey;
    if (at !== undefined && nativeKey !== undefined && m.observe !== undefined) {
      const input = {
        profileId: at.p.profileId,
        receivedAt: now,
        nativeKey,
        fingerprint: `${m.reason}:${sha256HexTag(body)}`,
        reason: m.reason,
      };
      const r = await this.d.service.recordRefusedDelivery(input, m.observe, `webhook:${at.p.profileId}`);
      if (r.kind === 'repeat') this.d.metrics.countRefusedDropped('repeat');
      if (r.kind === 'capped') this.d.metrics.countRefusedDropped('cap');
    }
    throw new BatonError(
      m.stale ? 'webhook_stale' : 'webhook_unauthenticated',
      m.reason === 'future_dated'
        ? 'the event is dated ahead of this server by more than it accepts; not recorded, deliver it again later'
        : m.stale
          ? 'the delivery was signed outside the replay window'
          : 'the delivery is not signed by the webhook pin of the profile version it is judged under',
      { reason: m.reason },
    );
  }

  invalid(): never {
    this.d.metrics.countDelivery('invalid');
    throw new BatonError(
      'webhook_event_invalid',
      'an authenticated delivery must be a JSON event with an id',
    );
  }

  async handle(profileId: string, delivery: Delivery): Promise<Answer> {
    const pins = await this.pins(profileId);
    const now = this.d.clock.wallMs();
    const at = await this.locate(pins, delivery.body);
    // Raw bytes: the signature is checked before the body is trusted, with the pin of the version
    // the named occurrence is bound to; a body that did not verify only names the occurrence its
    // evidence is kept under (it settles nothing).
    const p = at?.p ?? pins[0];
    const m = interpretDelivery(p.document, p.source, delivery, this.d.keys, now, this.d.toleranceMs);
    if (m.kind === 'refused') return this.refuse(m, at, delivery.body, now);
    if (m.kind === 'invalid') return this.invalid();
    if (at === undefined) {
      // About no known occurrence (or not a status event): judged by the newest version's pin, as
      // there is no binding to prefer, and nothing is written — its event id is not remembered, so
      // a pin that is no occurrence's own can never burn the id of a delivery that is.
      this.d.metrics.countDelivery(m.status ? 'unknown_occurrence' : 'ignored');
      return { status: 202, body: NOTHING };
    }
    const r = await this.record(at, now, m.eventId, m.status, m.observe);
    if (r.kind === 'duplicate') {
      this.d.metrics.countDelivery('duplicate');
      return { status: 200, body: { ...NOTHING, duplicate: true } };
    }
    if (r.kind === 'unknown_occurrence') {
      this.d.metrics.countDelivery(m.status ? 'unknown_occurrence' : 'ignored');
      return { status: 202, body: NOTHING };
    }
    this.d.metrics.countDelivery('recorded');
    return { status: 200, body: { ...NOTHING, recorded: true, effective: r.result.effective } };
  }
}

/**
 * The receiver reads raw bytes, not JSON: a body over its limit is `webhook_body_too_large`, not
 * the JSON routes' `json_too_large` (docs/api.md "Webhooks"). Anything else goes to the server's
 * own problem handler unchanged.
 */
function framing(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'FST_ERR_CTP_BODY_TOO_LARGE') return error;
  return new BatonError('webhook_body_too_large', 'the delivery exceeds the webhook body limit; not read', {
    limit: BODY_LIMIT,
  });
}

/** Register the route in its own encapsulated scope, whose only body parser keeps raw bytes. */
export function registerWebhookRoute(app: FastifyInstance, deps: WebhookDeps): void {
  const intake = new Intake(deps);
  void app.register((scope, _opts, ready) => {
    // Thrown here, the error reaches the server's handler (server/app.ts): one problem format.
    scope.setErrorHandler((error) => {
      throw framing(error);
    });
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    scope.post(
      WEBHOOK_URL,
      { schema: { params, response: { 200: received, 202: received, '4xx': problem, '5xx': problem } } },
      async (request: FastifyRequest, reply) => {
        const { profileId } = request.params as { profileId: string };
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const out = await intake.handle(profileId, { path: request.url, body, headers: request.headers });
        return reply.code(out.status).send(out.body);
      },
    );
    ready();
  });
}
