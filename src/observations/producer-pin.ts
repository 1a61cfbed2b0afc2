/**
 * Producer key pins (OBS-12 ¶25: across a trust boundary the issuer of a record is authenticated;
 * OBS-08 ¶19: record ids are unique within a producer's namespace). A pin names a producer and the
 * Ed25519 public keys whose signatures Baton accepts for it — several at once, so a producer can
 * rotate without a gap (pin old + new, move its signer, pin new alone). A pin is read here, the same
 * way for the HTTP API and the config file; the store keeps it (src/store/observations-producers.ts).
 *
 * Each key is a public JWK (`kty OKP`, `crv Ed25519`, `x`; `kid`, `alg EdDSA`, `use sig` optional)
 * or `{ "pem": "-----BEGIN PUBLIC KEY-----…" }`, imported by core's `importEd25519PublicKey`, so the
 * key policy of src/core/ed25519-policy.ts (canonical, on the curve, not of small order) applies. A
 * pin is kept as the keys' JWKs with their kid by the kid rule (`sha256:` + hex of the raw key).
 */
import {
  BatonError,
  digestJcs,
  exportEd25519PublicJwk,
  importEd25519PublicKey,
  isBatonError,
  type BatonErrorCode,
  type Ed25519PublicJwk,
  type Sha256Digest,
} from '../core/index.js';
import { MAX_PRODUCER_ID } from './model.js';

/** Keys one producer may have pinned at once: enough for a rotation's overlap, not a key store. */
export const MAX_PRODUCER_KEYS = 16;
/** A URI as the binding uses them (src/observations/rules.ts): a scheme, a colon, something after. */
export const PRODUCER_ID = /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/;
const JWK_MEMBERS = new Set(['kty', 'crv', 'x', 'kid', 'alg', 'use']);
const PEM_MAX = 4096;

export interface ProducerPin {
  readonly producer: string;
  /** 1..MAX_PRODUCER_KEYS public keys, in kid order, no key twice. */
  readonly keys: readonly Ed25519PublicJwk[];
}

/** Where a reader's refusals go: `input_invalid` (the API) or `config_invalid` (the config file). */
export type PinErrorCode = Extract<BatonErrorCode, 'input_invalid' | 'config_invalid'>;

function fail(code: PinErrorCode, path: string, why: string): never {
  throw new BatonError(code, `${path}: ${why}`, { path });
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/**
 * A producer id a pin may name: a URI, never in Baton's own namespace `urn:baton:` (any case) —
 * neither a domain's producer `urn:baton:<domain>`, whose only key is the domain key and whose only
 * records are the ones Baton projects (B7-12), nor the unsigned local producer `urn:baton:local`.
 */
export function readProducerId(value: unknown, path: string, code: PinErrorCode = 'input_invalid'): string {
  if (typeof value !== 'string') fail(code, path, 'must be a string');
  if (value.length === 0 || value.length > MAX_PRODUCER_ID)
    fail(code, path, `must have 1..${MAX_PRODUCER_ID} characters`);
  // U+0000 is refused too: the store cannot keep it (docs/api.md "Text").
  if (!PRODUCER_ID.test(value) || value.includes('\u0000') || !value.isWellFormed())
    fail(code, path, 'must be a URI (scheme:rest, no white space, no U+0000)');
  if (value.toLowerCase().startsWith('urn:baton:'))
    fail(
      code,
      path,
      'is in Baton’s own namespace (urn:baton:): its domain producer is verified under the domain key and urn:baton:local is unsigned; neither takes a pin',
    );
  return value;
}

/**
 * A key's own refusal (`key_invalid`, `key_unsupported`) keeps its code on the API
 * and gains the path; in a config file every refusal is `config_invalid` at that path.
 */
function keyRefusal(error: unknown, path: string, code: PinErrorCode): never {
  if (!isBatonError(error)) throw error;
  if (code === 'config_invalid') fail(code, path, error.message);
  throw new BatonError(error.code, `${path}: ${error.message}`, { ...error.details, path });
}

function readJwk(f: Record<string, unknown>, path: string, code: PinErrorCode): Ed25519PublicJwk {
  let jwk: Ed25519PublicJwk;
  try {
    // Every member but the three optional labels goes to the importer first, so another key type
    // is `key_unsupported` and a private key (`d`) `key_invalid`, not an unknown member.
    const { kid: _kid, alg: _alg, use: _use, ...material } = f;
    jwk = exportEd25519PublicJwk(importEd25519PublicKey({ jwk: material }));
  } catch (error) {
    keyRefusal(error, path, code);
  }
  for (const name of Object.keys(f))
    if (!JWK_MEMBERS.has(name)) fail(code, `${path}.${name}`, 'is not allowed here');
  if (f['alg'] !== undefined && f['alg'] !== 'EdDSA') fail(code, `${path}.alg`, 'must be EdDSA');
  if (f['use'] !== undefined && f['use'] !== 'sig') fail(code, `${path}.use`, 'must be sig');
  if (f['kid'] !== undefined && f['kid'] !== jwk.kid) {
    const why = 'does not follow the kid rule (sha256: + hex of the raw key)';
    keyRefusal(new BatonError('key_invalid', why), `${path}.kid`, code);
  }
  return jwk;
}

/** One pinned key: a public JWK or `{ pem }`, as its JWK with the kid-rule kid. */
export function readProducerKey(
  value: unknown,
  path: string,
  code: PinErrorCode = 'input_invalid',
  pemPath = `${path}.pem`,
): Ed25519PublicJwk {
  if (!isObject(value)) fail(code, path, 'must be an object (a public JWK, or {"pem": …})');
  if (!Object.hasOwn(value, 'pem')) return readJwk(value, path, code);
  if (Object.keys(value).length !== 1) fail(code, path, 'must hold only pem, or be a JWK');
  const pem = value['pem'];
  if (typeof pem !== 'string' || pem.length === 0 || pem.length > PEM_MAX)
    fail(code, pemPath, `must be a string of 1..${PEM_MAX} characters`);
  try {
    return exportEd25519PublicJwk(importEd25519PublicKey({ pem }));
  } catch (error) {
    keyRefusal(error, pemPath, code);
  }
}

/** The keys of a pin, in kid order; the same key twice is refused (an operator's slip, not a set). */
export function readProducerKeys(
  value: unknown,
  path: string,
  code: PinErrorCode = 'input_invalid',
): Ed25519PublicJwk[] {
  if (!Array.isArray(value) || value.length < 1 || value.length > MAX_PRODUCER_KEYS)
    fail(code, path, `must be an array of 1..${MAX_PRODUCER_KEYS} keys`);
  const keys = value.map((k, i) => readProducerKey(k, `${path}[${i}]`, code));
  const seen = new Set<string>();
  keys.forEach((k, i) => {
    if (seen.has(k.kid)) fail(code, `${path}[${i}]`, 'repeats an earlier key');
    seen.add(k.kid);
  });
  return keys.sort((a, b) => (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0));
}

/** `{ producer, keys }`, the body of `PUT /v1/continuity/producers`. */
export function readProducerPin(
  value: unknown,
  code: PinErrorCode = 'input_invalid',
  path = '$',
): ProducerPin {
  if (!isObject(value)) fail(code, path, 'must be an object');
  for (const name of Object.keys(value))
    if (name !== 'producer' && name !== 'keys') fail(code, `${path}.${name}`, 'is not allowed here');
  if (!Object.hasOwn(value, 'producer')) fail(code, `${path}.producer`, 'is required');
  if (!Object.hasOwn(value, 'keys')) fail(code, `${path}.keys`, 'is required');
  return {
    producer: readProducerId(value['producer'], `${path}.producer`, code),
    keys: readProducerKeys(value['keys'], `${path}.keys`, code),
  };
}

/** What identifies a pinned key set: the digest of its kids in order (the same keys, the same digest). */
export function producerKeysDigest(keys: readonly Pick<Ed25519PublicJwk, 'kid'>[]): Sha256Digest {
  return digestJcs(keys.map((k) => k.kid).sort());
}
