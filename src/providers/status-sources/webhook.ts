/**
 * The signed webhook receiver, a Fastify plugin (the profile's `webhook` source). The sandbox POSTs
 * a status event; the receiver authenticates it against the source's pin over the exact bytes and
 * its own path, finds the occurrence the event's native key was derived from, and records it as an
 * observation. An unauthenticated event is recorded too — as evidence that changes nothing
 * (AOC-CASE-009) — and an event after a takeover is evidence only (AOC-REQ-007).
 */
import type { FastifyPluginCallback } from 'fastify';
import type { Clock } from '../../core/clock.js';
import { systemClock } from '../../core/clock.js';
import { isBatonError } from '../../core/errors.js';
import type {
  ObserveResult,
  OccurrencesService,
  ProviderProfile,
  RegisteredProfile,
  StatusSource,
} from '../../occurrences/index.js';
import { deriveNativeKey, findStatusSource } from '../../occurrences/index.js';
import type { KeyResolver } from '../key-resolver.js';
import { asObject, authenticate, parseAnswer, readPayment, word } from '../wire.js';
import { answered } from './reading.js';

export interface WebhookRecorded {
  readonly occurrenceId: string;
  readonly event: string;
  readonly detail: string;
  readonly result: ObserveResult;
}

export interface WebhookReceiverOptions {
  /** The route, e.g. `/hooks/sandbox-payments` (the path of the profile's webhook source URL). */
  readonly path: string;
  /** The profile whose webhook source this is; a function when the receiver starts before it is
   * registered (its own URL is part of the deployed profile). */
  readonly profile: RegisteredProfile | (() => RegisteredProfile | undefined);
  readonly sourceId: string;
  /** The coordination domain's id: the native key rule derives keys from it. */
  readonly domainId: string;
  readonly service: Pick<OccurrencesService, 'observe' | 'getOccurrence'>;
  readonly keys: KeyResolver;
  readonly clock?: Clock;
  readonly onRecorded?: (recorded: WebhookRecorded) => void;
}

const OCCURRENCE_ID = '([A-Za-z0-9][A-Za-z0-9._:@/-]{0,127})';
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Invert a `template` native key rule: the occurrence id the key was derived from, confirmed by
 * deriving it again. A hashed (`sha256-jcs`) rule cannot be inverted and needs a lookup by key.
 */
export function occurrenceIdFromKey(
  profile: ProviderProfile,
  domainId: string,
  key: string,
): string | undefined {
  const rule = profile.nativeKey;
  if (rule.rule !== 'template') return undefined;
  const values: Record<string, string> = {
    domain: domainId,
    profileId: profile.id,
    account: profile.account,
    environment: profile.environment,
  };
  const pattern = rule.template
    .split(/(\{[A-Za-z]+\})/)
    .map((part) => {
      const name = /^\{([A-Za-z]+)\}$/.exec(part)?.[1];
      if (name === undefined) return escape(part);
      return name === 'occurrenceId' ? OCCURRENCE_ID : escape(values[name] ?? '');
    })
    .join('');
  const id = new RegExp(`^${pattern}$`).exec(key)?.[1];
  if (id === undefined) return undefined;
  return deriveNativeKey(profile, { domain: domainId, occurrenceId: id }) === key ? id : undefined;
}

async function knownOccurrence(
  o: WebhookReceiverOptions,
  p: RegisteredProfile,
  id: string,
): Promise<boolean> {
  try {
    const { occurrence } = await o.service.getOccurrence(id);
    return occurrence.provider.profileId === p.id && occurrence.provider.profileVersion === p.version;
  } catch (error) {
    if (isBatonError(error, 'occurrence_not_found') || isBatonError(error, 'input_invalid')) return false;
    throw error;
  }
}

function current(
  o: WebhookReceiverOptions,
): { profile: RegisteredProfile; source: StatusSource } | undefined {
  const profile = typeof o.profile === 'function' ? o.profile() : o.profile;
  const source = profile && findStatusSource(profile.document, o.sourceId);
  return profile && source?.kind === 'webhook' ? { profile, source } : undefined;
}

export const webhookReceiver: FastifyPluginCallback<WebhookReceiverOptions> = (app, o, done) => {
  const clock = o.clock ?? systemClock;
  // The exact bytes are signed: keep the body as text (this parser is scoped to the plugin).
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, next) => next(null, body));
  app.post(o.path, async (request, reply) => {
    const pinned = current(o);
    if (pinned === undefined) return reply.code(503).send({ error: 'no_webhook_source_pinned' });
    const { profile, source } = pinned;
    const body = typeof request.body === 'string' ? request.body : '';
    const event = asObject(parseAnswer(body));
    const payment = readPayment(event?.['data']);
    const key = payment?.carried.nativeKey;
    if (event === undefined || payment === undefined || typeof key !== 'string') {
      return reply.code(400).send({ error: 'not_a_status_event' });
    }
    const id = occurrenceIdFromKey(profile.document, o.domainId, key);
    if (id === undefined || !(await knownOccurrence(o, profile, id)))
      return reply.code(202).send({ recorded: false });
    const now = clock.wallMs();
    const message = { method: 'POST', path: request.url, body, headers: request.headers };
    const auth = authenticate(message, source.authentication, o.keys, now);
    const base = { occurrenceId: id, source: source.id, kind: source.kind };
    const detail = `webhook ${word(event['type'], 'event')}`;
    const reading = answered(base, now, {
      result: 'found',
      ...payment,
      response: event,
      complete: false,
      auth,
      detail,
    });
    const result = await o.service.observe(reading.observation);
    o.onRecorded?.({ occurrenceId: id, event: word(event['id'], 'unknown'), detail: reading.detail, result });
    return reply.code(204).send();
  });
  done();
};
