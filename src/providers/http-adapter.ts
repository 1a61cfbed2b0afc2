/**
 * The generic HTTP provider adapter (DESIGN.md §4). It takes the ticket of ONE successful provider
 * entry (service.enter), sends exactly the bound request — the JCS bytes whose digest the binding
 * pins, with the native key the domain derived — once, never retries, and turns whatever comes back
 * into an acknowledgement observation. No answer, a timeout, a 5xx, an unsigned or unreadable answer
 * is recorded as missing knowledge: the occurrence stays unresolved in every doubtful case
 * (AOC-REQ-009, -010; AOC-CASE-003).
 */
import type { Clock } from '../core/clock.js';
import { systemClock } from '../core/clock.js';
import { digestEquals, digestJcs } from '../core/digest.js';
import { BatonError } from '../core/errors.js';
import { canonicalize } from '../core/jcs.js';
import type {
  AcknowledgementInput,
  EntryTicket,
  ObserveResult,
  OccurrencesService,
  ProviderProfile,
} from '../occurrences/index.js';
import { profileDigest } from '../occurrences/index.js';
import { credentialCoverage } from './credential-header.js';
import { sendDeclared } from './declared/entry.js';
import { exchange, failureDetail, type ExchangeResult } from './http-client.js';
import { FUTURE_SKEW_MS } from './status-sources/reading.js';
import type { KeyResolver } from './key-resolver.js';
import { expandUrl } from './url-template.js';
import {
  asObject,
  authenticate,
  compact,
  observedAt,
  parseAnswer,
  readErrorCarried,
  readPayment,
  word,
} from './wire.js';

export interface HttpAdapterOptions {
  /**
   * The entry endpoint of a format 1 profile, a template with `{account}`. A format 2 profile's
   * own `entry` rule wins (declared/entry.ts).
   */
  readonly entryUrl?: string;
  readonly keys: KeyResolver;
  readonly clock?: Clock;
  /** How long to wait for the answer before giving up (default 10 s); it is never re-sent. */
  readonly timeoutMs?: number;
  /** How many sent occurrence ids the adapter remembers to refuse a ticket again (SENT_REMEMBERED). */
  readonly rememberSent?: number;
}

export interface SendResult {
  readonly occurrenceId: string;
  /** True only when an authenticated, readable answer came back (the service still judges it). */
  readonly acknowledged: boolean;
  /** What happened, for people: `http 201`, `timeout`, `transport ECONNRESET`, `unsigned`… */
  readonly detail: string;
  readonly httpStatus: number | null;
  /** Whether the request had been fully written: false does NOT prove the provider never saw it. */
  readonly sent: boolean;
  readonly acknowledgement: AcknowledgementInput;
}

/** How many sent occurrence ids an adapter remembers (oldest forgotten first). */
export const SENT_REMEMBERED = 100_000;

export class HttpProviderAdapter {
  readonly #profile: ProviderProfile;
  /** The digest of the adapter's own copy, computed once: every send checks the ticket against it. */
  readonly #profileDigest: string;
  readonly #options: HttpAdapterOptions;
  readonly #clock: Clock;
  /**
   * The occurrences this adapter has sent (or begun to send). AOC-REQ-010: an entry is sent at most
   * once, and neither an in-doubt first send (a reset, a timeout) nor the provider's native
   * idempotency key is permission to enter the provider again. The service never issues a second
   * ticket for an occurrence (`already_entered`); this refuses the same ticket handed over twice.
   */
  readonly #sent = new Set<string>();

  constructor(profile: ProviderProfile, options: HttpAdapterOptions) {
    // A copy: what the digest covers cannot change under the adapter afterwards.
    this.#profile = structuredClone(profile);
    this.#profileDigest = profileDigest(this.#profile);
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    refuseUncoveredEntry(this.#profile, options.keys);
  }

  /**
   * Send the entered request once. Throws, sending nothing, when the ticket is not this profile's,
   * and `already_entered` (details `{occurrenceId, sent: false}`) when this adapter was already
   * handed the ticket: what the first send left open is the status sources' to find out.
   */
  async send(ticket: EntryTicket): Promise<SendResult> {
    this.#check(ticket);
    const entry = this.#profile.entry;
    const entryUrl = this.#options.entryUrl;
    if (entry === undefined && entryUrl === undefined) {
      throw new BatonError(
        'provider_binding_conflict',
        'the profile has no entry rule and no entryUrl was given',
      );
    }
    this.#claim(ticket.occurrence.id);
    if (entry !== undefined) {
      const ctx = {
        keys: this.#options.keys,
        clock: this.#clock,
        timeoutMs: this.#options.timeoutMs ?? 10_000,
      };
      return {
        occurrenceId: ticket.occurrence.id,
        ...(await sendDeclared(this.#profile, entry, ticket, ctx)),
      };
    }
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (ticket.nativeKeyHeader !== null && ticket.nativeKey !== null) {
      headers[ticket.nativeKeyHeader.toLowerCase()] = ticket.nativeKey;
    }
    const result = await exchange({
      method: 'POST',
      url: expandUrl(entryUrl ?? '', { account: ticket.account }),
      headers,
      body: canonicalize(ticket.request),
      timeoutMs: this.#options.timeoutMs ?? 10_000,
    });
    return this.#interpret(ticket.occurrence.id, result);
  }

  /** Claimed before the first byte leaves, so two concurrent sends of one ticket cannot both go. */
  #claim(occurrenceId: string): void {
    if (this.#sent.has(occurrenceId)) {
      throw new BatonError(
        'already_entered',
        'this ticket was already sent once; the provider is never entered again (AOC-REQ-010)',
        { occurrenceId, sent: false },
      );
    }
    this.#sent.add(occurrenceId);
    // Bounded: a worker's adapter may live for millions of entries. An older ticket than these is
    // still never sent twice by Baton (the service issues one ticket per occurrence); this guard
    // is for a caller that hands the same ticket over again soon after.
    if (this.#sent.size > (this.#options.rememberSent ?? SENT_REMEMBERED)) {
      const oldest = this.#sent.values().next();
      if (oldest.done !== true) this.#sent.delete(oldest.value);
    }
  }

  /** AOC-REQ-003: send nothing unless the ticket is bound to this very profile and request. */
  #check(ticket: EntryTicket): void {
    if (!digestEquals(ticket.profile.digest, this.#profileDigest)) {
      throw new BatonError('provider_binding_conflict', 'the adapter holds another profile than the binding');
    }
    if (!digestEquals(digestJcs(ticket.request), ticket.requestDigest)) {
      throw new BatonError('store_corrupt', 'the entered request does not match its bound digest');
    }
  }

  #interpret(occurrenceId: string, result: ExchangeResult): SendResult {
    const now = this.#clock.wallMs();
    if (!result.ok) {
      return none(occurrenceId, now, failureDetail(result), null, result.sent);
    }
    const json = asObject(parseAnswer(result.body));
    if (result.status >= 500 || json === undefined) {
      const detail = json === undefined ? `http ${result.status} unreadable` : `http ${result.status}`;
      return none(occurrenceId, now, detail, result.status, true, json);
    }
    const pin = this.#profile.acknowledgement.authentication;
    const message = { method: 'POST', path: result.path, body: result.body, headers: result.headers };
    const auth = authenticate(message, pin, this.#options.keys, now);
    const payment = readPayment(json);
    const at = payment?.observedAt ?? observedAt(json) ?? now;
    // The service refuses an answer from the future; one that claims it tells us nothing usable.
    if (at > now + FUTURE_SKEW_MS)
      return none(occurrenceId, now, 'answer dated in the future', result.status, true);
    const base = {
      occurrenceId,
      observedAt: at,
      result: 'found' as const,
      response: json,
      authentication: auth.verified ? { verified: true, pin: auth.pin } : { verified: false },
    };
    // A refusal (4xx) is an answer the profile does not map: `error:<code>` stays unmapped.
    const status = payment?.nativeStatus ?? `error:${word(json['error'], String(result.status))}`;
    const carried = compact(payment?.carried ?? readErrorCarried(json));
    return {
      occurrenceId,
      acknowledged: auth.verified,
      detail: auth.verified ? `http ${result.status}` : `http ${result.status} ${auth.detail}`,
      httpStatus: result.status,
      sent: true,
      acknowledgement: { ...base, nativeStatus: safeStatus(status), carried },
    };
  }
}

/**
 * An entry whose credential this adapter holds but may not send to the entry URL's origin is
 * refused here, before any occurrence is entered for it; `exchange` refuses it again at the moment
 * of sending (credential-header.ts), so nothing is sent either way. A credential not held at all
 * stays a per-send `credential_not_held` (nothing sent), as before.
 */
function refuseUncoveredEntry(profile: ProviderProfile, keys: KeyResolver): void {
  const credential = profile.entry?.credential;
  if (profile.entry === undefined || credential === undefined) return;
  const url = expandUrl(profile.entry.url, { account: profile.account });
  const coverage = credentialCoverage(credential.id, keys, url);
  if (coverage.ok || coverage.code !== 'credential_origin_refused') return;
  throw new BatonError(
    'credential_origin_refused',
    `credential ${credential.id} may not be sent to ${url.origin} (the profile's entry URL): ` +
      'its credentials entry does not list that origin',
    { credential: credential.id, origin: url.origin },
  );
}

const STATUS = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}$/;
const safeStatus = (s: string): string => (STATUS.test(s) ? s : '_unreadable');

function none(
  occurrenceId: string,
  now: number,
  detail: string,
  httpStatus: number | null,
  sent: boolean,
  response?: object,
): SendResult {
  const acknowledgement: AcknowledgementInput = {
    occurrenceId,
    observedAt: now,
    result: 'unavailable',
    authentication: { verified: false },
    carried: {},
    ...(response !== undefined && { response: response as AcknowledgementInput['response'] }),
  };
  return { occurrenceId, acknowledged: false, detail, httpStatus, sent, acknowledgement };
}

/** Record what the adapter saw as the acknowledgement of the entry (missing knowledge if none came). */
export function recordSend(
  service: Pick<OccurrencesService, 'recordAcknowledgement'>,
  result: SendResult,
): Promise<ObserveResult> {
  return service.recordAcknowledgement(result.acknowledgement);
}
