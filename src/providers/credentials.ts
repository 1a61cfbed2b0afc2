/**
 * Credential references (issue 13 §1, docs/providers.md "Credentials"). A profile names the
 * secrets its pins and lookups need by id (`secretId`, `credential`); a credentials document maps
 * each id to a REFERENCE — an environment variable or a file — never to the value. `baton serve`
 * resolves every reference once, at start, into the one secrets map (id → bytes) the status-source
 * layer, the webhook receiver and the lookups read through a KeyResolver. A missing variable or
 * file, or a value with a control character in it, stops the start with `credential_unresolved`, naming the id and the reference, never a
 * value. Values are never written to evidence, logs, errors or metrics.
 *
 * Each credential also declares the ORIGINS it may be sent to (`"origins": ["https://api.stripe.com"]`):
 * a profile is a document an operator registers, so it cannot be what decides where a host secret
 * goes. The send path (credential-header.ts) attaches a credential only to a request whose URL's
 * origin is one of them. `[]` says the secret is only ever verified with (a webhook's endpoint
 * secret) and is never sent. An entry without `origins` refuses the whole document
 * (`credentials_invalid`): an undeclared destination is not a permission (fail closed).
 */
import { BatonError } from '../core/errors.js';
import { Reader } from '../occurrences/index.js';

export const CREDENTIALS_FORMAT = 'baton.credentials/1';

/** How the referenced text becomes key bytes: as its UTF-8 bytes (default) or base64url-decoded. */
export const CREDENTIAL_ENCODINGS = ['utf8', 'base64url'] as const;
export type CredentialEncoding = (typeof CREDENTIAL_ENCODINGS)[number];

export type CredentialReference =
  | { readonly env: string; readonly encoding?: CredentialEncoding }
  | { readonly file: string; readonly encoding?: CredentialEncoding };

/** A reference and the origins its value may be sent to (exact `scheme://host[:port]`; `[]`: never sent). */
export type CredentialEntry = CredentialReference & { readonly origins: readonly string[] };

export interface CredentialsDocument {
  readonly format: typeof CREDENTIALS_FORMAT;
  /** Credential id (what a profile's `secretId` / `credential` names) → where its value lives. */
  readonly credentials: Readonly<Record<string, CredentialEntry>>;
}

/** Credential id → the origins it may be sent to: what `staticKeys` takes beside the secrets. */
export type CredentialOrigins = Readonly<Record<string, readonly string[]>>;

/** The resolved secrets: id → bytes. This map is what `staticKeys` takes. */
export type ResolvedSecrets = Readonly<Record<string, Uint8Array>>;

const r = new Reader('credentials_invalid');
export const CREDENTIAL_ID = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** The hosts plain http may carry a credential to: this machine only (as a `channel` pin's origin). */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
const MAX_ORIGINS = 16;

/**
 * One origin a credential may be sent to: exactly `scheme://host[:port]` as the URL standard
 * serializes it (lowercase host, no default port, no path, query or user info) — compared as a
 * string with the request URL's `origin`. https, or http on the loopback interface only: a
 * credential is never sent in clear over a network.
 */
function readOrigin(value: unknown, path: string): string {
  const text = r.string(value, path, undefined, 2048);
  const url = URL.canParse(text) ? new URL(text) : r.fail(path, 'must be an origin URL');
  if (url.origin !== text) {
    r.fail(path, 'must be exactly an origin (scheme://host[:port], no path or trailing slash)');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) {
    r.fail(path, 'must be https, or http on the loopback interface');
  }
  return text;
}

function readOrigins(value: unknown, path: string): readonly string[] {
  if (value === undefined) {
    r.fail(
      path,
      'is required: list the origins this credential may be sent to, e.g. ["https://api.stripe.com"], ' +
        'or [] for a secret that is only verified with (a webhook secret) and never sent',
    );
  }
  const items = r.array(value, path, 0, MAX_ORIGINS);
  const origins = items.map((item, i) => readOrigin(item, `${path}[${i}]`));
  if (new Set(origins).size !== origins.length) r.fail(path, 'names an origin twice');
  return origins;
}

function readReference(value: unknown, path: string): CredentialEntry {
  const head = r.object(value, path, [], ['env', 'file', 'encoding', 'origins']);
  const origins = readOrigins(head['origins'], `${path}.origins`);
  return { ...readSource(head, path), origins };
}

function readSource(head: Readonly<Record<string, unknown>>, path: string): CredentialReference {
  const encoding =
    head['encoding'] === undefined
      ? undefined
      : r.oneOf(head['encoding'], `${path}.encoding`, CREDENTIAL_ENCODINGS);
  const enc = encoding === undefined ? {} : { encoding };
  if (head['env'] !== undefined && head['file'] === undefined) {
    return { env: r.string(head['env'], `${path}.env`, ENV_NAME), ...enc };
  }
  if (head['file'] !== undefined && head['env'] === undefined) {
    const file = r.string(head['file'], `${path}.file`, undefined, 4096);
    if (!file.startsWith('/')) r.fail(`${path}.file`, 'must be an absolute path');
    return { file, ...enc };
  }
  return r.fail(path, 'must name exactly one of env or file');
}

/** Validate a parsed credentials document (from parseStrictJson). */
export function validateCredentials(value: unknown): CredentialsDocument {
  r.noNul(value, '$');
  const f = r.object(value, '$', ['format', 'credentials']);
  if (f['format'] !== CREDENTIALS_FORMAT) r.fail('$.format', `must be "${CREDENTIALS_FORMAT}"`);
  const map = f['credentials'];
  const ids = typeof map === 'object' && map !== null ? Object.keys(map) : [];
  const refs = r.object(map, '$.credentials', [], ids);
  if (ids.length > 256) r.fail('$.credentials', 'may name at most 256 credentials');
  const credentials: Record<string, CredentialEntry> = {};
  for (const id of ids) {
    r.string(id, `$.credentials (name)`, CREDENTIAL_ID);
    credentials[id] = readReference(refs[id], `$.credentials.${id}`);
  }
  return { format: CREDENTIALS_FORMAT, credentials };
}

/** Each credential's origins, by id (the document's `origins`, as validated). */
export function credentialOrigins(doc: CredentialsDocument): CredentialOrigins {
  const out: Record<string, readonly string[]> = {};
  for (const [id, entry] of Object.entries(doc.credentials)) out[id] = entry.origins;
  return out;
}

/** Where resolution reads: injected, so the rule is testable and the process's I/O stays at the edge. */
export interface CredentialSources {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The file's text, or undefined when it cannot be read (the reason is not needed, nor shown). */
  readonly readFile: (path: string) => string | undefined;
}

function unresolved(id: string, ref: CredentialReference, why: string): BatonError {
  const where = 'env' in ref ? { env: ref.env } : { file: ref.file };
  const named = 'env' in ref ? `environment variable ${ref.env}` : `file ${ref.file}`;
  return new BatonError('credential_unresolved', `credential ${id}: the ${named} ${why}`, { id, ...where });
}

function decode(id: string, ref: CredentialEntry, text: string): Uint8Array {
  if (ref.encoding !== 'base64url') return Buffer.from(text, 'utf8');
  if (!/^[A-Za-z0-9_-]+$/.test(text)) throw unresolved(id, ref, 'is not base64url');
  const bytes = Buffer.from(text, 'base64url');
  // A key that is only verified with (`origins: []`: an HMAC key) is any bytes. One that may be
  // SENT goes into a header as text (credential-header.ts), so its decoded value is held to the
  // same rule as a utf8 one: UTF-8 text without a control character, refused here at start rather
  // than by node:http at every send, after the occurrence was entered.
  if (ref.origins.length > 0) {
    let decoded: string;
    try {
      decoded = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw unresolved(id, ref, 'decodes to bytes that are not UTF-8 text (it may be sent in a header)');
    }
    if (CONTROL.test(decoded)) throw unresolved(id, ref, 'decodes to a value with a control character');
  }
  return bytes;
}

/** Control characters (Cc: C0, DEL, C1): never part of a real secret, and fatal in an HTTP header. */
const CONTROL = /\p{Cc}/u;

/**
 * Resolve every reference. A file's one trailing newline is not part of the secret (editors add
 * one); anything else is. Empty values are refused: an empty secret authenticates nothing. A value
 * with a control character left in it (a second newline, `KEY="$(cat f)\n"`, a stray CR) is
 * refused here, at start: sent as a credential header it would make node:http refuse to build the
 * request only later, after an occurrence was entered for it. The error names the reference, never
 * the value nor where in it the character is.
 */
export function resolveCredentials(doc: CredentialsDocument, sources: CredentialSources): ResolvedSecrets {
  const out: Record<string, Uint8Array> = {};
  for (const [id, ref] of Object.entries(doc.credentials)) {
    const raw = 'env' in ref ? sources.env[ref.env] : sources.readFile(ref.file)?.replace(/\r?\n$/, '');
    if (raw === undefined) throw unresolved(id, ref, 'is not set or cannot be read');
    if (raw === '') throw unresolved(id, ref, 'is empty');
    if (CONTROL.test(raw)) throw unresolved(id, ref, 'contains a control character (a trailing newline?)');
    out[id] = decode(id, ref, raw);
  }
  return out;
}
