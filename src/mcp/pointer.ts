/** RFC 6901 JSON Pointers over tool arguments and results: read, and (for the native key) write. */
import type { JsonObject, JsonValue } from '../core/json.js';

/** `""` is the whole document; otherwise `/a/b~1c` → ['a', 'b/c']. Undefined when malformed. */
export function pointerTokens(pointer: string): readonly string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/') || /~[^01]|~$/.test(pointer)) return undefined;
  return Object.freeze(
    pointer
      .slice(1)
      .split('/')
      .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~')),
  );
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
  return setAt(doc, tokens, 0, value);
}

// On the tokens parsed once per call: the inner levels are not escaped and parsed again.
function setAt(
  doc: JsonObject,
  tokens: readonly string[],
  i: number,
  value: JsonValue,
): JsonObject | undefined {
  const head = tokens[i] as string;
  if (i === tokens.length - 1) return { ...doc, [head]: value };
  const inner = doc[head];
  if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) return undefined;
  const replaced = setAt(inner, tokens, i + 1, value);
  return replaced === undefined ? undefined : { ...doc, [head]: replaced };
}

/** A copy of `doc` without the member at the pointer (absent paths leave it as it is). */
export function removePointer(doc: JsonObject, pointer: string): JsonObject {
  const tokens = pointerTokens(pointer);
  if (tokens === undefined || tokens.length === 0) return doc;
  return removeAt(doc, tokens, 0);
}

function removeAt(doc: JsonObject, tokens: readonly string[], i: number): JsonObject {
  const head = tokens[i] as string;
  if (i === tokens.length - 1) {
    const { [head]: _dropped, ...kept } = doc;
    return kept;
  }
  const inner = doc[head];
  if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) return doc;
  return { ...doc, [head]: removeAt(inner, tokens, i + 1) };
}
