/**
 * The members format 2 adds to a provider profile (issue 13 §1, docs/providers.md "Writing a
 * profile"): the entry call, read rules (RFC 6901 pointers), not-found and listing rules, the
 * credential a call sends, and where each pin kind may stand. Every rule is checked here, strictly,
 * with the path of what is wrong (`profile_invalid`); a rule that would let an answer settle
 * without naming what binds it is refused.
 */
import { parseJsonPointer } from '../core/json-pointer.js';
import { readAuthentication } from './profile-parts.js';
import { NATIVE_KEY_MEANINGS, type AuthorityTie, type StatusSourceKind } from './profile-types.js';
import type { Fields, Reader } from './validate.js';

const KEY_ID = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$/;
const PARAM = /^[A-Za-z0-9_][A-Za-z0-9_.[\]-]{0,63}$/;
const URL_PLACEHOLDER = /\{([A-Za-z]+)\}/g;

export interface V2Context {
  readonly r: Reader;
  readonly readUrl: (value: unknown, path: string) => void;
  readonly tie: AuthorityTie | undefined;
}

function pointer(c: V2Context, value: unknown, path: string): string {
  const text = c.r.string(value, path, undefined, 256);
  if (parseJsonPointer(text) === undefined) c.r.fail(path, 'must be an RFC 6901 JSON pointer');
  return text;
}

function readCredentialUse(c: V2Context, value: unknown, path: string): string {
  const f = c.r.object(value, path, ['id', 'scheme']);
  c.r.oneOf(f['scheme'], `${path}.scheme`, ['bearer', 'basic'] as const);
  return c.r.string(f['id'], `${path}.id`, KEY_ID);
}

const READ_MEMBERS = [
  'expect',
  'status',
  'reference',
  'nativeKey',
  'nativeKeyOf',
  'amount',
  'unit',
  'account',
  'observedAt',
  'eventId',
];

/** A read rule. Amount and unit may only be read when the profile ties authority to them. */
export function readAnswerRule(c: V2Context, value: unknown, path: string, webhook: boolean): void {
  const { r } = c;
  const f = r.object(value, path, ['status', 'reference', 'account'], READ_MEMBERS);
  if (f['expect'] !== undefined) {
    r.array(f['expect'], `${path}.expect`, 1, 8).forEach((e, i) => {
      const g = r.object(e, `${path}.expect[${i}]`, ['pointer', 'equals']);
      pointer(c, g['pointer'], `${path}.expect[${i}].pointer`);
      if (typeof g['equals'] !== 'boolean')
        r.string(g['equals'], `${path}.expect[${i}].equals`, undefined, 128);
    });
  }
  for (const name of ['status', 'reference', 'nativeKey', 'amount', 'unit', 'eventId'] as const) {
    if (f[name] !== undefined) pointer(c, f[name], `${path}.${name}`);
  }
  const tie = c.tie;
  if (f['amount'] !== undefined && (tie === undefined || !('amount' in tie)))
    r.fail(`${path}.amount`, 'needs an authority tie with an amount member');
  if (f['unit'] !== undefined && (tie === undefined || !('amount' in tie) || typeof tie.unit === 'string'))
    r.fail(`${path}.unit`, 'needs an authority tie whose unit is read from a member');
  if (!webhook && f['eventId'] !== undefined) r.fail(`${path}.eventId`, 'is only for webhook sources');
  if (f['nativeKeyOf'] !== undefined) {
    // Unknown meanings are refused: a key's meaning is never guessed (fail closed).
    r.oneOf(f['nativeKeyOf'], `${path}.nativeKeyOf`, NATIVE_KEY_MEANINGS);
    if (f['nativeKey'] === undefined) r.fail(`${path}.nativeKeyOf`, 'needs a nativeKey pointer');
  }
  const account = r.object(f['account'], `${path}.account`, ['whenAbsent'], ['pointer']);
  if (account['pointer'] !== undefined) pointer(c, account['pointer'], `${path}.account.pointer`);
  r.oneOf(account['whenAbsent'], `${path}.account.whenAbsent`, ['pinned', 'missing'] as const);
  if (f['observedAt'] !== undefined) {
    const at = r.object(f['observedAt'], `${path}.observedAt`, ['pointer', 'format']);
    pointer(c, at['pointer'], `${path}.observedAt.pointer`);
    r.oneOf(at['format'], `${path}.observedAt.format`, ['unix-seconds', 'rfc3339'] as const);
  }
}

function placeholders(template: string): string[] {
  return [...template.matchAll(URL_PLACEHOLDER)].map((m) => m[1] ?? '');
}

function checkTemplate(c: V2Context, url: string, path: string, allowed: readonly string[], needs?: string) {
  const used = placeholders(url);
  for (const name of used)
    if (!allowed.includes(name)) c.r.fail(path, `unknown or unusable placeholder {${name}}`);
  if (needs !== undefined && !used.includes(needs)) c.r.fail(path, `must contain {${needs}}`);
}

/** A channel pin stands only where Baton itself fetches from that origin with that credential. */
function checkChannel(c: V2Context, pin: unknown, path: string, url: string, credential: string | undefined) {
  const p = pin as Fields;
  if (p['kind'] !== 'channel') return;
  if (credential === undefined || credential !== p['credential'])
    c.r.fail(`${path}.credential`, 'must be the credential this call sends');
  const origin = URL.canParse(url.replace(URL_PLACEHOLDER, 'x'))
    ? new URL(url.replace(URL_PLACEHOLDER, 'x')).origin
    : '';
  if (origin !== p['origin']) c.r.fail(`${path}.origin`, 'must be the origin this call is sent to');
}

const KIND_NEEDS: Partial<Record<StatusSourceKind, string>> = {
  lookup_by_key: 'nativeKey',
  lookup_by_reference: 'reference',
};

/** The format 2 members of one status source (its format 1 members are read by profile.ts). */
export function readSourceV2(c: V2Context, f: Fields, path: string, kind: StatusSourceKind): void {
  const { r } = c;
  const url = f['url'] as string;
  if (kind === 'webhook') {
    for (const name of ['method', 'credential', 'notFound', 'listing'])
      if (f[name] !== undefined) r.fail(`${path}.${name}`, 'is not allowed on a webhook source');
    readAuthentication(r, f['authentication'], `${path}.authentication`, c.readUrl, 'webhook');
    if (f['read'] === undefined) r.fail(`${path}.read`, 'is required');
    readAnswerRule(c, f['read'], `${path}.read`, true);
    return;
  }
  r.oneOf(f['method'], `${path}.method`, ['GET'] as const);
  const credential =
    f['credential'] === undefined ? undefined : readCredentialUse(c, f['credential'], `${path}.credential`);
  readAuthentication(r, f['authentication'], `${path}.authentication`, c.readUrl, 'active');
  checkChannel(c, f['authentication'], `${path}.authentication`, url, credential);
  checkTemplate(c, url, `${path}.url`, ['account', 'nativeKey', 'reference'], KIND_NEEDS[kind]);
  if (f['read'] === undefined) r.fail(`${path}.read`, 'is required');
  readAnswerRule(c, f['read'], `${path}.read`, false);
  if (kind === 'listing') {
    if (f['notFound'] !== undefined) r.fail(`${path}.notFound`, 'is not allowed on a listing');
    const l = r.object(f['listing'], `${path}.listing`, [
      'items',
      'hasMore',
      'cursor',
      'cursorParam',
      'limitParam',
    ]);
    for (const name of ['items', 'hasMore', 'cursor'] as const)
      pointer(c, l[name], `${path}.listing.${name}`);
    r.string(l['cursorParam'], `${path}.listing.cursorParam`, PARAM);
    r.string(l['limitParam'], `${path}.listing.limitParam`, PARAM);
    return;
  }
  if (f['listing'] !== undefined) r.fail(`${path}.listing`, 'is only for listing sources');
  if (f['notFound'] !== undefined) {
    const n = r.object(f['notFound'], `${path}.notFound`, ['httpStatus', 'pointer', 'equals']);
    r.integer(n['httpStatus'], `${path}.notFound.httpStatus`, 400, 499);
    pointer(c, n['pointer'], `${path}.notFound.pointer`);
    r.string(n['equals'], `${path}.notFound.equals`, undefined, 128);
  }
}

/** `entry` and the acknowledgement of a format 2 profile. */
export function readEntryV2(c: V2Context, entry: unknown, ack: Fields): void {
  const { r } = c;
  let credential: string | undefined;
  let url = '';
  if (entry !== undefined) {
    const f = r.object(entry, '$.entry', ['method', 'url', 'encoding'], ['credential']);
    r.oneOf(f['method'], '$.entry.method', ['POST'] as const);
    url = r.string(f['url'], '$.entry.url', undefined, 2048);
    c.readUrl(url.replace(URL_PLACEHOLDER, 'x'), '$.entry.url');
    checkTemplate(c, url, '$.entry.url', ['account']);
    r.oneOf(f['encoding'], '$.entry.encoding', ['json', 'form'] as const);
    if (f['credential'] !== undefined)
      credential = readCredentialUse(c, f['credential'], '$.entry.credential');
    if (ack['read'] === undefined) r.fail('$.acknowledgement.read', 'is required with an entry rule');
  }
  readAuthentication(r, ack['authentication'], '$.acknowledgement.authentication', c.readUrl, 'active');
  checkChannel(c, ack['authentication'], '$.acknowledgement.authentication', url, credential);
  if (ack['read'] === undefined) return;
  readAnswerRule(c, ack['read'], '$.acknowledgement.read', false);
  // The answer to the entry call is caused by the entry request itself: no other meaning applies.
  if ((ack['read'] as Fields)['nativeKeyOf'] !== undefined)
    r.fail('$.acknowledgement.read.nativeKeyOf', 'is only for status sources');
}
