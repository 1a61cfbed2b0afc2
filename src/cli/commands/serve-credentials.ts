/**
 * The secrets `baton serve` holds (docs/providers.md "Credentials"): BATON_HMAC_SECRETS (the
 * sandbox's id=base64url pairs) and `--credentials FILE` (BATON_CREDENTIALS), a
 * `baton.credentials/1` document of references resolved here, once, before the store is opened.
 * One map: the same id in both is refused rather than one silently winning. A document's credential
 * is sent only to the origins its entry lists (`origins`, required); a BATON_HMAC_SECRETS secret
 * lists none, so it verifies signatures and is never sent in a request.
 */
import { readFileSync } from 'node:fs';
import { BatonError } from '../../core/errors.js';
import {
  credentialOrigins,
  resolveCredentials,
  staticKeys,
  validateCredentials,
  type CredentialOrigins,
  type KeyResolver,
  type ResolvedSecrets,
} from '../../providers/index.js';
import { readJsonInput } from '../json-file.js';
import type { CliIo } from '../io.js';

/** BATON_HMAC_SECRETS, parsed; the values never appear in an error message. */
export function hmacSecretsMap(text: string | undefined): ResolvedSecrets {
  const secrets: Record<string, Uint8Array> = {};
  for (const item of (text ?? '').split(',').filter((x) => x.trim() !== '')) {
    const m = /^\s*([A-Za-z0-9._:-]{1,128})=([A-Za-z0-9_-]{43,})\s*$/.exec(item);
    if (m === null)
      throw new BatonError('usage', 'BATON_HMAC_SECRETS must be id=base64url pairs of 32+ bytes');
    secrets[m[1] ?? ''] = Buffer.from(m[2] ?? '', 'base64url');
  }
  return secrets;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The credentials document's references, resolved against this process's environment and files. */
export async function credentialsFromFile(file: string, io: CliIo): Promise<ResolvedSecrets> {
  return (await credentialsDocument(file, io)).resolved;
}

async function credentialsDocument(
  file: string,
  io: CliIo,
): Promise<{ resolved: ResolvedSecrets; origins: CredentialOrigins; envNames: string[] }> {
  const doc = validateCredentials(await readJsonInput(file, io));
  const envNames = Object.values(doc.credentials).flatMap((ref) => ('env' in ref ? [ref.env] : []));
  const resolved = resolveCredentials(doc, { env: process.env, readFile: readText });
  return { resolved, origins: credentialOrigins(doc), envNames };
}

export async function serveKeys(credentialsFile: string | undefined, io: CliIo): Promise<KeyResolver> {
  return (await serveSecrets(credentialsFile, io)).keys;
}

/**
 * The keys, and the environment variables the credentials document named: `baton mcp` withholds
 * them (and every BATON_* variable) from the upstreams it starts (docs/mcp.md "Where Baton runs").
 */
export async function serveSecrets(
  credentialsFile: string | undefined,
  io: CliIo,
): Promise<{ keys: KeyResolver; envNames: string[] }> {
  const merged: Record<string, Uint8Array> = { ...hmacSecretsMap(process.env['BATON_HMAC_SECRETS']) };
  const doc = credentialsFile === undefined ? undefined : await credentialsDocument(credentialsFile, io);
  for (const [id, value] of Object.entries(doc?.resolved ?? {})) {
    if (Object.hasOwn(merged, id)) {
      throw new BatonError('credentials_invalid', `credential ${id} is named twice`, { id });
    }
    merged[id] = value;
  }
  return { keys: staticKeys(merged, doc?.origins ?? {}), envNames: doc?.envNames ?? [] };
}
