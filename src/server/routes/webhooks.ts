/**
 * `POST /v1/webhooks/{profileId}`: the provider's webhook receiver inside `baton serve` (issue 13
 * §4, docs/api.md "Webhooks", docs/providers.md "Reconciliation in serve"). In order:
 * 1. the body is kept as its exact bytes (this route's own content-type parser, scoped to it);
 * 2. the signature is checked over those bytes BEFORE any parsing, with the scheme and key of the
 *    profile's webhook status source pin (its latest registered version) and a replay window;
 *    an unauthenticated or stale delivery is refused (401 problem) and, when it names a known
 *    occurrence, recorded as evidence that changes nothing (AOC-CASE-009);
 * 3. the event id is remembered (migration 010): a duplicate delivery answers 200 and records
 *    nothing new;
 * 4. the event becomes an observation judged by the service against the occurrence's own pinned
 *    profile — an out-of-order event never moves an occurrence backwards (outcomes only rank up,
 *    occurrences/machine/observe.ts), and after a takeover it is evidence only (AOC-REQ-007).
 * The route is public: the signature is the authentication, a bearer token is not asked for.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../../core/clock.js';
import { BatonError } from '../../core/errors.js';
import type { OccurrencesService, ProviderProfile } from '../../occurrences/index.js';
import {
  eventNativeKey,
  readEvent,
  verifyDelivery,
  webhookObservation,
  webhookSource,
  type Delivery,
  type DeliveryVerdict,
  type KeyResolver,
  type WebhookEvent,
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
}

class Intake {
  readonly store: ReconciliationStore;
  constructor(readonly d: WebhookDeps) {
    this.store = new ReconciliationStore(d.engine);
  }

  async pinned(profileId: string): Promise<Pinned> {
    const version = await this.store.latestProfileVersion(profileId);
    const document =
      version === undefined ? undefined : (await this.d.service.getProfile(profileId, version)).document;
    if (document === undefined || webhookSource(document) === undefined) {
      this.d.metrics.countDelivery('no_source');
      throw new BatonError(
        'webhook_source_missing',
        'no registered version of this profile pins a webhook source',
        {
          profileId,
        },
      );
    }
    return { profileId, document };
  }

  occurrenceFor(p: Pinned, key: string, account: string | undefined): Promise<string | undefined> {
    return this.store.occurrenceByNativeKey(
      p.profileId,
      account ?? p.document.account,
      p.document.environment,
      key,
    );
  }

  /** Observe one event about one occurrence, under the occurrence's own bound profile. */
  async observe(occurrenceId: string, event: WebhookEvent, verdict: DeliveryVerdict, now: number) {
    const { provider } = await this.d.service.getOccurrenceView(occurrenceId);
    const bound = (await this.d.service.getProfile(provider.profileId, provider.profileVersion)).document;
    const observation = webhookObservation(bound, occurrenceId, event, verdict, now);
    return this.d.service.observe(observation, `webhook:${provider.profileId}`);
  }

  /** AOC-CASE-009: an unauthenticated delivery about a known occurrence is kept, and changes nothing. */
  async refuse(
    p: Pinned,
    delivery: Delivery,
    verdict: DeliveryVerdict & { ok: false },
    now: number,
  ): Promise<never> {
    const stale = verdict.reason === 'stale';
    this.d.metrics.countDelivery(stale ? 'stale' : 'unauthenticated');
    const named = eventNativeKey(delivery.body);
    const id = named && (await this.occurrenceFor(p, named.key, named.account));
    const reading = readEvent(delivery.body);
    if (id !== undefined && reading.kind === 'event') await this.observe(id, reading.event, verdict, now);
    throw new BatonError(
      stale ? 'webhook_stale' : 'webhook_unauthenticated',
      stale
        ? 'the delivery was signed outside the replay window'
        : 'the delivery is not signed by the profile’s webhook pin',
      { reason: verdict.reason },
    );
  }

  async handle(
    profileId: string,
    delivery: Delivery,
  ): Promise<{ status: number; body: Record<string, boolean> }> {
    const p = await this.pinned(profileId);
    const now = this.d.clock.wallMs();
    const pin = webhookSource(p.document)!.authentication;
    // Raw bytes first: nothing below reads the body of a delivery that did not verify.
    const verdict = verifyDelivery(pin, delivery, this.d.keys, now, this.d.toleranceMs);
    if (!verdict.ok) return this.refuse(p, delivery, verdict, now);
    const reading = readEvent(delivery.body, verdict.eventId);
    const nothing = { received: true, duplicate: false, recorded: false };
    if (reading.kind === 'unreadable' || (reading.kind === 'not_status' && reading.id === undefined)) {
      this.d.metrics.countDelivery('invalid');
      throw new BatonError(
        'webhook_event_invalid',
        'an authenticated delivery must be a JSON event with an id',
      );
    }
    if (reading.kind === 'not_status') {
      const fresh = await this.store.markEventSeen(profileId, reading.id!, null, now);
      this.d.metrics.countDelivery(fresh ? 'ignored' : 'duplicate');
      return { status: fresh ? 202 : 200, body: { ...nothing, duplicate: !fresh } };
    }
    const { event } = reading;
    const { nativeKey: key, account } = event.payment.carried;
    const occurrenceId =
      typeof key === 'string' ? await this.occurrenceFor(p, key, account ?? undefined) : undefined;
    if (!(await this.store.markEventSeen(profileId, event.id, occurrenceId ?? null, now))) {
      this.d.metrics.countDelivery('duplicate');
      return { status: 200, body: { ...nothing, duplicate: true } };
    }
    if (occurrenceId === undefined) {
      this.d.metrics.countDelivery('unknown_occurrence');
      return { status: 202, body: nothing };
    }
    try {
      const result = await this.observe(occurrenceId, event, verdict, now);
      this.d.metrics.countDelivery('recorded');
      return { status: 200, body: { ...nothing, recorded: true, effective: result.effective } };
    } catch (error) {
      // Not recorded: the provider's retry must not be taken for a duplicate.
      await this.store.forgetEvent(profileId, event.id);
      throw error;
    }
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
