/**
 * The config's `issuers` entries (docs/config.md "issuers"; docs/missions.md "Issuer registry") →
 * the registrations to send: the `baton.mission-issuer/1` pin read from a file relative to the
 * config's folder or taken inline, checked by the same reader the server uses; `file:` references
 * (the pin's `client.key_ref`, `pollBearerRef`) made absolute against the config's folder, since
 * the server resolves them later; the push bearer read from its reference now (a config file
 * never holds a secret) and sent once, the server keeping only its digest.
 */
import { isAbsolute, resolve } from 'node:path';
import { BatonError, isBatonError } from '../../core/errors.js';
import { parseStrictJson, type JsonObject } from '../../core/json.js';
import { readIssuerRegistration, type IssuerRegistration } from '../../missions/index.js';
import {
  refsOutside,
  resolveSecret,
  scopedSecretResolver,
  secretRefRefusal,
  unusableRef,
  type SecretScope,
} from '../../server/mission-secrets.js';
import { whyNotJson } from '../json-file.js';
import type { IssuerEntry } from './model.js';
import { inputFileWhy, readInputFile } from './input-file.js';

export interface LoadedIssuer {
  readonly issuer: string;
  readonly registration: IssuerRegistration;
  /** The body of `POST /v1/missions/issuers`. */
  readonly body: JsonObject;
}

function absolute(ref: string, baseDir: string): string {
  if (!ref.startsWith('file:')) return ref;
  const path = ref.slice(5);
  return `file:${isAbsolute(path) ? path : resolve(baseDir, path)}`;
}

async function readPin(entry: IssuerEntry, baseDir: string, path: string): Promise<JsonObject> {
  if (entry.pin !== undefined) return entry.pin;
  const file = entry.file ?? '';
  const why = `${path}.file: cannot read ${file} as JSON`;
  let bytes: Uint8Array;
  try {
    bytes = await readInputFile(isAbsolute(file) ? file : resolve(baseDir, file));
  } catch (cause) {
    throw new BatonError('config_invalid', `${why}${inputFileWhy(cause)}`, { path }, { cause });
  }
  try {
    return parseStrictJson(bytes) as JsonObject;
  } catch (cause) {
    // Still config_invalid, now with where the pin file stops being JSON.
    const at = whyNotJson(cause, bytes);
    throw new BatonError('config_invalid', `${why}${at}`, { path }, { cause });
  }
}

/**
 * The config's issuers held to a server's secret scope (docs/missions.md "Secret references"):
 * the first reference it would never read, or (with `scope`: this process is that server) could
 * not use — a client key that is no private JWK with kid of `client.alg`'s type, an empty poll
 * bearer — refuses the file, `config_invalid` naming its path.
 * Without `scope` (a server elsewhere: its folders are its own to judge) only the rule every
 * server shares is checked: a variable it resolves is a BATON_SECRET_* one.
 */
export function refuseIssuerRefs(issuers: readonly LoadedIssuer[], scope?: SecretScope): void {
  issuers.forEach((l, i) => {
    for (const o of refsOutside(l.registration, scope ?? { dirs: [] })) {
      if (scope === undefined && !o.ref.startsWith('env:')) continue;
      const at = `$.issuers[${i}]${o.path.slice(1)}`;
      throw new BatonError('config_invalid', `${at}: ${secretRefRefusal(o.ref)}`, { path: at });
    }
    // This process is the server (`serve --config`): what it would resolve is resolved now, and a
    // key it could never sign with refuses the file before the immutable pin is stored.
    const unusable =
      scope === undefined ? undefined : unusableRef(l.registration, scopedSecretResolver(scope));
    if (unusable !== undefined) {
      const at = `$.issuers[${i}]${unusable.path.slice(1)}`;
      throw new BatonError('config_invalid', `${at}: ${unusable.reason}`, { path: at });
    }
  });
}

export async function loadIssuers(entries: readonly IssuerEntry[], baseDir: string): Promise<LoadedIssuer[]> {
  const out: LoadedIssuer[] = [];
  for (const [i, entry] of entries.entries()) {
    const path = `$.issuers[${i}]`;
    const pin = await readPin(entry, baseDir, path);
    const client = pin['client'];
    const fixed: JsonObject =
      typeof client === 'object' &&
      client !== null &&
      !Array.isArray(client) &&
      typeof client['key_ref'] === 'string'
        ? { ...pin, client: { ...client, key_ref: absolute(client['key_ref'], baseDir) } }
        : pin;
    let pushBearer: string | undefined;
    try {
      pushBearer =
        entry.pushBearerRef === undefined ? undefined : resolveSecret(absolute(entry.pushBearerRef, baseDir));
    } catch (error) {
      if (!isBatonError(error, 'key_invalid')) throw error;
      throw new BatonError('config_invalid', `${path}.pushBearerRef: ${error.message}`, { path });
    }
    const body: JsonObject = {
      pin: fixed,
      ...(pushBearer !== undefined && { pushBearer }),
      ...(entry.pollBearerRef !== undefined && { pollBearerRef: absolute(entry.pollBearerRef, baseDir) }),
    };
    const registration = readIssuerRegistration(body, 'config_invalid', path);
    out.push({ issuer: registration.pin.issuer, registration, body });
  }
  const seen = new Set<string>();
  out.forEach((l, i) => {
    if (seen.has(l.issuer))
      throw new BatonError('config_invalid', `$.issuers[${i}]: repeats an earlier issuer`, {
        path: `$.issuers[${i}]`,
      });
    seen.add(l.issuer);
  });
  refuseIssuerRefs(out);
  return out;
}
