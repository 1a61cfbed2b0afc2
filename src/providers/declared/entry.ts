/**
 * The entry call of a format 2 profile (`entry`: method, URL, encoding, credential), sent once by
 * the HTTP adapter, and its answer read by `acknowledgement.read` and authenticated by the
 * acknowledgement's pin. Under a `channel` pin the answer on the same exchange is the provider's
 * answer to the request that carried the native key, so the adapter states that key as carried:
 * Stripe answers a keyed POST with the first answer for that key (docs/sandbox-stripe.md).
 */
import type { Clock } from '../../core/clock.js';
import { resolveJsonPointer } from '../../core/json-pointer.js';
import type { JsonObject, JsonValue } from '../../core/json.js';
import { canonicalize } from '../../core/jcs.js';
import type {
  AcknowledgementInput,
  EntryRule,
  EntryTicket,
  ProviderProfile,
} from '../../occurrences/index.js';
import { exchange, failureDetail } from '../http-client.js';
import type { KeyResolver } from '../key-resolver.js';
import { expandUrl } from '../url-template.js';
import { asObject, parseAnswer, word } from '../wire.js';
import { authenticateFetched } from './channel.js';
import { applyRead } from './read.js';

/** `application/x-www-form-urlencoded` with bracketed nesting (`metadata[invoice]=…`, `a[0]=…`). */
export function formEncode(doc: JsonObject): string {
  const pairs: string[] = [];
  const walk = (prefix: string, v: JsonValue): void => {
    if (v === null) pairs.push(`${encodeURIComponent(prefix)}=`);
    else if (Array.isArray(v)) v.forEach((x, i) => walk(`${prefix}[${i}]`, x));
    else if (typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(`${prefix}[${k}]`, x);
    else pairs.push(`${encodeURIComponent(prefix)}=${encodeURIComponent(String(v))}`);
  };
  for (const [k, v] of Object.entries(doc)) walk(k, v);
  return pairs.join('&');
}

export interface DeclaredSent {
  readonly acknowledged: boolean;
  readonly detail: string;
  readonly httpStatus: number | null;
  readonly sent: boolean;
  readonly acknowledgement: AcknowledgementInput;
}

function none(id: string, now: number, detail: string, status: number | null, sent: boolean): DeclaredSent {
  const acknowledgement: AcknowledgementInput = {
    occurrenceId: id,
    observedAt: now,
    result: 'unavailable',
    authentication: { verified: false },
    carried: {},
  };
  return { acknowledged: false, detail, httpStatus: status, sent, acknowledgement };
}

export async function sendDeclared(
  profile: ProviderProfile,
  entry: EntryRule,
  ticket: EntryTicket,
  ctx: { readonly keys: KeyResolver; readonly clock: Clock; readonly timeoutMs: number },
): Promise<DeclaredSent> {
  const id = ticket.occurrence.id;
  const form = entry.encoding === 'form';
  const headers: Record<string, string> = {
    'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json',
  };
  if (ticket.nativeKeyHeader !== null && ticket.nativeKey !== null)
    headers[ticket.nativeKeyHeader.toLowerCase()] = ticket.nativeKey;
  const url = expandUrl(entry.url, { account: ticket.account });
  const body = form ? formEncode(ticket.request) : canonicalize(ticket.request);
  // `exchange` attaches the credential only for an origin its credentials entry lists. Without it
  // (`credential_not_held`, `credential_origin_refused`) nothing is sent: the occurrence stays
  // entered and unresolved.
  const credential = { use: entry.credential, keys: ctx.keys };
  const res = await exchange({ method: 'POST', url, headers, body, credential, timeoutMs: ctx.timeoutMs });
  const now = ctx.clock.wallMs();
  if (!res.ok && res.error === 'credential') return none(id, now, res.name, null, false);
  if (!res.ok) return none(id, now, failureDetail(res), null, res.sent);
  const json = asObject(parseAnswer(res.body));
  if (res.status >= 500 || json === undefined) return none(id, now, `http ${res.status}`, res.status, true);
  const message = { method: 'POST', path: res.path, body: res.body, headers: res.headers };
  const verdict = authenticateFetched(
    profile.acknowledgement.authentication,
    { url, credential: entry.credential?.id, message },
    ctx.keys,
    now,
  );
  const rule = profile.acknowledgement.read;
  const read = res.status < 300 && rule !== undefined ? applyRead(rule, json, profile.account) : undefined;
  const facts = read?.ok === true ? read.facts : undefined;
  const key = verdict.verified && ticket.nativeKey !== null ? { nativeKey: ticket.nativeKey } : {};
  // A refusal (4xx) is an answer the profile does not map: `error:<code>` stays unmapped.
  const status =
    facts?.nativeStatus ?? `error:${word(resolveJsonPointer(json, '/error/code'), String(res.status))}`;
  const acknowledgement: AcknowledgementInput = {
    occurrenceId: id,
    observedAt: facts?.observedAt ?? now,
    result: 'found',
    nativeStatus: status,
    response: json,
    authentication: verdict.verified ? { verified: true, pin: verdict.pin } : { verified: false },
    carried: { ...(facts?.carried ?? { account: profile.account }), ...key },
  };
  const detail = verdict.verified ? `http ${res.status}` : `http ${res.status} ${verdict.detail}`;
  return { acknowledged: verdict.verified, detail, httpStatus: res.status, sent: true, acknowledgement };
}
