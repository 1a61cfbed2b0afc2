/**
 * Passes 3–7 of the validation order (B3.1), on a value whose shape is already checked:
 * version/profile/crit → enums → semantic rules → RFC 3339 → digest objects.
 */
import { EVIDENCE_ENVELOPE_FORMAT, isRfc3339DateTime, parseDigest } from '../core/index.js';
import {
  DIMENSIONS,
  EVENT_TYPES,
  EVIDENCE_METHODS,
  OBSERVATION_PROFILE,
  OBSERVATION_VERSION,
  REPRESENTATIONS,
  STATUSES,
  VERIFICATION_CLASSES,
  type ObservationRecord,
} from './model.js';
import { refuse } from './refusal.js';

/** Extensions Baton implements; a `crit` name outside this set is refused (C-B3, OBS-09). */
export const IMPLEMENTED_EXTENSIONS: ReadonlySet<string> = new Set<string>();

/** A URI as the binding uses them: a scheme, a colon, something after it. */
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/;
const STAGE = /^[A-Z][A-Z0-9_]*$/;
/**
 * OBS-12 ¶25, B7-21: credentials MUST NOT be continuity evidence, so they never ride in a record.
 *
 * A member name is a credential's when its last word is one of `SECRET_WORDS`, or it ends in a key
 * named by `SECRET_KEY_WORDS` (`api_key`, `private_key`…); words split at `_`, `-`, `.` and
 * camelCase. So `token`, `access_token`, `bearerToken`, `client_secret`, `apiKey`, `X-Api-Key`,
 * `credentials` are refused, while `token_count`, `max_tokens`, `tokenizer`, `secret_santa_round`
 * are not: a word that only qualifies another (a count of tokens) names no credential.
 */
const SECRET_WORDS = new Set([
  'token',
  'secret',
  'password',
  'passwd',
  'passphrase',
  'credential',
  'credentials',
  'authorization',
  'apikey',
  'bearer',
  'cookie',
]);
const SECRET_KEY_WORDS = new Set(['api', 'private', 'secret', 'access', 'client', 'signing', 'session']);
/** URL parameters that carry a credential besides the named ones (signed-URL signatures). */
const SECRET_PARAMS = new Set([
  'sig',
  'signature',
  'x-amz-signature',
  'x-amz-credential',
  'x-goog-signature',
]);

const words = (name: string): string[] =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[\s_.-]+/)
    .filter((w) => w !== '');

export function isSecretName(name: string): boolean {
  const w = words(name);
  const last = w.at(-1);
  if (last === undefined) return false;
  if (SECRET_WORDS.has(last)) return true;
  return last === 'key' && w.length > 1 && SECRET_KEY_WORDS.has(w[w.length - 2] as string);
}

/** Parameters of a URL-shaped string: query, matrix (`;name=`) and fragment parameters. */
const PARAM = /[?&#;]([^=?&#;\s/]+)=/g;
const CREDENTIAL_SHAPES = [
  // An Authorization header value: the scheme and one token68 word (RFC 6750 §2.1, RFC 7617),
  // the whole string — so prose that mentions "bearer tokens" is not one.
  /^\s*(bearer|basic)\s+[A-Za-z0-9._~+/-]+=*\s*$/i,
];

/** `[\w-]`: a base64url character (the `\w` of a regex without the `u` flag, and `-`). */
function isTokenChar(c: number): boolean {
  return (
    (c >= 48 && c <= 57) ||
    (c >= 65 && c <= 90) ||
    (c >= 97 && c <= 122) ||
    c === 95 /* _ */ ||
    c === 45 /* - */
  );
}

/** `\s` of a JavaScript regex (WhiteSpace and LineTerminator, ECMA-262 §22.2.2.9). */
function isSpace(c: number): boolean {
  return (
    (c >= 9 && c <= 13) ||
    c === 32 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

const DOT = 46;
const startsEyJ = (s: string, i: number): boolean =>
  s.charCodeAt(i) === 101 && s.charCodeAt(i + 1) === 121 && s.charCodeAt(i + 2) === 74;

/**
 * A JWS/JWT (base64url of `{"`, twice): what `/eyJ[\w-]{2,}\.eyJ[\w-]{2,}\./` matched, in one
 * pass. That regex backtracked from every `eyJ` of a long run (`"eyJ"` ×160 000 took 84 s), and
 * every string of a record is checked (OBS-12 ¶25), an `extensions` value of any length included.
 * The regex matches iff two maximal runs of `[\w-]` are separated by one `.` and followed by a
 * `.`, the first holding an `eyJ` with at least two run characters after it, the second starting
 * with `eyJ` and at least five long: `[\w-]{2,}` can only end at its run's end, since the next
 * character must be the `.`. Each run is read once.
 */
function carriesJws(s: string): boolean {
  const n = s.length;
  let previousQualifies = false; // the run just before ends at a `.` and holds a qualifying `eyJ`
  let previousDot = -2; // where that `.` is
  let i = 0;
  while (i < n) {
    if (!isTokenChar(s.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    let eyJ = -1; // the first `eyJ` in the run
    while (i < n && isTokenChar(s.charCodeAt(i))) {
      if (eyJ === -1 && startsEyJ(s, i)) eyJ = i;
      i++;
    }
    const end = i;
    const endsAtDot = end < n && s.charCodeAt(end) === DOT;
    if (
      previousQualifies &&
      previousDot === start - 1 &&
      startsEyJ(s, start) &&
      end - start >= 5 &&
      endsAtDot
    )
      return true;
    // An `eyJ` at or before `end - 5` qualifies (two run characters after it); if any does, the first does.
    previousQualifies = endsAtDot && eyJ !== -1 && eyJ <= end - 5;
    previousDot = end;
  }
  return false;
}

/**
 * A URL's userinfo with a password: what `/:\/\/[^/?#@\s]*:[^/?#@\s]*@/` matched, in one pass
 * (that regex backtracked over a run of colons: `"://"` + 300 000 colons took 119 s). From each
 * `://`, the authority runs to the first of `/ ? # @` or a space; it carries a password iff that
 * first stop is `@` and a `:` comes before it. The scans of two `://` never overlap by more than
 * the `/` that stops the first, so the whole string is read a bounded number of times.
 */
function carriesUrlPassword(s: string): boolean {
  let from = 0;
  for (;;) {
    const at = s.indexOf('://', from);
    if (at === -1) return false;
    let colon = false;
    let i = at + 3;
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */ || c === 64 /* @ */ || isSpace(c)) break;
      if (c === 58 /* : */) colon = true;
    }
    if (colon && s.charCodeAt(i) === 64) return true;
    from = at + 1;
  }
}

/** Whether a string carries a credential (OBS-12 ¶25): the one check for every string of a record. */
export function carriesCredential(value: string): boolean {
  if (CREDENTIAL_SHAPES.some((re) => re.test(value))) return true;
  // Hand-written scans, linear in the string's length (see each).
  if (carriesJws(value) || carriesUrlPassword(value)) return true;
  for (const [, name] of value.matchAll(PARAM)) {
    let decoded = name as string;
    try {
      decoded = decodeURIComponent(decoded);
    } catch {
      // an undecodable name is judged as written
    }
    if (isSecretName(decoded) || SECRET_PARAMS.has(decoded.toLowerCase())) return true;
  }
  return false;
}

const oneOf = (list: readonly string[], value: string): boolean => list.includes(value);

export function checkProfile(r: ObservationRecord): void {
  if (r.version !== OBSERVATION_VERSION) refuse('version', '$.version', 'must be "1"');
  if (r.profile !== undefined && r.profile !== OBSERVATION_PROFILE) {
    refuse('profile', '$.profile', `must be ${OBSERVATION_PROFILE}`);
  }
  r.crit?.forEach((name, i) => {
    if (!IMPLEMENTED_EXTENSIONS.has(name))
      refuse('crit', `$.crit[${i}]`, 'names an extension Baton does not implement');
  });
}

export function checkEnums(r: ObservationRecord): void {
  if (!oneOf(EVENT_TYPES, r.event_type) && !URI.test(r.event_type)) {
    refuse('enum', '$.event_type', 'is not a known event type or a URI');
  }
  r.invariants.forEach((inv, i) => {
    if (!oneOf(DIMENSIONS, inv.dimension) && !URI.test(inv.dimension)) {
      refuse('enum', `$.invariants[${i}].dimension`, 'is not a known dimension or a URI');
    }
    if (!oneOf(STATUSES, inv.status))
      refuse('enum', `$.invariants[${i}].status`, 'must be MATCH, MISMATCH, UNKNOWN or NOT_APPLICABLE');
  });
  r.evidence.forEach((e, i) => {
    if (!oneOf(EVIDENCE_METHODS, e.method))
      refuse('enum', `$.evidence[${i}].method`, 'is not an evidence method');
    if (!oneOf(VERIFICATION_CLASSES, e.verification)) {
      refuse('enum', `$.evidence[${i}].verification`, 'is not a verification class');
    }
    const d = e.byte_digest;
    if (d === null) return;
    if (d.algorithm !== 'sha-256')
      refuse('enum', `$.evidence[${i}].byte_digest.algorithm`, 'must be "sha-256"');
    if (!oneOf(REPRESENTATIONS, d.representation)) {
      refuse(
        'enum',
        `$.evidence[${i}].byte_digest.representation`,
        'must be raw, redacted, normalized_text or jcs',
      );
    }
  });
  // C-B5: the six stages are labels; `operation_ref` and `decision_ref` are stable ids (OBS-19 joins).
  for (const [name, value] of Object.entries(r.outcome) as [string, string | null][]) {
    if (name === 'operation_ref' || name === 'decision_ref') continue;
    if (value !== null && !STAGE.test(value))
      refuse('enum', `$.outcome.${name}`, 'must be an upper-case label or null');
  }
  // OBS-07, C-B10: the binding has one envelope format; any other is refused here, so a reader
  // that checks no signature (`baton observe validate`) never calls such a record valid.
  if (r.evidence_envelope !== undefined && r.evidence_envelope.format !== EVIDENCE_ENVELOPE_FORMAT) {
    refuse('enum', '$.evidence_envelope.format', 'must be "jws-compact"');
  }
  if (r.classification !== undefined && !oneOf(VERIFICATION_CLASSES, r.classification)) {
    refuse('enum', '$.classification', 'is not a verification class');
  }
}

function checkExtensions(r: ObservationRecord): void {
  for (const name of Object.keys(r.extensions ?? {})) {
    if (!URI.test(name)) refuse('uri', `$.extensions.${name}`, 'extension names must be URIs');
  }
  scanSecretNames(r.extensions, '$.extensions', true);
}

/**
 * Member names inside `extensions`, the extension names included (the record's own members are
 * closed; none names a secret).
 */
function scanSecretNames(value: unknown, path: string, uris: boolean): void {
  if (Array.isArray(value)) value.forEach((v, i) => scanSecretNames(v, `${path}[${i}]`, false));
  else if (typeof value === 'object' && value !== null) {
    for (const [name, v] of Object.entries(value)) {
      // An extension's own name is a URI: its last segment is the word judged (`urn:x:token`).
      const word = uris ? name.slice(Math.max(...[':', '/', '#'].map((c) => name.lastIndexOf(c))) + 1) : name;
      if (isSecretName(word))
        refuse('secret_member', `${path}.${name}`, 'a record never carries credentials');
      scanSecretNames(v, `${path}.${name}`, false);
    }
  }
}

/**
 * Every string of the record, with its JSON path, member names of `extensions` included, but not
 * `evidence_envelope` (a JWS by design, read by the envelope pass).
 */
function* strings(value: unknown, path: string): Generator<{ value: string; path: string }> {
  if (typeof value === 'string') yield { value, path };
  else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) yield* strings(v, `${path}[${i}]`);
  } else if (typeof value === 'object' && value !== null) {
    for (const [name, v] of Object.entries(value)) {
      if (path === '$' && name === 'evidence_envelope') continue;
      if (path.startsWith('$.extensions')) yield { value: name, path: `${path}.${name}` };
      yield* strings(v, `${path}.${name}`);
    }
  }
}

/** Null, or only whitespace (`String.prototype.trim`'s set: ECMA-262 WhiteSpace and LineTerminator). */
const isBlank = (value: string | null): boolean => value === null || value.trim() === '';

export function checkSemantics(r: ObservationRecord): void {
  // U+0000 is valid JSON but no store can keep it in text (PostgreSQL refuses it; docs/api.md
  // "Text"): refused here, so `baton observe validate` and the API answer alike, never an untyped
  // store error after the reader said yes.
  for (const { value, path } of strings(r, '$')) {
    if (value.includes('\u0000')) refuse('type', path, 'must not contain U+0000');
  }
  r.invariants.forEach((inv, i) => {
    const at = `$.invariants[${i}]`;
    // OBS-13 ¶26, C-B6: a whitespace-only value names no reason and no evidence, as null does
    // (the shape pass only bounds lengths); so it is refused with the same rule.
    if ((inv.status === 'UNKNOWN' || inv.status === 'NOT_APPLICABLE') && isBlank(inv.reason)) {
      refuse('reason_required', `${at}.reason`, `${inv.status} needs a reason`);
    }
    if ((inv.status === 'MATCH' || inv.status === 'MISMATCH') && isBlank(inv.reference)) {
      refuse('reference_required', `${at}.reference`, `${inv.status} needs reference evidence`);
    }
    // OBS-13: without evidence nothing is decided.
    if ((inv.status === 'MATCH' || inv.status === 'MISMATCH') && r.evidence.length === 0) {
      refuse(
        'decided_without_evidence',
        `${at}.status`,
        'a record without evidence cannot decide an invariant',
      );
    }
  });
  // B2: `order.sequence` is decimal digits or null (unknown), never free text.
  if (r.order.sequence !== null && !/^[0-9]+$/.test(r.order.sequence)) {
    refuse('type', '$.order.sequence', 'must be decimal digits or null');
  }
  // OBS-12 ¶25, B7-21: credentials are never continuity evidence, wherever a locator appears —
  // and every string may be one (evidence and reference locators, invariant references, lineage
  // parents and actions, runtimes, ids, extension values), so every string is checked alike.
  for (const { value, path } of strings(r, '$')) {
    if (carriesCredential(value)) {
      refuse('credential_in_locator', path, 'looks like it carries a credential');
    }
  }
  if (r.supersedes !== undefined && r.supersedes !== null && r.analysis_revision === undefined) {
    refuse('analysis_revision_required', '$.analysis_revision', 'a correction names its analysis revision');
  }
  if (r.independence_claimed === true && r.colocated_roles === undefined) {
    refuse(
      'independence_undisclosed',
      '$.colocated_roles',
      'claiming independence requires disclosing co-located roles',
    );
  }
  checkExtensions(r);
}

export function checkTimes(r: ObservationRecord): void {
  for (const name of ['observed_at', 'issued_at', 'expires_at'] as const) {
    const value = r[name];
    if (value !== undefined && !isRfc3339DateTime(value))
      refuse('time', `$.${name}`, 'must be an RFC 3339 date-time');
  }
}

function checkDigestValue(value: string, path: string): void {
  try {
    parseDigest(value);
  } catch {
    refuse('digest', path, 'must be "sha-256:" + 43 base64url characters');
  }
}

export function checkDigests(r: ObservationRecord): void {
  r.evidence.forEach((e, i) => {
    if (e.byte_digest !== null) checkDigestValue(e.byte_digest.value, `$.evidence[${i}].byte_digest.value`);
  });
  r.references?.forEach((ref, i) => checkDigestValue(ref.digest, `$.references[${i}].digest`));
}
