/**
 * The agent's arguments are checked before anything is created, entered or sent (docs/mcp.md "A
 * consequential call", step 1): against the upstream tool's own `inputSchema` (less the native key
 * member Baton fills), and — with a policy `request` map — for members the map does not cover.
 * An argument the upstream would refuse must not consume authority and burn the creation key on an
 * occurrence that is entered and never applied; an argument outside the map would reach the
 * provider without being part of the request Baton binds, so two different calls would be "the
 * same call" (AOC-REQ-002) and the provider's request digest would never match Baton's.
 *
 * The schema is compiled with a real JSON Schema validator (Ajv) at gateway start, and again each
 * time the upstream's latest `tools/list` changes it (schemas.ts). A schema it cannot compile — an
 * unsupported dialect, an unknown keyword or format, an unresolvable `$ref` — is refused
 * (`mcp_upstream_invalid`: at start, or at call time), never taken as "anything goes" (fail closed).
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { BatonError } from '../core/errors.js';
import { formatJsonPointer } from '../core/json-pointer.js';
import type { JsonObject, JsonValue } from '../core/json.js';
import { getPointer, pointerTokens } from './pointer.js';
import type { ToolPolicy } from './policy.js';
import { Read } from './read.js';

const r: Read = new Read('input_invalid');

/** The compiled check of one consequential tool's arguments (compileArguments). */
export interface ArgumentsCheck {
  readonly tool: string;
  /** Throws `input_invalid` naming the JSON path of the first argument that does not fit. */
  check(args: JsonObject): void;
}

// strictSchema (on): an unknown keyword, or a keyword the dialect ignores, fails to compile instead
// of being skipped. Types, tuples and `required` without `properties` are left to the dialect.
const OPTIONS: Options = {
  strict: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  allowUnionTypes: true,
  allErrors: true,
  validateFormats: true,
};

type AjvLike = Ajv | Ajv2019 | Ajv2020;

/**
 * The dialect of `$schema`. MCP (2025-11-25, "JSON Schema Usage") defaults a schema without one to
 * 2020-12; draft-07 is what the SDK's own servers declare. Any other dialect is refused.
 */
function validatorFor(schema: Tool['inputSchema']): AjvLike | string {
  const declared = schema['$schema'];
  const dialect = typeof declared === 'string' ? declared : declared === undefined ? '' : null;
  let ajv: AjvLike;
  if (dialect === '' || /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/.test(dialect ?? ''))
    ajv = new Ajv2020(OPTIONS);
  else if (/^https?:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/.test(dialect ?? ''))
    ajv = new Ajv2019(OPTIONS);
  else if (/^https?:\/\/json-schema\.org\/draft-07\/schema#?$/.test(dialect ?? '')) ajv = new Ajv(OPTIONS);
  else
    return `its $schema ${JSON.stringify(declared)} is not a dialect the gateway checks (2020-12, 2019-09, draft-07)`;
  formats.default(ajv);
  return ajv;
}

/**
 * The tool's check, or `mcp_upstream_invalid` (at gateway start) when its input schema cannot be
 * compiled. One Ajv per tool: two tools' schemas may carry the same `$id`.
 */
export function compileArguments(tool: Tool, p: ToolPolicy): ArgumentsCheck {
  const ajv = validatorFor(tool.inputSchema);
  const refuse = (why: string): never => {
    throw new BatonError(
      'mcp_upstream_invalid',
      `the input schema of tool ${tool.name} cannot be checked: ${why}; the gateway does not run a consequential tool whose arguments it cannot check`,
      { tool: tool.name },
    );
  };
  if (typeof ajv === 'string') return refuse(ajv);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(tool.inputSchema);
  } catch (error) {
    return refuse(error instanceof Error ? error.message : String(error));
  }
  const native = nativeKeyMember(p);
  return {
    tool: tool.name,
    check: (args) => {
      refuseNativeKey(p, args);
      checkSchema(validate, native, args);
      checkCoverage(p, args);
    },
  };
}

/** The native key argument's parent (a JSON pointer) and member name, when it is an argument. */
function nativeKeyMember(p: ToolPolicy): { parent: string; name: string } | null {
  if (p.nativeKey?.to !== 'argument') return null;
  const tokens = pointerTokens(p.nativeKey.pointer);
  if (tokens === undefined || tokens.length === 0) return null;
  return { parent: formatJsonPointer(tokens.slice(0, -1)), name: tokens[tokens.length - 1] as string };
}

function refuseNativeKey(p: ToolPolicy, args: JsonObject): void {
  const native = p.nativeKey;
  if (native?.to === 'argument' && getPointer(args, native.pointer) !== undefined) {
    // AOC-CASE-006: the native key is derived by Baton from the occurrence, never chosen by the caller.
    r.fail(`$.arguments${native.pointer}`, 'is the native idempotency key: Baton supplies it');
  }
}

/**
 * The arguments as the upstream will receive them, but for the native key Baton adds after entry:
 * its absence (`required`, `dependentRequired`) is the one error that does not count.
 */
function checkSchema(
  validate: ValidateFunction,
  native: { parent: string; name: string } | null,
  args: JsonObject,
): void {
  if (validate(args)) return;
  const all = validate.errors ?? [];
  if (all.length === 0) r.fail('$.arguments', "does not fit the upstream tool's input schema");
  const first = all.find((e) => !isNativeKeyAbsence(e, native));
  if (first === undefined) return;
  // Ajv's messages name the rule, never the value (which may be part of a private request).
  r.fail(
    `$.arguments${errorPath(first)}`,
    `${first.message ?? 'is invalid'} (the upstream tool's input schema, ${first.schemaPath})`,
  );
}

function isNativeKeyAbsence(e: ErrorObject, native: { parent: string; name: string } | null): boolean {
  if (native === null) return false;
  const missing = (e.params as { missingProperty?: unknown }).missingProperty;
  return (
    ['required', 'dependentRequired', 'dependencies'].includes(e.keyword) &&
    e.instancePath === native.parent &&
    missing === native.name
  );
}

/** The JSON pointer of the argument an error is about (a missing or extra member: that member). */
function errorPath(e: ErrorObject): string {
  const params = e.params as Record<string, unknown>;
  const member =
    params['missingProperty'] ??
    params['additionalProperty'] ??
    params['unevaluatedProperty'] ??
    params['propertyName'];
  return typeof member === 'string' ? `${e.instancePath}${formatJsonPointer([member])}` : e.instancePath;
}

/**
 * With a `request` map, everything the upstream receives must be in the request Baton binds
 * (AOC-REQ-002: the same call is the same request): each argument must be at a mapped pointer or
 * under one. Only the ancestors of mapped pointers may hold other members, and those are checked in
 * turn; an empty object or array there is refused too (it is sent, and the request would not tell
 * it from its absence) — but for the native key's parents, which must exist to hold it.
 */
function checkCoverage(p: ToolPolicy, args: JsonObject): void {
  if (p.request === null) return;
  const mapped = Object.values(p.request).map((ptr) => pointerTokens(ptr) ?? []);
  const native = p.nativeKey?.to === 'argument' ? pointerTokens(p.nativeKey.pointer) : undefined;
  for (const [token, child] of Object.entries(args)) walk(child, [token], mapped, native);
}

function walk(
  value: JsonValue,
  at: readonly string[],
  mapped: readonly (readonly string[])[],
  native: readonly string[] | undefined,
): void {
  if (mapped.some((m) => startsWith(at, m))) return;
  const below = (m: readonly string[]): boolean => m.length > at.length && startsWith(m, at);
  const holdsNative = native !== undefined && below(native);
  const uncovered = (): never =>
    r.fail(
      `$.arguments${formatJsonPointer(at)}`,
      "is not covered by the policy's request map: the provider would receive it unbound",
    );
  if (typeof value !== 'object' || value === null || !(holdsNative || mapped.some(below))) return uncovered();
  const entries: [string, JsonValue][] = Array.isArray(value)
    ? value.map((v, i) => [String(i), v])
    : Object.entries(value);
  if (entries.length === 0 && !holdsNative) return uncovered();
  for (const [token, child] of entries) walk(child, [...at, token], mapped, native);
}

function startsWith(path: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= path.length && prefix.every((t, i) => path[i] === t);
}
