/**
 * The issuer pin `baton.mission-issuer/1`: everything Baton trusts about one Mission issuer, fixed
 * in a strict JSON document whose JCS digest names it (A5 "Issuer pin"). Keys are only ever taken
 * from its `jwks_uri`, answers only accepted from its `issuer`, and Baton authenticates only with
 * `private_key_jwt` (C-A13; mTLS and DPoP later; client secrets never). One consumer audience per
 * pin (C-A12). Outside tests every URL is HTTPS; plain HTTP is allowed only to a loopback host.
 */
import { digestJcs, type Sha256Digest } from '../core/digest.js';
import { BatonError } from '../core/errors.js';
import { ASYMMETRIC_JWS_ALGORITHMS, MISSION_JWS_ALGORITHMS, type JwsAlgorithm } from '../core/jose.js';
import { parseStrictJson, type JsonObject, type JsonValue } from '../core/json.js';

export const ISSUER_PIN_FORMAT = 'baton.mission-issuer/1';
export const PUSH_DELIVERY = 'urn:ietf:rfc:8935';
export const POLL_DELIVERY = 'urn:ietf:rfc:8936';

export interface IssuerPin {
  readonly format: typeof ISSUER_PIN_FORMAT;
  readonly issuer: string;
  readonly jwks_uri: string;
  readonly endpoints: {
    readonly status: string;
    readonly lifecycle?: string;
    readonly token?: string;
    readonly event_stream?: string;
  };
  readonly algorithms: readonly JwsAlgorithm[];
  readonly client: {
    readonly client_id: string;
    readonly auth_method: 'private_key_jwt';
    /** Names the private key (a file, a key id in a keystore); the key itself is never in the pin. */
    readonly key_ref: string;
    readonly alg: 'ES256' | 'EdDSA';
  };
  readonly audience: string;
  /**
   * The issuer's advertised `mission_max_stale_seconds` (MSG-03); null when it advertised none
   * (the member is OPTIONAL). 0 is the strictest bound: no reliance past the check itself.
   */
  readonly bounds: { readonly max_stale_seconds: number | null };
  readonly stream: {
    readonly delivery: typeof PUSH_DELIVERY | typeof POLL_DELIVERY;
    readonly endpoint?: string;
  } | null;
}

export interface PinOptions {
  /** Tests and the reference issuer on 127.0.0.1: allow `http:` to a loopback host. */
  readonly allowLoopbackHttp?: boolean;
}

function bad(message: string, member?: string): never {
  throw new BatonError('mission_issuer_pin_invalid', message, member !== undefined ? { member } : {});
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function closed(
  value: unknown,
  where: string,
  required: readonly string[],
  optional: readonly string[] = [],
): JsonObject {
  if (!isObject(value)) bad(`${where} is not an object`, where);
  for (const member of Object.keys(value)) {
    if (!required.includes(member) && !optional.includes(member))
      bad(`unknown member ${where}.${member}`, member);
  }
  for (const member of required) if (!Object.hasOwn(value, member)) bad(`missing ${where}.${member}`, member);
  return value;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

function url(value: JsonValue | undefined, member: string, o: PinOptions): string {
  if (typeof value !== 'string' || !URL.canParse(value)) bad(`${member} is not a URL`, member);
  const parsed = new URL(value);
  const loopbackHttp =
    parsed.protocol === 'http:' && LOOPBACK.has(parsed.hostname) && o.allowLoopbackHttp === true;
  if (parsed.protocol !== 'https:' && !loopbackHttp) bad(`${member} must be https`, member);
  if (parsed.hash !== '' || parsed.username !== '' || parsed.password !== '')
    bad(`${member} has a fragment or userinfo`, member);
  return value;
}

function text(value: JsonValue | undefined, member: string): string {
  if (typeof value !== 'string' || value === '' || value.length > 2048)
    bad(`${member} is not a string`, member);
  return value;
}

function algorithms(value: JsonValue | undefined): JwsAlgorithm[] {
  if (!Array.isArray(value) || value.length === 0) bad('algorithms is not a non-empty array', 'algorithms');
  const allowed = new Set<string>(ASYMMETRIC_JWS_ALGORITHMS);
  for (const alg of value)
    if (typeof alg !== 'string' || !allowed.has(alg))
      bad('algorithms names a non-asymmetric algorithm', 'algorithms');
  if (new Set(value).size !== value.length) bad('algorithms lists one twice', 'algorithms');
  return value as JwsAlgorithm[];
}

function endpoints(value: JsonValue | undefined, o: PinOptions): IssuerPin['endpoints'] {
  const e = closed(value, 'endpoints', ['status'], ['lifecycle', 'token', 'event_stream']);
  return {
    status: url(e['status'], 'endpoints.status', o),
    ...(e['lifecycle'] !== undefined && { lifecycle: url(e['lifecycle'], 'endpoints.lifecycle', o) }),
    ...(e['token'] !== undefined && { token: url(e['token'], 'endpoints.token', o) }),
    ...(e['event_stream'] !== undefined && {
      event_stream: url(e['event_stream'], 'endpoints.event_stream', o),
    }),
  };
}

function client(value: JsonValue | undefined): IssuerPin['client'] {
  const c = closed(value, 'client', ['client_id', 'auth_method', 'key_ref', 'alg']);
  if (c['auth_method'] !== 'private_key_jwt')
    bad('client.auth_method must be private_key_jwt', 'auth_method');
  if (c['alg'] !== 'ES256' && c['alg'] !== 'EdDSA') bad('client.alg must be ES256 or EdDSA', 'alg');
  return {
    client_id: text(c['client_id'], 'client.client_id'),
    auth_method: 'private_key_jwt',
    key_ref: text(c['key_ref'], 'client.key_ref'),
    alg: c['alg'],
  };
}

function stream(value: JsonValue | undefined, o: PinOptions): IssuerPin['stream'] {
  if (value === null) return null;
  const s = closed(value, 'stream', ['delivery'], ['endpoint']);
  if (s['delivery'] !== PUSH_DELIVERY && s['delivery'] !== POLL_DELIVERY)
    bad('stream.delivery is not RFC 8935 or 8936', 'delivery');
  if (s['delivery'] === POLL_DELIVERY && s['endpoint'] === undefined)
    bad('poll delivery needs stream.endpoint', 'endpoint');
  return {
    delivery: s['delivery'],
    ...(s['endpoint'] !== undefined && { endpoint: url(s['endpoint'], 'stream.endpoint', o) }),
  };
}

/** A pin from its parsed JSON: closed objects, every member checked. */
export function parseIssuerPin(value: unknown, o: PinOptions = {}): IssuerPin {
  const doc = closed(value, 'pin', [
    'format',
    'issuer',
    'jwks_uri',
    'endpoints',
    'algorithms',
    'client',
    'audience',
    'bounds',
    'stream',
  ]);
  if (doc['format'] !== ISSUER_PIN_FORMAT) bad(`format is not ${ISSUER_PIN_FORMAT}`, 'format');
  const bounds = closed(doc['bounds'], 'bounds', ['max_stale_seconds']);
  const stale = bounds['max_stale_seconds'];
  if (stale !== null && (typeof stale !== 'number' || !Number.isSafeInteger(stale) || stale < 0))
    bad('bounds.max_stale_seconds is not an integer >= 0 or null', 'max_stale_seconds');
  const issuer = url(doc['issuer'], 'issuer', o);
  if (new URL(issuer).search !== '') bad('issuer has a query', 'issuer');
  return {
    format: ISSUER_PIN_FORMAT,
    issuer,
    jwks_uri: url(doc['jwks_uri'], 'jwks_uri', o),
    endpoints: endpoints(doc['endpoints'], o),
    algorithms: algorithms(doc['algorithms']),
    client: client(doc['client']),
    audience: text(doc['audience'], 'audience'),
    bounds: { max_stale_seconds: stale },
    stream: stream(doc['stream'], o),
  };
}

export function parseIssuerPinText(text: string | Uint8Array, o: PinOptions = {}): IssuerPin {
  return parseIssuerPin(parseStrictJson(text), o);
}

/**
 * The reliance bound the issuer advertised (`mission_max_stale_seconds`, MSG-03), or undefined when
 * it advertised none (`null`: the member is OPTIONAL in the metadata). An explicit 0 is kept: the
 * issuer tolerates no staleness, so an answer is relied on no later than the check that fetched it
 * (fail closed). Baton's own bound applies either way; this one only ever shortens it.
 */
export function advertisedReliance(pin: IssuerPin): number | undefined {
  return pin.bounds.max_stale_seconds ?? undefined;
}

/** The pin's name in evidence: `sha-256:` over its JCS. */
export function issuerPinDigest(pin: IssuerPin): Sha256Digest {
  return digestJcs(pin);
}

export interface PinFromMetadataInput {
  /** The issuer Baton expects; RFC 8414 §3.3: metadata whose `issuer` differs is refused. */
  readonly issuer: string;
  readonly clientId: string;
  readonly keyRef: string;
  readonly clientAlg?: 'ES256' | 'EdDSA';
  readonly audience: string;
  readonly algorithms?: readonly JwsAlgorithm[];
  readonly stream?: IssuerPin['stream'];
}

/** Build a pin from an issuer's `/.well-known/oauth-authorization-server` document (A2.4). */
export function pinFromMetadata(
  metadata: unknown,
  input: PinFromMetadataInput,
  o: PinOptions = {},
): IssuerPin {
  if (!isObject(metadata)) bad('metadata is not an object');
  if (metadata['issuer'] !== input.issuer) bad('metadata issuer is not the expected issuer', 'issuer');
  const optional = (member: string): JsonValue | undefined => metadata[member];
  const endpointsDoc: JsonObject = { status: optional('mission_status_endpoint') ?? null };
  for (const [from, to] of [
    ['mission_lifecycle_endpoint', 'lifecycle'],
    ['token_endpoint', 'token'],
    ['mission_event_stream_endpoint', 'event_stream'],
  ] as const) {
    const value = optional(from);
    if (value !== undefined) endpointsDoc[to] = value;
  }
  const stale = optional('mission_max_stale_seconds');
  // MSG-03 makes the member a number: a present `null` is malformed, not "not advertised".
  if (stale === null)
    bad('mission_max_stale_seconds is null, not a number of seconds', 'mission_max_stale_seconds');
  return parseIssuerPin(
    {
      format: ISSUER_PIN_FORMAT,
      issuer: input.issuer,
      jwks_uri: optional('jwks_uri') ?? null,
      endpoints: endpointsDoc,
      algorithms: [...(input.algorithms ?? MISSION_JWS_ALGORITHMS)],
      client: {
        client_id: input.clientId,
        auth_method: 'private_key_jwt',
        key_ref: input.keyRef,
        alg: input.clientAlg ?? 'ES256',
      },
      audience: input.audience,
      // Absent ⇒ null (not advertised); anything present is checked as the pin's own member, so a
      // non-integer is refused, never read as "not advertised".
      bounds: { max_stale_seconds: stale === undefined ? null : stale },
      stream: (input.stream ?? null) as JsonValue,
    },
    o,
  );
}
