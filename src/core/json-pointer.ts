/**
 * JSON Pointer (RFC 6901): `""` is the whole document, `/a/b` walks members, `~1` is `/` and `~0`
 * is `~` (decoded in that order, §4). Array elements are addressed by decimal index without
 * leading zeros. Resolution never throws: a pointer to nothing is `undefined`.
 */
import type { JsonValue } from './json.js';

const ESCAPE = /~(?![01])/;
const INDEX = /^(0|[1-9][0-9]{0,8})$/;

/** The reference tokens of a pointer, or undefined when it is not a valid RFC 6901 pointer. */
export function parseJsonPointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  const tokens = pointer.slice(1).split('/');
  if (tokens.some((t) => ESCAPE.test(t))) return undefined;
  return tokens.map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** The pointer of reference tokens (the inverse of parseJsonPointer): `~` as `~0`, `/` as `~1`. */
export function formatJsonPointer(tokens: readonly string[]): string {
  return tokens.map((t) => `/${t.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

export function resolveJsonPointer(doc: JsonValue | undefined, pointer: string): JsonValue | undefined {
  const tokens = parseJsonPointer(pointer);
  if (tokens === undefined) return undefined;
  let at: JsonValue | undefined = doc;
  for (const token of tokens) {
    if (Array.isArray(at)) {
      at = INDEX.test(token) ? at[Number(token)] : undefined;
    } else if (typeof at === 'object' && at !== null) {
      at = Object.hasOwn(at, token) ? at[token] : undefined;
    } else return undefined;
    if (at === undefined) return undefined;
  }
  return at;
}
