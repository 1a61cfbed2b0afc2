/**
 * From one `tools/call` of a consequential tool to the occurrence Baton should hold for it, by the
 * tool's policy: the creation key (AOC-REQ-002: the same call is the same occurrence), the request
 * the provider binding digests, and the authority amount. Anything that does not fit the policy or
 * the upstream tool's input schema (arguments.ts) is refused with `input_invalid` before Baton or
 * the upstream hear of the call.
 */
import type { Operation } from '../client/index.js';
import { digestJcs } from '../core/digest.js';
import { DEFAULT_JSON_MAX_DEPTH, type JsonObject, type JsonValue } from '../core/json.js';
import type { ArgumentsCheck } from './arguments.js';
import { getPointer, removePointer, setPointer } from './pointer.js';
import type { NativeKeyPlacement, ToolPolicy } from './policy.js';
import { Read } from './read.js';

const r: Read = new Read('input_invalid');
const AGENT_KEY = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,255}$/;

export interface DerivedCall {
  readonly operation: Operation;
  /** The agent's arguments, which go upstream (with Baton's native key added). */
  readonly arguments: JsonObject;
  /** The agent's `_meta` (an object, or empty). */
  readonly meta: JsonObject;
}

/**
 * The agent's `_meta` member `name`, or undefined when it sent none: its own members only. A
 * policy's member name may be one an object inherits (`toString`, `constructor`: the policy's
 * META_KEY allows them), which a plain lookup would find on every call's `_meta` — the native key
 * "supplied" by every agent, every Mission reference "invalid".
 */
export function metaMember(meta: JsonObject, name: string): JsonValue | undefined {
  return Object.hasOwn(meta, name) ? meta[name] : undefined;
}

function creationKeyOf(p: ToolPolicy, args: JsonObject, meta: JsonObject): string {
  const rule = p.creationKey;
  if (rule.from === 'meta') {
    const key = r.string(metaMember(meta, rule.member), `$._meta.${rule.member}`, AGENT_KEY, 256);
    return `mcp:${digestJcs({ tool: p.tool, key })}`;
  }
  const values = rule.pointers.map((ptr) => {
    const v = getPointer(args, ptr);
    if (v === undefined) r.fail(`$.arguments${ptr}`, 'is required by the creation key rule');
    return v;
  });
  // A digest keeps the key within the occurrences context's NAME rule whatever the values are.
  return `mcp:${digestJcs({ tool: p.tool, values })}`;
}

function requestOf(p: ToolPolicy, args: JsonObject): JsonObject {
  // The agent supplying the native key (AOC-CASE-006) was refused by ArgumentsCheck.
  const native = p.nativeKey;
  if (p.request === null) return native?.to === 'argument' ? removePointer(args, native.pointer) : args;
  const request: JsonObject = {};
  for (const [member, ptr] of Object.entries(p.request)) {
    const v = getPointer(args, ptr);
    if (v !== undefined) request[member] = v;
  }
  return request;
}

function amountOf(p: ToolPolicy, args: JsonObject): number {
  const rule = p.authority.amount;
  if ('fixed' in rule) return rule.fixed;
  return r.integer(getPointer(args, rule.pointer), `$.arguments${rule.pointer}`, 1);
}

/**
 * Whether `value` nests deeper than `max` levels (`[]` and `{}` are level 1, as src/core/json.ts
 * counts), walked without recursion: a value 20,000 levels deep costs heap here, never call stack.
 */
function deeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [v, depth] = next;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

function object(value: unknown, path: string): JsonObject {
  if (value === undefined) return {};
  // The project's JSON nesting bound, applied before anything walks the value: deeper nesting would
  // overflow the stack of a recursive step (the schema check, JCS, JSON.stringify) — an internal
  // error instead of a typed refusal.
  if (deeperThan(value, DEFAULT_JSON_MAX_DEPTH))
    r.fail(path, `nests deeper than ${DEFAULT_JSON_MAX_DEPTH} levels`);
  // Tool arguments and `_meta` arrive as parsed JSON, so their members are JSON values.
  return r.object(value, path, [], Object.keys(value as object)) as JsonObject;
}

/** `input`: the tool's compiled argument check (arguments.ts), run before anything is derived. */
export function deriveCall(
  p: ToolPolicy,
  rawArgs: unknown,
  rawMeta: unknown,
  input: ArgumentsCheck,
): DerivedCall {
  const args = object(rawArgs, '$.arguments');
  const meta = object(rawMeta, '$._meta');
  input.check(args);
  if (p.nativeKey?.to === 'meta' && metaMember(meta, p.nativeKey.member) !== undefined) {
    // AOC-CASE-006: the native key is derived by Baton from the occurrence, never chosen by the
    // caller — refused, as in the arguments (arguments.ts), rather than silently overwritten.
    r.fail(`$._meta.${p.nativeKey.member}`, 'is the native idempotency key: Baton supplies it');
  }
  const provider = p.provider;
  // The native key must have a place before anything is entered: a failure after entry is doubt.
  if (p.nativeKey?.to === 'argument' && setPointer(args, p.nativeKey.pointer, '') === undefined) {
    r.fail(`$.arguments${p.nativeKey.pointer}`, 'has no parent object to hold the native key');
  }
  return {
    operation: {
      creationKey: creationKeyOf(p, args, meta),
      provider,
      request: requestOf(p, args),
      authority: { id: p.authority.id, amount: amountOf(p, args) },
    },
    arguments: args,
    meta,
  };
}

/** The arguments and `_meta` that go upstream: the native key where the policy puts it. */
export function placeNativeKey(
  placement: NativeKeyPlacement | null,
  nativeKey: string | null,
  args: JsonObject,
  meta: JsonObject,
): { arguments: JsonObject; meta: JsonObject } {
  if (placement === null || nativeKey === null) return { arguments: args, meta };
  if (placement.to === 'meta') return { arguments: args, meta: { ...meta, [placement.member]: nativeKey } };
  const placed = setPointer(args, placement.pointer, nativeKey);
  if (placed === undefined)
    r.fail(`$.arguments${placement.pointer}`, 'has no parent object to hold the native key');
  return { arguments: placed, meta };
}

export function isJsonObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
