/**
 * Pinned producer keys over HTTP (docs/observations.md "Pinned producer keys"; OBS-12 ¶25): which
 * Ed25519 keys a signed continuity record under a producer other than Baton's own must verify
 * under. Admins pin (a whole key set, replacing any earlier one) and unpin; operators read. The
 * producer travels in the body or the query string, not the path: producer ids are URIs, longer
 * and more colon-laden than a path segment takes. `POST /v1/continuity/records` reads the pins
 * when it verifies, so a change here applies to the next submission on every server.
 */
import { BatonError } from '../../core/errors.js';
import {
  MAX_PRODUCER_ID,
  MAX_PRODUCER_KEYS,
  readProducerId,
  readProducerPin,
} from '../../observations/index.js';
import { ProducerKeys, type PinnedProducer } from '../../store/index.js';
import { actorOf } from '../auth.js';
import { timed, tokenOf, type RouteSpec, type ServerDeps } from '../route.js';
import { array, epochMs, object, oneOf, type Schema } from '../schemas/common.js';

export const CONTINUITY_PRODUCERS_URL = '/v1/continuity/producers';

const str: Schema = { type: 'string' };
/**
 * Loose on purpose, like `pinKey`: `readProducerId` checks the id, so a refusal is the same here,
 * in the config file and for a record's `producer` — the path `$.producer`, the one limit.
 */
const producerId: Schema = {
  type: 'string',
  description: `A producer URI (1..${MAX_PRODUCER_ID} characters) outside Baton’s own namespace (urn:baton:…)`,
};

/** Loose on purpose: the pin reader checks each key, so a refusal keeps its code and JSON path. */
const pinKey: Schema = {
  type: 'object',
  description:
    'An Ed25519 public key: a JWK {kty "OKP", crv "Ed25519", x, kid?, alg? "EdDSA", use? "sig"} or {pem: "-----BEGIN PUBLIC KEY-----…"}',
  properties: { kty: str, crv: str, x: str, kid: str, alg: str, use: str, pem: str },
};

const pinBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['producer', 'keys'],
  properties: {
    producer: producerId,
    keys: { type: 'array', minItems: 1, maxItems: MAX_PRODUCER_KEYS, items: pinKey },
  },
};

const pinnedKey: Schema = object({
  kty: oneOf(['OKP']),
  crv: oneOf(['Ed25519']),
  x: str,
  kid: str,
});

export const pinnedProducer: Schema = object({
  producer: str,
  keys: array(pinnedKey),
  keysDigest: str,
  pinnedAt: epochMs,
  pinnedBy: str,
});

const view = (p: PinnedProducer): Record<string, unknown> => ({
  producer: p.producer,
  keys: p.keys,
  keysDigest: p.keysDigest,
  pinnedAt: p.pinnedAt,
  pinnedBy: p.pinnedBy,
});

export function continuityProducerRoutes(deps: ServerDeps): RouteSpec[] {
  const store = new ProducerKeys(deps.engine);
  // Like every /v1/continuity route: a server without the domain's signing key takes no records.
  const pins = (): ProducerKeys => {
    if (deps.continuity === undefined)
      throw new BatonError('unavailable', 'continuity records need the domain signing key (serve passes it)');
    return store;
  };
  return [
    {
      method: 'PUT',
      url: CONTINUITY_PRODUCERS_URL,
      operationId: 'pinContinuityProducer',
      summary:
        'Pin a producer’s Ed25519 public keys (the whole set, replacing any earlier one): 201 created, 200 updated or unchanged',
      tag: 'continuity',
      roles: ['admin'],
      schema: {
        body: pinBody,
        response: {
          200: object({ status: oneOf(['updated', 'unchanged']), pinned: pinnedProducer }),
          201: object({ status: oneOf(['created']), pinned: pinnedProducer }),
        },
      },
      handler: async (input) => {
        const pin = readProducerPin(input.body);
        const actor = actorOf(tokenOf(input));
        const done = await timed(deps, 'continuity_pin_producer', () =>
          pins().pin(pin, actor, deps.clock.wallMs()),
        );
        return {
          status: done.status === 'created' ? 201 : 200,
          body: { status: done.status, pinned: view(done.pinned) },
        };
      },
    },
    {
      method: 'GET',
      url: CONTINUITY_PRODUCERS_URL,
      operationId: 'listContinuityProducers',
      summary: 'Every pinned producer and its keys, in producer order',
      tag: 'continuity',
      roles: ['operator'],
      schema: { response: { 200: object({ producers: array(pinnedProducer) }) } },
      handler: async () => ({ body: { producers: (await pins().list()).map(view) } }),
    },
    {
      method: 'DELETE',
      url: CONTINUITY_PRODUCERS_URL,
      operationId: 'unpinContinuityProducer',
      summary:
        'Remove a producer’s pin (idempotent): its signed records are refused from then on; stored records stay',
      tag: 'continuity',
      roles: ['admin'],
      schema: {
        querystring: object({ producer: producerId }),
        response: { 200: object({ producer: str, status: oneOf(['removed', 'absent']) }) },
      },
      handler: async (input) => {
        const producer = readProducerId(input.query['producer'], '$.producer');
        const actor = actorOf(tokenOf(input));
        const status = await timed(deps, 'continuity_unpin_producer', () =>
          pins().unpin(producer, actor, deps.clock.wallMs()),
        );
        return { body: { producer, status } };
      },
    },
  ];
}
