/** Parts of the profile validator: authentication pins and the native status map. */
import { sha256HexTag } from '../core/digest.js';
import { INTERPRETATIONS } from './model.js';
import type { Reader } from './validate.js';

const KEY_ID = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$/;
const B64URL_32 = /^[A-Za-z0-9_-]{43}$/;

export function readAuthentication(
  r: Reader,
  value: unknown,
  path: string,
  readUrl: (value: unknown, path: string) => void,
): void {
  const head = r.object(value, path, ['kind'], ['secretId', 'kid', 'publicKey', 'url', 'kids']);
  const kind = r.oneOf(head['kind'], `${path}.kind`, ['hmac-sha256', 'ed25519', 'jwks'] as const);
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
  const f = r.object(value, path, ['kind', 'url', 'kids']);
  readUrl(f['url'], `${path}.url`);
  const kids = r
    .array(f['kids'], `${path}.kids`, 1, 16)
    .map((k, i) => r.string(k, `${path}.kids[${i}]`, KEY_ID));
  if (new Set(kids).size !== kids.length) r.fail(`${path}.kids`, 'has duplicate entries');
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
