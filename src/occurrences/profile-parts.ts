/** Parts of the profile validator: authentication pins and the native status map. */
import { sha256HexTag } from '../core/digest.js';
import { INTERPRETATIONS } from './model.js';
import type { AuthenticationPin } from './profile-types.js';
import type { Reader } from './validate.js';

const KEY_ID = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$/;
const B64URL_32 = /^[A-Za-z0-9_-]{43}$/;

/** Which pin kinds a place accepts: format 1 everywhere, format 2 by where the pin stands. */
export type PinPlace = 'v1' | 'active' | 'webhook';

const KINDS: Readonly<Record<PinPlace, readonly string[]>> = {
  v1: ['hmac-sha256', 'ed25519', 'jwks'],
  // A fetched answer: signed by the provider, or trusted for the channel it came over.
  active: ['hmac-sha256', 'ed25519', 'jwks', 'channel'],
  // A delivery to us: signed, never "channel" (anyone can POST to a receiver).
  webhook: ['hmac-sha256', 'ed25519', 'stripe-signature', 'standard-webhooks'],
};

const MEMBERS = [
  'secretId',
  'kid',
  'publicKey',
  'url',
  'kids',
  'origin',
  'credential',
  'toleranceSeconds',
  'version',
];
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
const WHPK = /^whpk_[A-Za-z0-9+/]{43}=$/;

function tolerance(r: Reader, value: unknown, path: string): void {
  // Both schemes document five minutes; more than an hour makes replay windows meaningless.
  r.integer(value, `${path}.toleranceSeconds`, 1, 3600);
}

/**
 * A channel origin: exactly an origin (no path, query, credentials), https — or http on the
 * loopback interface only, where no network sits between Baton and the server.
 */
function readOrigin(r: Reader, value: unknown, path: string): void {
  const text = r.string(value, path, undefined, 512);
  const url = URL.canParse(text) ? new URL(text) : r.fail(path, 'must be an origin URL');
  if (url.origin !== text) r.fail(path, 'must be exactly an origin (scheme://host[:port])');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) {
    r.fail(path, 'must be https (http only on the loopback interface)');
  }
}

function readStandardWebhooks(r: Reader, value: unknown, path: string): void {
  const head = r.object(value, path, ['kind', 'version'], MEMBERS);
  const version = r.oneOf(head['version'], `${path}.version`, ['v1', 'v1a'] as const);
  if (version === 'v1') {
    const f = r.object(value, path, ['kind', 'version', 'secretId', 'toleranceSeconds']);
    r.string(f['secretId'], `${path}.secretId`, KEY_ID);
    tolerance(r, f['toleranceSeconds'], path);
    return;
  }
  const f = r.object(value, path, ['kind', 'version', 'kid', 'publicKey', 'toleranceSeconds']);
  const key = r.string(f['publicKey'], `${path}.publicKey`, WHPK);
  const raw = Buffer.from(key.slice(5), 'base64');
  if (raw.length !== 32 || raw.toString('base64') !== key.slice(5))
    r.fail(`${path}.publicKey`, 'must be whpk_ + canonical base64 of 32 bytes');
  if (f['kid'] !== sha256HexTag(raw))
    r.fail(`${path}.kid`, 'must be sha256: + hex SHA-256 of the raw public key');
  tolerance(r, f['toleranceSeconds'], path);
}

export function readAuthentication(
  r: Reader,
  value: unknown,
  path: string,
  readUrl: (value: unknown, path: string) => void,
  place: PinPlace = 'v1',
): void {
  const head = r.object(value, path, ['kind'], place === 'v1' ? MEMBERS.slice(0, 5) : MEMBERS);
  const kind = r.oneOf(head['kind'], `${path}.kind`, KINDS[place]);
  if (kind === 'hmac-sha256') {
    const f = r.object(value, path, ['kind', 'secretId']);
    r.string(f['secretId'], `${path}.secretId`, KEY_ID);
    return;
  }
  if (kind === 'ed25519') {
    const f = r.object(value, path, ['kind', 'kid', 'publicKey']);
    const key = r.string(f['publicKey'], `${path}.publicKey`, B64URL_32);
    const raw = Buffer.from(key, 'base64url');
    if (raw.toString('base64url') !== key) r.fail(`${path}.publicKey`, 'is not canonical base64url');
    // The kid is derived, so a pin cannot name one key and carry another.
    if (f['kid'] !== sha256HexTag(raw))
      r.fail(`${path}.kid`, 'must be sha256: + hex SHA-256 of the raw public key');
    return;
  }
  if (kind === 'channel') {
    const f = r.object(value, path, ['kind', 'origin', 'credential']);
    readOrigin(r, f['origin'], `${path}.origin`);
    r.string(f['credential'], `${path}.credential`, KEY_ID);
    return;
  }
  if (kind === 'stripe-signature') {
    const f = r.object(value, path, ['kind', 'secretId', 'toleranceSeconds']);
    r.string(f['secretId'], `${path}.secretId`, KEY_ID);
    tolerance(r, f['toleranceSeconds'], path);
    return;
  }
  if (kind === 'standard-webhooks') return readStandardWebhooks(r, value, path);
  const f = r.object(value, path, ['kind', 'url', 'kids']);
  readUrl(f['url'], `${path}.url`);
  const kids = r
    .array(f['kids'], `${path}.kids`, 1, 16)
    .map((k, i) => r.string(k, `${path}.kids[${i}]`, KEY_ID));
  if (new Set(kids).size !== kids.length) r.fail(`${path}.kids`, 'has duplicate entries');
}

/**
 * The identities a pin accepts as "the key that verified this answer": what the status-source
 * layer states in `authentication.pin` and the judge compares (assess.ts).
 */
export function pinIdentities(pin: AuthenticationPin): readonly string[] {
  switch (pin.kind) {
    case 'hmac-sha256':
    case 'stripe-signature':
      return [pin.secretId];
    case 'ed25519':
      return [pin.kid];
    case 'jwks':
      return pin.kids;
    case 'channel':
      return [`channel:${pin.origin}#${pin.credential}`];
    case 'standard-webhooks':
      return [pin.version === 'v1' ? pin.secretId : pin.kid];
  }
}

/**
 * The map native status → interpretation. Every terminal interpretation must say whether it
 * establishes no effect (AOC-REQ-011); `success` and `accepted` never do.
 */
export function readStatuses(r: Reader, value: unknown, member: RegExp): void {
  const names = typeof value === 'object' && value !== null ? Object.keys(value) : [];
  const map = r.object(value, '$.statuses', [], names);
  if (names.length === 0 || names.length > 256) r.fail('$.statuses', 'must map 1..256 native statuses');
  for (const name of names) {
    const path = `$.statuses.${name}`;
    r.string(name, `${path} (name)`, member);
    const f = r.object(map[name], path, ['interpretation', 'establishesNoEffect']);
    const interpretation = r.oneOf(f['interpretation'], `${path}.interpretation`, INTERPRETATIONS);
    const noEffect = r.boolean(f['establishesNoEffect'], `${path}.establishesNoEffect`);
    if (noEffect && (interpretation === 'success' || interpretation === 'accepted')) {
      r.fail(`${path}.establishesNoEffect`, `${interpretation} cannot establish that no effect occurred`);
    }
  }
}
