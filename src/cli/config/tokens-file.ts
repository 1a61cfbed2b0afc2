/**
 * The tokens file (docs/config.md "Operator tokens"): where the tokens a config mints are kept,
 * mode 0600, written atomically (PATH.partial, fsynced, then renamed; output-files.ts). Entries of
 * earlier applies are kept; a name minted again (after its token was revoked) replaces its entry.
 * The file is checked before any token is minted, so a secret is never minted into nowhere.
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { BatonError, isBatonError } from '../../core/errors.js';
import { parseStrictJson, positionIn } from '../../core/json.js';
import type { CreatedPrincipalToken } from '../../client/index.js';
import { checkNoPartial, writeThroughPartial } from '../output-files.js';

export const TOKENS_FORMAT = 'baton.tokens/1';

export interface TokenFileEntry {
  readonly name: string;
  readonly role: string;
  readonly id: string;
  readonly token: string;
}

function isEntry(v: unknown): v is TokenFileEntry {
  if (typeof v !== 'object' || v === null) return false;
  const e = v as Record<string, unknown>;
  return ['name', 'role', 'id', 'token'].every((k) => typeof e[k] === 'string');
}

/** The entries already in the file ([] when it does not exist); refuses a file that is not ours. */
export async function readTokensFile(path: string): Promise<TokenFileEntry[]> {
  // Before any token is minted: a leftover PATH.partial would refuse the write only after the
  // server minted the secret.
  checkNoPartial(path);
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new BatonError('usage', `cannot read the tokens file ${path}`, {}, { cause: error });
    const dir = await stat(dirname(path)).catch(() => undefined);
    if (dir?.isDirectory() !== true) throw new BatonError('usage', `no folder for the tokens file ${path}`);
    return [];
  }
  const doc = tokensJson(bytes, path) as { format?: unknown; tokens?: unknown };
  if (
    doc === null ||
    typeof doc !== 'object' ||
    doc.format !== TOKENS_FORMAT ||
    !Array.isArray(doc.tokens) ||
    !doc.tokens.every(isEntry)
  )
    throw new BatonError('usage', `${path} is not a ${TOKENS_FORMAT} file`);
  return doc.tokens;
}

/** Not JSON at all is, to the user, not a tokens file: said so, with where the parser stopped. */
function tokensJson(bytes: Uint8Array, path: string): unknown {
  try {
    return parseStrictJson(bytes);
  } catch (error) {
    if (!isBatonError(error) || !error.code.startsWith('json_')) throw error;
    const offset = error.details['byteOffset'];
    const at = typeof offset === 'number' ? `${positionIn(bytes, offset)}: ` : '';
    const why = `${path} is not a ${TOKENS_FORMAT} file: ${at}${error.message}`;
    throw new BatonError('usage', why, { path }, { cause: error });
  }
}

export async function writeTokensFile(
  path: string,
  previous: readonly TokenFileEntry[],
  minted: readonly CreatedPrincipalToken[],
): Promise<void> {
  const fresh = minted.map((t): TokenFileEntry => ({ name: t.name, role: t.role, id: t.id, token: t.token }));
  const kept = previous.filter((e) => !fresh.some((f) => f.name === e.name));
  const text = `${JSON.stringify({ format: TOKENS_FORMAT, tokens: [...kept, ...fresh] }, null, 2)}\n`;
  // Through PATH.partial, created 0600, fsynced before the rename (the secrets are shown nowhere
  // else: they must be on disk once the file says so), removed if anything fails.
  await writeThroughPartial(path, (write) => write(text), 0o600);
}
