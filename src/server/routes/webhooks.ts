/**
 * `POST /v1/webhooks/{profileId}`: the provider's webhook receiver inside `baton serve` (issue 13
 * §4, docs/api.md "Webhooks", docs/providers.md "Reconciliation in serve"). In order:
 * 1. the body is kept as its exact bytes (this route's own content-type parser, scoped to it);
 * 2. the signature is checked over those bytes BEFORE any parsing, with the scheme and key of the
 *    profile's webhook status source pin (its latest registered version: `stripe-signature`,
 *    `standard-webhooks` v1/v1a, or the sandbox's own) and its timestamp tolerance
 *    (providers/webhook-delivery.ts); an unauthenticated or stale delivery is refused (401
 *    problem) and, when it names a known occurrence, recorded as evidence that changes nothing
 *    (AOC-CASE-009) — once per body and reason, at most REFUSED_EVIDENCE_CAP per occurrence;
 * 3. the event id is remembered (migration 010) IN THE SAME TRANSACTION as the observation (one
 *    commit per delivery, issue 13 §2): a duplicate delivery answers 200 and records nothing new;
 * 4. the event becomes an observation judged by the service against the occurrence's own pinned
 *    profile — an out-of-order event never moves an occurrence backwards (outcomes only rank up,
 *    occurrences/machine/observe.ts), and after a takeover it is evidence only (AOC-REQ-007).
 * The route is public: the signature is the authentication, a bearer token is not asked for.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../../core/clock.js';
import { sha256HexTag } from '../../core/digest.js';
import { BatonError } from '../../core/errors.js';
import type { OccurrencesService, ProviderProfile, StatusSource } from '../../occurrences/index.js';
import {
  interpretDelivery,
  webhookSource,
  type Delivery,
  type DeliveryMeaning,
  type DeliveryObserver,
  type KeyResolver,
  type NamedKey,
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
    'A provider webhook delivery, authenticated by the profile’s webhook pin over the raw body (401 webhook_unauthenticated / webhook_stale); a duplicate event id answers 200 and records nothing',
  tag: 'providers',
  roles: 'public',
  schema: {
    body: { type: 'object', description: 'the provider’s event, signed as sent' },
    params,
    response: { 200: received, 202: received },
  },
  handler: () => Promise.reject(new BatonError('internal', 'registered by registerWebhookRoute')),
};

interface Pinned {
  readonly profileId: string;
  readonly document: ProviderProfile;
  readonly source: StatusSource;
}

type Answer = { status: number; body: Record<string, boolean> };
const NOTHING = { received: true, duplicate: false, recorded: false };

class Intake {
  readonly store: ReconciliationStore;
  constructor(readonly d: WebhookDeps) {
    this.store = new ReconciliationStore(d.engine);
  }

  async pinned(profileId: string): Promise<Pinned> {
    const version = await this.store.latestProfileVersion(profileId);
    const document =
      version === undefined ? undefined : (await this.d.service.getProfile(profileId, version)).document;
    const source = document && webhookSource(document);
    if (document === undefined || source === undefined) {
      this.d.metrics.countDelivery('no_source');
      throw new BatonError(
        'webhook_source_missing',
        'no registered version of this profile pins a webhook source',
        {
          profileId,
        },
      );
    }
    return { profileId, document, source };
  }

  /** The occurrence's native key as the event names it, under the profile's account and environment. */
  nativeKey(p: Pinned, named: NamedKey) {
    return {
      key: named.key,
      account: named.account ?? p.document.account,
      environment: p.document.environment,
    };
  }

  /** The one transaction of a delivery: the occurrence found, the event id remembered, the observation. */
  record(p: Pinned, now: number, eventId: string | undefined, named?: NamedKey, observe?: DeliveryObserver) {
    const nativeKey = named && this.nativeKey(p, named);
    const event = { profileId: p.profileId, receivedAt: now, ...(eventId !== undefined && { eventId }) };
    // Never called: without an observer no native key is passed, so no occurrence is found.
    const fallback: DeliveryObserver = () => {
      throw new BatonError('internal', 'a delivery without an observation named an occurrence');
    };
    return this.d.service.recordProviderEvent(
      { ...event, ...(observe !== undefined && nativeKey !== undefined && { nativeKey }) },
      observe ?? fallback,
      `webhook:${p.profileId}`,
    );
  }

  /**
   * AOC-CASE-009: an unauthenticated delivery about a known occurrence is kept, and changes
   * nothing; bounded (REFUSED_EVIDENCE_CAP): the same body refused for the same reason is kept
   * once, and past the cap only one `refused_evidence_capped` event is appended.
   */
  async refuse(
    p: Pinned,
    m: DeliveryMeaning & { kind: 'refused' },
    body: Buffer,
    now: number,
  ): Promise<never> {
    this.d.metrics.countDelivery(m.stale ? 'stale' : 'unauthenticated');
    if (m.named !== undefined && m.observe !== undefined) {
      const input = {
        profileId: p.profileId,
        receivedAt: now,
        nativeKey: this.nativeKey(p, m.named),
        fingerprint: `${m.reason}:${sha256HexTag(body)}`,
        reason: m.reason,
      };
      const r = await this.d.service.recordRefusedDelivery(input, m.observe, `webhook:${p.profileId}`);
      if (r.kind === 'repeat') this.d.metrics.countRefusedDropped('repeat');
      if (r.kind === 'capped') this.d.metrics.countRefusedDropped('cap');
    }
    throw new BatonError(
      m.stale ? 'webhook_stale' : 'webhook_unauthenticated',
      m.stale
        ? 'the delivery was signed outside the replay window'
        : 'the delivery is not signed by the profile’s webhook pin',
      { reason: m.reason },
    );
  }

  async handle(profileId: string, delivery: Delivery): Promise<Answer> {
    const p = await this.pinned(profileId);
    const now = this.d.clock.wallMs();
    // Raw bytes first: the signature is checked before the body is parsed, and a body that did not
    // verify is read only to name the occurrence its evidence is kept under (it settles nothing).
    const m = interpretDelivery(p.document, p.source, delivery, this.d.keys, now, this.d.toleranceMs);
    if (m.kind === 'refused') return this.refuse(p, m, delivery.body, now);
    if (m.kind === 'invalid') {
      this.d.metrics.countDelivery('invalid');
      throw new BatonError(
        'webhook_event_invalid',
        'an authenticated delivery must be a JSON event with an id',
      );
    }
    const r = await this.record(p, now, m.eventId, m.status ? m.named : undefined, m.observe);
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

/** Register the route in its own encapsulated scope, whose only body parser keeps raw bytes. */
export function registerWebhookRoute(app: FastifyInstance, deps: WebhookDeps): void {
  const intake = new Intake(deps);
  void app.register((scope, _opts, ready) => {
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
