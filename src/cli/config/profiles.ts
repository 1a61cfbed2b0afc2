/**
 * The config's profile entries → the exact documents to register: read (strict JSON) from a file
 * relative to the config's folder or taken inline, pinned to a sandbox when asked, then checked by
 * the same profile validator the server uses, so a bad profile fails before the first write.
 */
import { isAbsolute, resolve } from 'node:path';
import { BatonError, isBatonError } from '../../core/errors.js';
import type { JsonObject, JsonValue } from '../../core/json.js';
import { parseJsonFile } from '../json-file.js';
import { profileDigest, validateProfile, type ProviderProfile } from '../../occurrences/index.js';
import type { ProfileEntry } from './model.js';
import { inputFileWhy, readInputFile } from './input-file.js';
import { fetchSandboxFacts, pinToSandbox, SANDBOX_WAIT_MS, type Progress } from './pin.js';

export interface LoadedProfile {
  readonly id: string;
  readonly version: string;
  readonly digest: string;
  readonly document: JsonObject;
}

function asObject(value: JsonValue, path: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new BatonError('config_invalid', `${path}: the profile must be a JSON object`, { path });
  return value;
}

async function readDocument(entry: ProfileEntry, baseDir: string, path: string): Promise<JsonObject> {
  if (entry.document !== undefined) return entry.document;
  const file = entry.file ?? '';
  const full = isAbsolute(file) ? file : resolve(baseDir, file);
  let bytes: Buffer;
  try {
    bytes = await readInputFile(full);
  } catch (cause) {
    const why = `${path}.file: cannot read ${file}${inputFileWhy(cause)}`;
    throw new BatonError('config_invalid', why, { path }, { cause });
  }
  return asObject(parseJsonFile(bytes, full), path);
}

export async function loadProfile(
  entry: ProfileEntry,
  baseDir: string,
  index: number,
  progress?: Progress,
  stopping?: AbortSignal,
): Promise<LoadedProfile> {
  const path = `$.profiles[${index}]`;
  const document = await readDocument(entry, baseDir, path);
  let profile: ProviderProfile;
  try {
    profile = validateProfile(document);
  } catch (error) {
    if (!isBatonError(error, 'profile_invalid')) throw error;
    throw new BatonError('config_invalid', `${path}: ${error.message}`, { path }, { cause: error });
  }
  if (entry.pinToSandbox !== undefined)
    profile = pinToSandbox(
      profile,
      await fetchSandboxFacts(entry.pinToSandbox, SANDBOX_WAIT_MS, progress, stopping),
    );
  return {
    id: profile.id,
    version: profile.version,
    digest: profileDigest(profile),
    document: profile as unknown as JsonObject,
  };
}

export async function loadProfiles(
  entries: readonly ProfileEntry[],
  baseDir: string,
  progress?: Progress,
  stopping?: AbortSignal,
): Promise<LoadedProfile[]> {
  const loaded: LoadedProfile[] = [];
  for (const [i, entry] of entries.entries()) {
    const p = await loadProfile(entry, baseDir, i, progress, stopping);
    if (loaded.some((q) => q.id === p.id && q.version === p.version))
      throw new BatonError('config_invalid', `$.profiles[${i}]: repeats profile ${p.id}@${p.version}`, {
        path: `$.profiles[${i}]`,
      });
    loaded.push(p);
  }
  return loaded;
}
