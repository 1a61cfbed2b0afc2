/**
 * RFC 8785 JSON Canonicalization Scheme. The serialization itself is the maintained `canonicalize`
 * library (it passes every vector in test/vectors/jcs-rfc8785, see test/core/jcs.test.ts);
 * this module adds the I-JSON gate in front of it: values that have no JSON form (undefined,
 * functions, symbols, bigint), non-finite numbers, lone surrogates and exotic objects raise a
 * typed error instead of being silently dropped or turned into `null` (RFC 8785 §3.2.2.3).
 */
import canonicalizeLibrary from 'canonicalize';
import { BatonError } from './errors.js';
import { hasLoneSurrogate } from './json.js';

const MAX_DEPTH = 1000;

function reject(path: string, why: string): never {
  throw new BatonError('jcs_unsupported_value', `cannot canonicalize ${path}: ${why}`, { path });
}

function assertIJson(value: unknown, path: string, depth: number): void {
  if (depth > MAX_DEPTH) reject(path, `nesting deeper than ${MAX_DEPTH}`);
  switch (typeof value) {
    case 'string':
      if (hasLoneSurrogate(value)) reject(path, 'string with a lone surrogate');
      return;
    case 'number':
      if (!Number.isFinite(value)) reject(path, `non-finite number ${String(value)}`);
      return;
    case 'boolean':
      return;
    case 'object':
      if (value === null) return;
      if (Array.isArray(value)) {
        // A hole would be serialized as null: a silent change, like undefined (RFC 8785 §3.2.2.3).
        for (let i = 0; i < value.length; i++) {
          if (!Object.hasOwn(value, i)) reject(`${path}[${i}]`, 'hole in a sparse array');
          assertIJson(value[i], `${path}[${i}]`, depth + 1);
        }
        return;
      }
      {
        const proto = Object.getPrototypeOf(value) as unknown;
        if (proto !== Object.prototype && proto !== null) reject(path, 'not a plain object');
      }
      for (const [key, member] of Object.entries(value)) {
        if (hasLoneSurrogate(key)) reject(path, 'member name with a lone surrogate');
        assertIJson(member, `${path}.${key}`, depth + 1);
      }
      return;
    default:
      reject(path, `${typeof value} has no JSON form`);
  }
}

/** Printable ASCII without `"` and `\`: the characters JSON.stringify writes as themselves. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * The JCS text of one string (RFC 8785 §3.2.2.2 is ECMAScript's JSON.stringify of a well-formed
 * string), for callers that assemble a fixed-shape object's text themselves; `path` names it in
 * the error a lone surrogate raises.
 */
export function jcsString(value: string, path: string): string {
  // Most members (ids, hashes, instants, names) are printable ASCII that needs no escape: one
  // regular-expression test and a concatenation cost a fraction of JSON.stringify (issue 11 §8).
  if (PLAIN.test(value)) return `"${value}"`;
  if (hasLoneSurrogate(value)) reject(path, 'string with a lone surrogate');
  return JSON.stringify(value);
}

/** The canonical JSON text of an I-JSON value. */
export function canonicalize(value: unknown): string {
  assertIJson(value, '$', 0);
  const text = canonicalizeLibrary(value);
  if (typeof text !== 'string') reject('$', 'no JSON form');
  return text;
}

/** The canonical UTF-8 bytes of an I-JSON value: what every Baton digest and signature covers. */
export function canonicalBytes(value: unknown): Buffer {
  return Buffer.from(canonicalize(value), 'utf8');
}
