/**
 * The tokens file (docs/config.md "Operator tokens"): where the tokens a config mints are kept,
 * mode 0600, written atomically (PATH.partial, fsynced, then renamed; output-files.ts). Entries of
 * earlier applies are kept. One file may serve several servers (one config applied to each), so an
 * entry is keyed by its token's id, never by its name alone: a name minted again replaces only the
 * entry whose token THIS server lists as revoked. An entry of a token this server does not know
 * (another server's, live or not) is kept as it is — replacing it would leave a live token whose
 * secret exists nowhere. The file is checked before any token is minted, so a secret is never
 * minted into nowhere.
 */
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { BatonError, isBatonError } from '../../core/errors.js';
import { parseStrictJson, positionIn } from '../../core/json.js';
import type { CreatedPrincipalToken } from '../../client/index.js';
import { checkNoPartial, writeThroughPartial } from '../output-files.js';
import { inputFileWhy, readInputFile } from './input-file.js';

export const TOKENS_FORMAT = 'baton.tokens/1';

export interface TokenFileEntry {
  readonly name: string;
  readonly role: string;
  readonly id: string;
  readonly token: string;
  /**
   * The server the token was minted on (the origin `baton apply --url` named, or the address
   * `baton serve --config` listens at), for the reader. Absent in entries written before it was
   * recorded; those are kept or replaced by the same rule (by token id).
   */
  readonly server?: string;
}

function isEntry(v: unknown): v is TokenFileEntry {
  if (typeof v !== 'object' || v === null) return false;
  const e = v as Record<string, unknown>;
  return (
    ['name', 'role', 'id', 'token'].every((k) => typeof e[k] === 'string') &&
    (e['server'] === undefined || typeof e['server'] === 'string')
  );
}

/** The entries already in the file ([] when it does not exist); refuses a file that is not ours. */
export async function readTokensFile(path: string): Promise<TokenFileEntry[]> {
  // Before any token is minted: a leftover PATH.partial would refuse the write only after the
  // server minted the secret.
  checkNoPartial(path);
  let bytes: Buffer;
  try {
    bytes = await readInputFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new BatonError(
        'usage',
        `cannot read the tokens file ${path}${inputFileWhy(error)}`,
        {},
        { cause: error },
      );
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

/** Which server the minted tokens belong to, and what it says of the tokens it knows. */
export interface TokensFileServer {
  /** Recorded in each new entry (`server`); undefined records none. */
  readonly server?: string | undefined;
  /** The ids of the tokens this server lists as revoked: only their entries may be replaced. */
  readonly revoked: ReadonlySet<string>;
}

export async function writeTokensFile(
  path: string,
  previous: readonly TokenFileEntry[],
  minted: readonly CreatedPrincipalToken[],
  here: TokensFileServer = { revoked: new Set() },
): Promise<void> {
  const fresh = minted.map((t): TokenFileEntry => ({
    name: t.name,
    role: t.role,
    id: t.id,
    token: t.token,
    ...(here.server !== undefined && { server: here.server }),
  }));
  // Replaced: an entry of a name minted again whose token this server revoked. Anything else —
  // above all another server's entry of the same name, whose token may be live — is kept.
  const kept = previous.filter((e) => !(here.revoked.has(e.id) && fresh.some((f) => f.name === e.name)));
  const text = `${JSON.stringify({ format: TOKENS_FORMAT, tokens: [...kept, ...fresh] }, null, 2)}\n`;
  // Through PATH.partial, created 0600, fsynced before the rename (the secrets are shown nowhere
  // else: they must be on disk once the file says so), removed if anything fails.
  await writeThroughPartial(path, (write) => write(text), 0o600);
}
