/**
 * The config's `producers` entries (docs/config.md "producers"; docs/observations.md "Pinned
 * producer keys") → the pins to send: each key file (relative to the config's folder) read now —
 * a PEM public key, or a JSON public JWK — and checked by the same key reader the server uses, so a
 * bad key is `config_invalid` at its path before anything is written. An entry with no keys is an
 * unpin.
 */
import { isAbsolute, resolve } from 'node:path';
import type { Ed25519PublicJwk } from '../../core/ed25519.js';
import { BatonError } from '../../core/errors.js';
import { parseStrictJson } from '../../core/json.js';
import { producerKeysDigest, readProducerKey } from '../../observations/index.js';
import { whyNotJson } from '../json-file.js';
import type { ProducerEntry, ProducerKeyEntry } from './model.js';
import { inputFileWhy, readInputFile } from './input-file.js';

export interface LoadedProducer {
  readonly producer: string;
  /** In kid order; empty: the producer is to be unpinned. */
  readonly keys: readonly Ed25519PublicJwk[];
  readonly keysDigest: string;
}

async function readKeyFile(file: string, baseDir: string, path: string): Promise<Ed25519PublicJwk> {
  let text: string;
  try {
    text = (await readInputFile(isAbsolute(file) ? file : resolve(baseDir, file))).toString('utf8');
  } catch (cause) {
    const why = `${path}: cannot read ${file}${inputFileWhy(cause)}`;
    throw new BatonError('config_invalid', why, { path }, { cause });
  }
  // The file is the PEM: a refusal names the file's member, not a `.pem` the config never wrote.
  if (text.includes('-----BEGIN')) return readProducerKey({ pem: text }, path, 'config_invalid', path);
  let jwk: unknown;
  const bytes = Buffer.from(text);
  try {
    jwk = parseStrictJson(bytes);
  } catch (cause) {
    // Still config_invalid, now with where the key file stops being JSON.
    const at = whyNotJson(cause, bytes);
    const why = `${path}: ${file} holds neither a PEM public key nor a JSON JWK${at}`;
    throw new BatonError('config_invalid', why, { path }, { cause });
  }
  return readProducerKey(jwk, path, 'config_invalid');
}

async function loadKey(k: ProducerKeyEntry, baseDir: string, path: string): Promise<Ed25519PublicJwk> {
  return 'jwk' in k ? k.jwk : readKeyFile(k.file, baseDir, `${path}.file`);
}

export async function loadProducers(
  entries: readonly ProducerEntry[],
  baseDir: string,
): Promise<LoadedProducer[]> {
  const out: LoadedProducer[] = [];
  for (const [i, entry] of entries.entries()) {
    const keys: Ed25519PublicJwk[] = [];
    for (const [j, k] of entry.keys.entries()) {
      const path = `$.producers[${i}].keys[${j}]`;
      const key = await loadKey(k, baseDir, path);
      if (keys.some((x) => x.kid === key.kid))
        throw new BatonError('config_invalid', `${path}: repeats an earlier key`, { path });
      keys.push(key);
    }
    keys.sort((a, b) => (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0));
    out.push({ producer: entry.producer, keys, keysDigest: producerKeysDigest(keys) });
  }
  return out;
}
