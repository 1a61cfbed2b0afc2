/**
 * Provider profiles: the strict validator, the pinned digest, and the rules a profile defines —
 * the request representation, the native key derivation, how the provider reference is read and
 * what a native status means. A profile missing any of these is refused (`profile_invalid`).
 */
import safeRegex from 'safe-regex2';
import { digestBytes, digestJcs, sha256, sha256HexTag } from '../core/digest.js';
import type { Sha256Digest } from '../core/digest.js';
import { BatonError } from '../core/errors.js';
import { canonicalBytes, canonicalize } from '../core/jcs.js';
import { readAuthorityTie } from './authority-tie.js';
import { readAuthentication, readStatuses } from './profile-parts.js';
import type {
  AuthorityTie,
  ProviderProfile,
  NativeKeyRule,
  StatusSource,
  StatusMapping,
} from './profile-types.js';
import {
  COMPLETENESS,
  NATIVE_KEY_MEMBERS,
  PAGINATION,
  PROFILE_FORMAT_V2,
  PROFILE_FORMATS,
  STATUS_SOURCE_KINDS,
} from './profile-types.js';
import { readEntryV2, readSourceV2, type V2Context } from './profile-v2.js';
import { Reader } from './validate.js';
import type { Fields } from './validate.js';

const r: Reader = new Reader('profile_invalid');
const PROFILE_ID = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const VERSION = /^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/;
const ACCOUNT = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$/;
const MEMBER = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;
const HEADER = /^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/;
const PLACEHOLDER = /\{([A-Za-z]+)\}/g;
const MAX_SECONDS = 10 * 365 * 24 * 3600;
/**
 * The longest provider reference tested against a profile's pattern: a longer one is malformed
 * without being matched, so the (validated, non-exponential) pattern only ever runs on short input.
 */
export const MAX_REFERENCE_LENGTH = 256;

function uniqueNames(value: unknown, path: string, min: number): string[] {
  const names = r.array(value, path, min, 256).map((m, i) => r.string(m, `${path}[${i}]`, MEMBER));
  if (new Set(names).size !== names.length) r.fail(path, 'has duplicate entries');
  return names;
}

function readRequest(value: unknown): { members: string[]; required: string[] } {
  const f = r.object(value, '$.request', ['members', 'required', 'private']);
  const members = uniqueNames(f['members'], '$.request.members', 1);
  const required = uniqueNames(f['required'], '$.request.required', 0);
  for (const name of required) {
    if (!members.includes(name)) r.fail('$.request.required', 'names a member outside request.members');
  }
  r.boolean(f['private'], '$.request.private');
  return { members, required };
}

function readNativeKey(value: unknown): NativeKeyRule['rule'] {
  const head = r.object(value, '$.nativeKey', ['rule'], ['template', 'members', 'prefix', 'header']);
  const rule = r.oneOf(head['rule'], '$.nativeKey.rule', ['template', 'sha256-jcs', 'none'] as const);
  if (rule === 'none') {
    r.object(value, '$.nativeKey', ['rule']);
    return rule;
  }
  if (rule === 'template') {
    const f = r.object(value, '$.nativeKey', ['rule', 'template', 'header']);
    const template = r.string(f['template'], '$.nativeKey.template', /^[\x21-\x7e]+$/, 200);
    const used = [...template.matchAll(PLACEHOLDER)].map((m) => m[1] ?? '');
    // AOC-CASE-006: the key must be derived from the occurrence, so every occurrence gets its own.
    if (!used.includes('occurrenceId')) r.fail('$.nativeKey.template', 'must contain {occurrenceId}');
    for (const name of used) {
      if (!(NATIVE_KEY_MEMBERS as readonly string[]).includes(name)) {
        r.fail('$.nativeKey.template', `unknown placeholder {${name}}`);
      }
    }
    r.string(f['header'], '$.nativeKey.header', HEADER);
    return rule;
  }
  const f = r.object(value, '$.nativeKey', ['rule', 'members', 'prefix', 'header']);
  const members = r.array(f['members'], '$.nativeKey.members', 1, 5);
  const names = members.map((m, i) => r.oneOf(m, `$.nativeKey.members[${i}]`, NATIVE_KEY_MEMBERS));
  if (new Set(names).size !== names.length) r.fail('$.nativeKey.members', 'has duplicate entries');
  if (!names.includes('occurrenceId')) r.fail('$.nativeKey.members', 'must include occurrenceId');
  if (typeof f['prefix'] !== 'string' || !/^[\x21-\x7e]{0,32}$/.test(f['prefix'])) {
    r.fail('$.nativeKey.prefix', 'must be 0..32 printable ASCII characters');
  }
  r.string(f['header'], '$.nativeKey.header', HEADER);
  return rule;
}

function readReference(value: unknown, v2: boolean): void {
  // Format 2 reads the reference with each rule's pointer; the pattern still says what one looks like.
  const f = r.object(value, '$.reference', v2 ? ['pattern'] : ['member', 'pattern']);
  if (!v2) r.string(f['member'], '$.reference.member', MEMBER);
  const pattern = r.string(f['pattern'], '$.reference.pattern', /^\^.*\$$/, 200);
  try {
    new RegExp(pattern, 'u');
  } catch {
    r.fail('$.reference.pattern', 'is not a valid regular expression');
  }
  // The pattern runs on provider-supplied references: one with exponential backtracking (nested
  // quantifiers such as `^(a+)+$`) would let an answer stall the process. safe-regex2 refuses
  // star height > 1 and anything it cannot parse (fail closed).
  if (!safeRegex(pattern)) {
    r.fail('$.reference.pattern', 'may backtrack exponentially (nested quantifiers are refused)');
  }
}

function readUrl(value: unknown, path: string): void {
  const text = r.string(value, path, undefined, 2048);
  const url = URL.canParse(text) ? new URL(text) : r.fail(path, 'must be an absolute URL');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') r.fail(path, 'must be an http(s) URL');
  // A profile names credentials, never carries one (key-resolver.ts): `user:password@` is refused,
  // not stored in a document every binding pins. A fragment is never sent: it can only mislead.
  if (url.username !== '' || url.password !== '') r.fail(path, 'must not carry userinfo (user:password@)');
  if (text.includes('#')) r.fail(path, 'must not carry a fragment');
}

const SOURCE_V2 = ['method', 'credential', 'read', 'notFound', 'listing'];

function readSource(value: unknown, path: string, keyRule: NativeKeyRule['rule'], v2?: V2Context): string {
  const f = r.object(
    value,
    path,
    [
      'id',
      'kind',
      'url',
      'authentication',
      'retentionSeconds',
      'freshnessSeconds',
      'completeness',
      'pagination',
    ],
    v2 === undefined ? [] : SOURCE_V2,
  );
  const id = r.string(f['id'], `${path}.id`, MEMBER);
  const kind = r.oneOf(f['kind'], `${path}.kind`, STATUS_SOURCE_KINDS);
  if (kind === 'lookup_by_key' && keyRule === 'none')
    r.fail(`${path}.kind`, 'lookup_by_key needs a native key rule');
  readUrl(f['url'], `${path}.url`);
  if (v2 === undefined) readAuthentication(r, f['authentication'], `${path}.authentication`, readUrl);
  else readSourceV2(v2, f, path, kind);
  r.integer(f['retentionSeconds'], `${path}.retentionSeconds`, 1, MAX_SECONDS);
  r.integer(f['freshnessSeconds'], `${path}.freshnessSeconds`, 1, MAX_SECONDS);
  r.oneOf(f['completeness'], `${path}.completeness`, COMPLETENESS);
  r.oneOf(f['pagination'], `${path}.pagination`, PAGINATION);
  return id;
}

function readTop(value: unknown): Fields {
  const f0 = r.anyObject(value, '$');
  const f = r.object(
    value,
    '$',
    [
      'format',
      'id',
      'version',
      'provider',
      'account',
      'environment',
      'request',
      'nativeKey',
      'reference',
      'acknowledgement',
      'statusSources',
      'statuses',
    ],
    f0['format'] === PROFILE_FORMAT_V2 ? ['authority', 'entry'] : ['authority'],
  );
  r.oneOf(f['format'], '$.format', PROFILE_FORMATS);
  r.string(f['id'], '$.id', PROFILE_ID);
  r.string(f['version'], '$.version', VERSION);
  const provider = r.object(f['provider'], '$.provider', ['name', 'apiVersion']);
  r.string(provider['name'], '$.provider.name', undefined, 128);
  r.string(provider['apiVersion'], '$.provider.apiVersion', undefined, 64);
  r.string(f['account'], '$.account', ACCOUNT);
  r.string(f['environment'], '$.environment', ACCOUNT);
  return f;
}

/**
 * Validate a parsed profile document (from parseStrictJson). The document is kept verbatim: its
 * JCS digest pins exactly what the operator registered.
 */
export function validateProfile(value: unknown): ProviderProfile {
  r.noNul(value, '$');
  const f = readTop(value);
  const request = readRequest(f['request']);
  if (f['authority'] !== undefined) readAuthorityTie(r, f['authority'], request, MEMBER);
  const keyRule = readNativeKey(f['nativeKey']);
  const v2: V2Context | undefined =
    f['format'] === PROFILE_FORMAT_V2
      ? { r, readUrl, tie: f['authority'] as AuthorityTie | undefined }
      : undefined;
  readReference(f['reference'], v2 !== undefined);
  const ack = r.object(
    f['acknowledgement'],
    '$.acknowledgement',
    ['authentication', 'freshnessSeconds'],
    v2 === undefined ? [] : ['read'],
  );
  if (v2 === undefined)
    readAuthentication(r, ack['authentication'], '$.acknowledgement.authentication', readUrl);
  else readEntryV2(v2, f['entry'], ack);
  r.integer(ack['freshnessSeconds'], '$.acknowledgement.freshnessSeconds', 1, MAX_SECONDS);
  const sources = r.array(f['statusSources'], '$.statusSources', 1, 16);
  const ids = sources.map((s, i) => readSource(s, `$.statusSources[${i}]`, keyRule, v2));
  if (new Set(ids).size !== ids.length) r.fail('$.statusSources', 'source ids must be unique');
  readStatuses(r, f['statuses'], MEMBER);
  return value as ProviderProfile;
}

/** The pinned digest of a profile: `sha-256:` over its JCS bytes. */
export function profileDigest(profile: ProviderProfile): Sha256Digest {
  return digestJcs(profile);
}

/**
 * Check a request against the profile's representation and return the digest the binding pins
 * (AOC-REQ-003): JCS + SHA-256 of the request, which may hold only the profile's members.
 */
export function requestDigest(profile: ProviderProfile, request: unknown): Sha256Digest {
  return requestJcs(profile, request).digest;
}

/**
 * The request's JCS text and its digest, from ONE canonicalisation (issue 16 §6): the digest binds
 * the occurrence, and the text is what the store keeps, so the request is never serialized twice.
 */
export function requestJcs(
  profile: ProviderProfile,
  request: unknown,
): { digest: Sha256Digest; text: string } {
  const ri = new Reader('input_invalid');
  const f = ri.object(request, '$.request', profile.request.required, profile.request.members);
  ri.noNul(f, '$.request');
  const text = canonicalize(f);
  return { digest: digestBytes(text), text };
}

export interface NativeKeyInputs {
  readonly domain: string;
  readonly occurrenceId: string;
}

/** Derive the native idempotency key FROM THE OCCURRENCE by the profile's rule (AOC-CASE-006). */
export function deriveNativeKey(profile: ProviderProfile, input: NativeKeyInputs): string | null {
  const rule = profile.nativeKey;
  const values: Record<string, string> = {
    domain: input.domain,
    profileId: profile.id,
    account: profile.account,
    environment: profile.environment,
    occurrenceId: input.occurrenceId,
  };
  if (rule.rule === 'none') return null;
  if (rule.rule === 'template') {
    return rule.template.replace(PLACEHOLDER, (_m, name: string) => values[name] ?? '');
  }
  const picked = Object.fromEntries(rule.members.map((m) => [m, values[m] ?? '']));
  return `${rule.prefix}${sha256(canonicalBytes(picked)).toString('hex')}`;
}

export function nativeKeyHeader(profile: ProviderProfile): string | null {
  return profile.nativeKey.rule === 'none' ? null : profile.nativeKey.header;
}

export type ReferenceReading =
  | { readonly kind: 'absent' }
  | { readonly kind: 'malformed' }
  | { readonly kind: 'found'; readonly value: string };

/**
 * Compiled reference patterns by source, so an observation does not compile one. Bounded: sources
 * come only from registered profiles (validated by readReference), and no `g`/`y` flag means
 * `test` keeps no state between calls.
 */
const referencePatterns = new Map<string, RegExp>();

function referencePattern(source: string): RegExp {
  let re = referencePatterns.get(source);
  if (re === undefined) {
    re = new RegExp(source, 'u');
    if (referencePatterns.size < 1_000) referencePatterns.set(source, re);
  }
  return re;
}

/** Whether a reference has the form the profile's pattern says. */
export function referenceMatches(profile: ProviderProfile, value: string): boolean {
  return value.length <= MAX_REFERENCE_LENGTH && referencePattern(profile.reference.pattern).test(value);
}

/** Read the provider reference from a native answer by the profile's rule. */
export function readProviderReference(profile: ProviderProfile, response: unknown): ReferenceReading {
  if (typeof response !== 'object' || response === null || Array.isArray(response)) return { kind: 'absent' };
  const { member, pattern } = profile.reference;
  // Format 2: the status-source layer reads the reference by the rule's pointer and states it.
  if (member === undefined) return { kind: 'absent' };
  if (!Object.hasOwn(response, member)) return { kind: 'absent' };
  const value = (response as Fields)[member];
  if (
    typeof value !== 'string' ||
    value.length > MAX_REFERENCE_LENGTH ||
    !referencePattern(pattern).test(value)
  )
    return { kind: 'malformed' };
  return { kind: 'found', value };
}

export function findStatusSource(profile: ProviderProfile, id: string): StatusSource | undefined {
  return profile.statusSources.find((s) => s.id === id);
}

/** The profile's meaning of a native status, or undefined when the profile does not define it. */
export function mapStatus(profile: ProviderProfile, nativeStatus: string): StatusMapping | undefined {
  return Object.hasOwn(profile.statuses, nativeStatus) ? profile.statuses[nativeStatus] : undefined;
}

/** `sha256:` + hex of a raw Ed25519 public key: the kid an `ed25519` pin must carry. */
export function ed25519PinKid(publicKeyB64url: string): string {
  return sha256HexTag(Buffer.from(publicKeyB64url, 'base64url'));
}

export function assertProfileMatches(expected: Sha256Digest, profile: ProviderProfile): void {
  if (profileDigest(profile) !== expected) {
    throw new BatonError('store_corrupt', 'a stored provider profile no longer matches its pinned digest');
  }
}
