/**
 * The config file's reader: strict JSON (core's parseStrictJson: duplicate members refused), then
 * exactly the rules of schemas/baton.config.schema.json (a test holds the two together on valid
 * and invalid examples), then the rules a JSON Schema cannot say: unique authority ids, profile
 * entries and token names. Every refusal is `config_invalid` naming the path, never the value.
 */
import { BatonError, isBatonError } from '../../core/errors.js';
import type { JsonObject } from '../../core/json.js';
import { parseJsonFile } from '../json-file.js';
import {
  Reader,
  readAuthorityInput,
  readDomainConfig,
  type AuthorityInput,
  type DomainConfigInput,
} from '../../occurrences/index.js';
import { SECRET_REF } from '../../missions/index.js';
import { MAX_PRODUCER_KEYS, readProducerId, readProducerKey } from '../../observations/index.js';
import {
  CONFIG_FORMAT,
  type BatonConfig,
  type IssuerEntry,
  type ProducerEntry,
  type ProducerKeyEntry,
  type ProfileEntry,
  type TokenEntry,
} from './model.js';

const r = new Reader('config_invalid');
const TOKEN_NAME = /^[A-Za-z0-9][A-Za-z0-9 ._:@/-]{0,127}$/;
const HTTP_URL = /^https?:\/\/[^\s]+$/;
const PATH_MAX = 1024;

/** Re-throw the service's own input check as a config error at `prefix` (same rule, one place). */
function nested<T>(prefix: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!isBatonError(error, 'input_invalid')) throw error;
    const inner = typeof error.details['path'] === 'string' ? error.details['path'] : '$';
    const path = `${prefix}${inner.slice(1)}`;
    throw new BatonError('config_invalid', `${path}${error.message.slice(inner.length)}`, { path });
  }
}

function readDomain(value: unknown): DomainConfigInput | undefined {
  if (value === undefined) return undefined;
  return nested('$.domain', () => readDomainConfig(value));
}

function readProfile(value: unknown, i: number): ProfileEntry {
  const path = `$.profiles[${i}]`;
  const f = r.object(value, path, [], ['file', 'document', 'pinToSandbox']);
  if ((f['file'] === undefined) === (f['document'] === undefined))
    r.fail(path, 'must have exactly one of file and document');
  const file = r.optionalString(f['file'], `${path}.file`, undefined, PATH_MAX);
  const document =
    f['document'] === undefined ? undefined : (r.anyObject(f['document'], `${path}.document`) as JsonObject);
  const pin = r.optionalString(f['pinToSandbox'], `${path}.pinToSandbox`, HTTP_URL, PATH_MAX);
  return {
    ...(file !== undefined && { file }),
    ...(document && { document }),
    ...(pin !== undefined && { pinToSandbox: pin }),
  };
}

function readAuthorities(value: unknown): AuthorityInput[] {
  if (value === undefined) return [];
  const list = r
    .array(value, '$.authorities', 0, 1000)
    .map((a, i) => nested(`$.authorities[${i}]`, () => readAuthorityInput(a)));
  unique(
    list.map((a) => a.id),
    '$.authorities',
    'id',
  );
  return list;
}

function readTokens(value: unknown): BatonConfig['tokens'] {
  if (value === undefined) return { create: [] };
  const f = r.object(value, '$.tokens', ['create'], ['file']);
  const file = r.optionalString(f['file'], '$.tokens.file', undefined, PATH_MAX);
  const create = r.array(f['create'], '$.tokens.create', 0, 100).map((t, i): TokenEntry => {
    const path = `$.tokens.create[${i}]`;
    const e = r.object(t, path, ['name', 'role']);
    return {
      name: r.string(e['name'], `${path}.name`, TOKEN_NAME, 128),
      role: r.oneOf(e['role'], `${path}.role`, ['operator', 'admin'] as const),
    };
  });
  unique(
    create.map((t) => t.name),
    '$.tokens.create',
    'name',
  );
  return { ...(file !== undefined && { file }), create };
}

function readIssuer(value: unknown, i: number): IssuerEntry {
  const path = `$.issuers[${i}]`;
  const f = r.object(value, path, [], ['file', 'pin', 'pushBearerRef', 'pollBearerRef']);
  if ((f['file'] === undefined) === (f['pin'] === undefined))
    r.fail(path, 'must have exactly one of file and pin');
  const file = r.optionalString(f['file'], `${path}.file`, undefined, PATH_MAX);
  const pin = f['pin'] === undefined ? undefined : (r.anyObject(f['pin'], `${path}.pin`) as JsonObject);
  const push = r.optionalString(f['pushBearerRef'], `${path}.pushBearerRef`, SECRET_REF, PATH_MAX + 5);
  const poll = r.optionalString(f['pollBearerRef'], `${path}.pollBearerRef`, SECRET_REF, PATH_MAX + 5);
  return {
    ...(file !== undefined && { file }),
    ...(pin && { pin }),
    ...(push !== undefined && { pushBearerRef: push }),
    ...(poll !== undefined && { pollBearerRef: poll }),
  };
}

/** A key inline (a public JWK or `{ pem }`, checked now) or `{ file }` (read when loaded). */
function readKeyEntry(value: unknown, path: string): ProducerKeyEntry {
  if (typeof value === 'object' && value !== null && Object.hasOwn(value, 'file')) {
    const f = r.object(value, path, ['file']);
    return { file: r.string(f['file'], `${path}.file`, undefined, PATH_MAX) };
  }
  return { jwk: readProducerKey(value, path, 'config_invalid') };
}

function readProducers(value: unknown): ProducerEntry[] {
  if (value === undefined) return [];
  const list = r.array(value, '$.producers', 0, 100).map((p, i): ProducerEntry => {
    const path = `$.producers[${i}]`;
    const f = r.object(p, path, ['producer', 'keys']);
    const keys = r.array(f['keys'], `${path}.keys`, 0, MAX_PRODUCER_KEYS);
    const entries = keys.map((k, j) => readKeyEntry(k, `${path}.keys[${j}]`));
    // The same inline key twice is an operator's slip (key files are compared when loaded).
    const kids = entries.map((k) => ('jwk' in k ? k.jwk.kid : undefined));
    kids.forEach((kid, j) => {
      if (kid !== undefined && kids.indexOf(kid) < j) r.fail(`${path}.keys[${j}]`, 'repeats an earlier key');
    });
    return { producer: readProducerId(f['producer'], `${path}.producer`, 'config_invalid'), keys: entries };
  });
  unique(
    list.map((p) => p.producer),
    '$.producers',
    'producer',
  );
  return list;
}

function unique(values: readonly string[], path: string, member: string): void {
  const seen = new Set<string>();
  values.forEach((v, i) => {
    if (seen.has(v)) r.fail(`${path}[${i}].${member}`, 'repeats an earlier entry');
    seen.add(v);
  });
}

/** A parsed config value → the checked config (profile documents are checked when loaded). */
export function readConfig(value: unknown): BatonConfig {
  const f = r.object(
    value,
    '$',
    ['format'],
    ['$schema', 'domain', 'profiles', 'authorities', 'tokens', 'issuers', 'producers'],
  );
  if (f['format'] !== CONFIG_FORMAT) r.fail('$.format', `must be ${CONFIG_FORMAT}`);
  r.optionalString(f['$schema'], '$.$schema', undefined, PATH_MAX);
  const domain = readDomain(f['domain']);
  const profiles =
    f['profiles'] === undefined ? [] : r.array(f['profiles'], '$.profiles', 0, 100).map(readProfile);
  return {
    ...(domain && { domain }),
    profiles,
    authorities: readAuthorities(f['authorities']),
    tokens: readTokens(f['tokens']),
    issuers: f['issuers'] === undefined ? [] : r.array(f['issuers'], '$.issuers', 0, 100).map(readIssuer),
    producers: readProducers(f['producers']),
  };
}

/** The file's bytes → the checked config. */
/** `file` names the file in a JSON syntax refusal (with the line and column: json-file.ts). */
export function parseConfig(bytes: Uint8Array, file = 'the config file'): BatonConfig {
  return readConfig(parseJsonFile(bytes, file));
}
