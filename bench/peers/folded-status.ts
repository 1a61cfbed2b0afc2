/**
 * The folded PostgreSQL ceiling plus the status query (issue 16 "Done when"): bench/peers/folded.ts's
 * job, two statements and the payment call, and between the call and the settle statement what
 * Baton's job minimally needs to settle from the provider's authenticated status (AOC-REQ-009):
 *
 * - ONE status query as Baton issues it: the profile's first active source that can answer for a
 *   just-entered occurrence (`lookup_by_key`, src/providers/status-sources/index.ts `applicable`),
 *   its URL template expanded the same way, a GET through src/providers/http-client.ts `exchange`
 *   on the origin's keep-alive pool (`pooled`), no headers: the peer bench's profile
 *   (`sandbox-payments`, re-pinned by `deployProfile`) pins `hmac-sha256`, a signature pin, and
 *   Baton's format-1 lookup sends no credential for it (status-sources/lookup.ts).
 * - the same check of the answer Baton applies for that pin: HTTP 200, the body parsed strictly
 *   (parseStrictJson), the `Sandbox-Signature` verified against the pin's key by the same function
 *   (wire.ts `authenticate`), the payment read by the same reader (wire.ts `readPayment`), and, as
 *   the service's assessment does (occurrences/machine/assess.ts), the answer bound to this attempt
 *   (account, environment, native key, request digest), a reference of the profile's pattern, fresh
 *   (`observed_at` within the source's horizon, not before the entry), its status mapped by the
 *   profile to a settled state.
 * - the settle statement's outcome, effect and reference taken from that answer, and the
 *   observation event carrying the answer's digest and the pin that verified it.
 *
 * Left out, as in the folded ceiling: no service code, no profile digest check per query (a
 * constant here), no JCS of the answer (the digest is of its bytes), no second source when the
 * first leaves it open (the sandbox always answers), and the evidence bodies built from known keys.
 */
import { createHash } from 'node:crypto';
import { BatonError } from '../../src/core/errors.js';
import { parseStrictJson } from '../../src/core/json.js';
import {
  mapStatus,
  referenceMatches,
  type ProviderProfile,
  type StatusSource,
} from '../../src/occurrences/index.js';
import { hmacSecretId, staticKeys, type KeyResolver } from '../../src/providers/index.js';
import { exchange, type ExchangeResult } from '../../src/providers/http-client.js';
import { expandUrl } from '../../src/providers/url-template.js';
import { asObject, authenticate, readPayment } from '../../src/providers/wire.js';
import { openFolded, type Entered, type Settlement, type SettleFrom } from './folded.js';
import type { Provider, System } from './systems.js';

export const FOLDED_STATUS = 'ceiling: PostgreSQL folded + status query';

/** Baton's defaults: the status layer's timeout, the assessment's entry skew (assess.ts). */
const TIMEOUT_MS = 10_000;
const ENTRY_SKEW_MS = 60_000;
const MAX_ANSWER_BYTES = 1_048_576;

interface Asked {
  readonly profile: ProviderProfile;
  readonly source: StatusSource;
  readonly keys: KeyResolver;
}

const refuse = (code: 'unavailable' | 'signature_invalid' | 'provider_binding_conflict', why: string) =>
  new BatonError(code, `status query: ${why}`);

/** The answer, authenticated and read, or a typed refusal (the ceiling never settles on less). */
function readAnswer(a: Asked, res: ExchangeResult, now: number) {
  if (!res.ok) throw refuse('unavailable', `${res.error} ${res.name}`);
  if (res.status !== 200) throw refuse('unavailable', `http ${res.status}`);
  const doc = asObject(parseStrictJson(res.body, { maxBytes: MAX_ANSWER_BYTES }));
  const payment = readPayment(doc);
  if (payment === undefined) throw refuse('unavailable', 'not a payment');
  const message = { method: 'GET', path: res.path, body: res.body, headers: res.headers };
  const auth = authenticate(message, a.source.authentication, a.keys, now);
  if (!auth.verified) throw refuse('signature_invalid', auth.detail);
  return { payment, pin: auth.pin, body: res.body };
}

/** The outcome a mapped status settles to from an open occurrence (machine/observe.ts nextState). */
function settledState(a: Asked, nativeStatus: string): { outcome: string; effect: string } {
  const m = mapStatus(a.profile, nativeStatus);
  if (m?.interpretation === 'success') return { outcome: 'success', effect: 'occurred' };
  if (m?.establishesNoEffect === true) return { outcome: m.interpretation, effect: 'none_confirmed' };
  throw refuse('unavailable', `status ${nativeStatus} settles nothing`);
}

async function settleFromStatus(a: Asked, e: Entered): Promise<Settlement> {
  const { profile, source } = a;
  const url = expandUrl(source.url, { account: profile.account, nativeKey: e.nativeKey, reference: null });
  const res = await exchange({ method: 'GET', url, timeoutMs: TIMEOUT_MS, pooled: true });
  const now = Date.now();
  const { payment, pin, body } = readAnswer(a, res, now);
  const c = payment.carried;
  const reference = c.providerReference;
  const at = payment.observedAt;
  if (
    c.account !== profile.account ||
    c.environment !== profile.environment ||
    c.nativeKey !== e.nativeKey ||
    c.requestDigest !== e.requestDigest ||
    typeof reference !== 'string' ||
    !referenceMatches(profile, reference) ||
    at === undefined ||
    at < e.enteredAt - ENTRY_SKEW_MS
  )
    throw refuse('provider_binding_conflict', 'the answer is not about this attempt');
  if (now - at > source.freshnessSeconds * 1000) throw refuse('unavailable', 'stale answer');
  const state = settledState(a, payment.nativeStatus);
  // The answer's own bytes are what the signature covers: their digest is the evidence kept of it.
  const digest = `sha-256:${createHash('sha256').update(body).digest('base64url')}`;
  const observation = `{"authentication":{"pin":${JSON.stringify(pin)},"verified":true},"nativeStatus":${JSON.stringify(payment.nativeStatus)},"observedAt":${at},"reference":${JSON.stringify(reference)},"responseDigest":"${digest}","result":"found","source":${JSON.stringify(source.id)}}`;
  return { reference, ...state, observation };
}

/**
 * How the status-query ceilings settle: from the status source of `profile` — the deployed profile
 * the Baton systems of the same run register — verified with the sandbox's `hmac` key.
 */
export function settledFromStatus(hmac: Buffer, profile: ProviderProfile, tag: string) {
  const source = profile.statusSources.find((s) => s.kind === 'lookup_by_key');
  if (source === undefined)
    throw new BatonError('status_source_invalid', 'the profile pins no lookup by key');
  const asked: Asked = { profile, source, keys: staticKeys({ [hmacSecretId(hmac)]: hmac }) };
  const settleFrom: SettleFrom = (e) => settleFromStatus(asked, e);
  return { binding: { account: profile.account, environment: profile.environment }, settleFrom, tag };
}

/** The ceiling on the (empty) database at `url`, settled from the status query. */
export function foldedStatusCeiling(
  p: Provider,
  profile: ProviderProfile,
  url: string,
  workers: number,
): Promise<System> {
  return openFolded(FOLDED_STATUS, p, url, workers, settledFromStatus(p.hmac, profile, 'status'));
}
