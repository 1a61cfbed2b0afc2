/** RFC 6901 JSON Pointers over tool arguments and results: read, and (for the native key) write. */
import type { JsonObject, JsonValue } from '../core/json.js';

/** `""` is the whole document; otherwise `/a/b~1c` → ['a', 'b/c']. Undefined when malformed. */
export function pointerTokens(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/') || /~[^01]|~$/.test(pointer)) return undefined;
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

export function isPointer(pointer: string): boolean {
  return pointerTokens(pointer) !== undefined;
}

function child(value: JsonValue, token: string): JsonValue | undefined {
  if (Array.isArray(value)) {
    if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
    return value[Number(token)];
  }
  if (typeof value === 'object' && value !== null && Object.hasOwn(value, token)) return value[token];
  return undefined;
}

/** The value at the pointer, or undefined when the path is absent. */
export function getPointer(doc: JsonValue, pointer: string): JsonValue | undefined {
  const tokens = pointerTokens(pointer);
  if (tokens === undefined) return undefined;
  let at: JsonValue | undefined = doc;
  for (const token of tokens) {
    if (at === undefined) return undefined;
    at = child(at, token);
  }
  return at;
}

/** A copy of `doc` with `value` at the pointer; parents must exist and be objects. */
export function setPointer(doc: JsonObject, pointer: string, value: JsonValue): JsonObject | undefined {
  const tokens = pointerTokens(pointer);
  if (tokens === undefined || tokens.length === 0) return undefined;
  const [head, ...rest] = tokens as [string, ...string[]];
  if (rest.length === 0) return { ...doc, [head]: value };
  const inner = doc[head];
  if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) return undefined;
  const replaced = setPointer(inner, `/${rest.map(escape).join('/')}`, value);
  return replaced === undefined ? undefined : { ...doc, [head]: replaced };
}

/** A copy of `doc` without the member at the pointer (absent paths leave it as it is). */
export function removePointer(doc: JsonObject, pointer: string): JsonObject {
  const tokens = pointerTokens(pointer);
  if (tokens === undefined || tokens.length === 0) return doc;
  const [head, ...rest] = tokens as [string, ...string[]];
  if (rest.length === 0) {
    const { [head]: _dropped, ...kept } = doc;
    return kept;
  }
  const inner = doc[head];
  if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) return doc;
  return { ...doc, [head]: removePointer(inner, `/${rest.map(escape).join('/')}`) };
}

function escape(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}
