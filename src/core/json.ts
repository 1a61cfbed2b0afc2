/**
 * Strict JSON: the one parser for every external input to Baton (DESIGN.md §1 core, §7 "strict JSON").
 * RFC 8259 grammar plus the I-JSON restrictions (RFC 7493) that JCS (RFC 8785) and every digest rely
 * on; the full policy, the limits and the verdict for each JSONTestSuite i_ case are in docs/json.md.
 *
 * - UTF-8 only, no byte order mark (RFC 8259 §8.1: senders MUST NOT add one; a BOM is not JSON text).
 * - Duplicate member names are refused, compared after unescaping (RFC 7493 §2.3; mission draft
 *   "Canonicalization Rules": duplicates MUST be rejected before canonicalization; continuity
 *   observation profile: "A JSON binding MUST reject duplicate object member names").
 * - Lone surrogates, escaped or raw, are refused (RFC 7493 §2.1): JCS cannot serialize them.
 * - Numbers that JavaScript would silently change are refused (docs/json.md "Numbers").
 * - Depth and size are bounded; the parser is iterative, so depth costs heap, never call stack.
 * - Members are own data properties even when named "__proto__": parsing never touches a prototype.
 */
import { BatonError } from './errors.js';

export type JsonValue = null | boolean | number | string | JsonArray | JsonObject;
export type JsonArray = JsonValue[];
export type JsonObject = { [member: string]: JsonValue };

export interface JsonLimits {
  /** Maximum number of nested arrays/objects (`[]` is depth 1, a scalar depth 0). */
  readonly maxDepth?: number;
  /** Maximum size of the input in UTF-8 bytes, checked before any parsing. */
  readonly maxBytes?: number;
}

/**
 * 128 levels: Baton's own documents nest fewer than 10 deep; 128 leaves room for caller-defined
 * parameter objects while keeping every later recursive walk (jcs.ts allows 1000) far from its limit.
 */
export const DEFAULT_JSON_MAX_DEPTH = 128;
/** 1 MiB: the same as Fastify's default body limit; larger inputs (log imports) pass their own limit. */
export const DEFAULT_JSON_MAX_BYTES = 1_048_576;

/** The largest integer a plain integer literal may denote: beyond it doubles skip integers. */
const MAX_EXACT_INTEGER = Number.MAX_SAFE_INTEGER;
/** From here on JCS (ES6 Number#toString) writes numbers with an exponent. */
const EXPONENT_FORM_FROM = 1e21;

const LONE_SURROGATE = /\p{Cs}/u;
/** Code-unit scan, much faster than the Unicode-mode one; most text has no surrogate at all. */
const ANY_SURROGATE = /[\ud800-\udfff]/;
const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const NON_ZERO_DIGIT = /[1-9]/;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const MEMBER_NAME_DETAIL_LENGTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const BOM = 0xfeff;

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

/** True when `text` holds a surrogate code unit that is not half of a valid pair. */
export function hasLoneSurrogate(text: string): boolean {
  return ANY_SURROGATE.test(text) && LONE_SURROGATE.test(text);
}

/** Parse one JSON text under Baton's strict policy; every refusal is a BatonError with a json_* code. */
export function parseStrictJson(input: string | Uint8Array, limits: JsonLimits = {}): JsonValue {
  const maxDepth = limitOf(limits.maxDepth, DEFAULT_JSON_MAX_DEPTH, 'maxDepth');
  const maxBytes = limitOf(limits.maxBytes, DEFAULT_JSON_MAX_BYTES, 'maxBytes');
  const text = typeof input === 'string' ? checkedString(input, maxBytes) : decodeBytes(input, maxBytes);
  if (text.charCodeAt(0) === BOM) {
    throw new BatonError('json_invalid_encoding', 'JSON text must not start with a byte order mark', {
      offset: 0,
      byteOffset: 0,
    });
  }
  return new Parser(text, maxDepth).parseText();
}

function limitOf(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if ((Number.isInteger(value) || value === Infinity) && value >= 0) return value;
  throw new BatonError('internal', `JSON limit ${name} must be a non-negative integer or Infinity`, {
    limit: name,
  });
}

function tooLarge(size: number, maxBytes: number): never {
  throw new BatonError('json_too_large', `JSON input exceeds ${maxBytes} bytes`, { limit: maxBytes, size });
}

function checkedString(input: string, maxBytes: number): string {
  // UTF-8 never takes fewer bytes than UTF-16 code units, so a long string is refused without counting.
  if (input.length > maxBytes) tooLarge(input.length, maxBytes);
  const size = Buffer.byteLength(input, 'utf8');
  if (size > maxBytes) tooLarge(size, maxBytes);
  // Decoded bytes are always well formed; a string may carry a raw lone surrogate (RFC 7493 §2.1).
  const at = hasLoneSurrogate(input) ? input.search(LONE_SURROGATE) : -1;
  if (at >= 0) {
    throw new BatonError('json_lone_surrogate', 'JSON text contains a lone surrogate', {
      offset: at,
      byteOffset: Buffer.byteLength(input.slice(0, at), 'utf8'),
    });
  }
  return input;
}

function decodeBytes(input: Uint8Array, maxBytes: number): string {
  if (input.byteLength > maxBytes) tooLarge(input.byteLength, maxBytes);
  try {
    return UTF8.decode(input);
  } catch (cause) {
    // RFC 8259 §8.1: JSON exchanged between systems MUST be UTF-8; nothing is repaired.
    throw new BatonError('json_invalid_encoding', 'JSON input is not valid UTF-8', {}, { cause });
  }
}

function truncateName(name: string): string {
  const codePoints = Array.from(name);
  return codePoints.length <= MEMBER_NAME_DETAIL_LENGTH
    ? name
    : codePoints.slice(0, MEMBER_NAME_DETAIL_LENGTH).join('');
}

/**
 * An own, enumerable data member. Assignment is only used for names Object.prototype does not have:
 * for `__proto__` it would run the setter and replace the prototype, for any other inherited name it
 * could run a setter someone added or fail on a frozen prototype.
 */
function defineMember(target: JsonObject, name: string, value: JsonValue): void {
  if (name in Object.prototype) {
    Object.defineProperty(target, name, { value, writable: true, enumerable: true, configurable: true });
  } else {
    target[name] = value;
  }
}

type Frame =
  | { readonly kind: 'array'; readonly value: JsonArray }
  | { readonly kind: 'object'; readonly value: JsonObject; name: string };

class Parser {
  private pos = 0;
  private readonly stack: Frame[] = [];

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {}

  /** The whole text is exactly one value plus JSON whitespace (RFC 8259 §2). */
  parseText(): JsonValue {
    const value = this.parseValue();
    this.skipWhitespace();
    if (this.pos < this.text.length) this.malformed('unexpected data after the JSON value');
    return value;
  }

  /** Iterative descent: containers live on `this.stack`, so nesting never grows the call stack. */
  private parseValue(): JsonValue {
    for (;;) {
      let value = this.openOrScalar();
      if (value === undefined) continue;
      for (;;) {
        const top = this.stack.at(-1);
        if (top === undefined) return value;
        if (this.addToContainer(top, value)) break;
        this.stack.pop();
        value = top.value;
      }
    }
  }

  /** A complete value, or `undefined` after pushing a non-empty container whose first item comes next. */
  private openOrScalar(): JsonValue | undefined {
    this.skipWhitespace();
    const c = this.text.charCodeAt(this.pos);
    if (c !== OPEN_ARRAY && c !== OPEN_OBJECT) return this.scalar(c);
    if (this.stack.length >= this.maxDepth) {
      throw new BatonError('json_too_deep', `JSON nesting exceeds ${this.maxDepth} levels`, {
        limit: this.maxDepth,
        ...this.position(this.pos),
      });
    }
    this.pos++;
    this.skipWhitespace();
    if (c === OPEN_ARRAY) {
      const array: JsonArray = [];
      if (this.eat(CLOSE_ARRAY)) return array;
      this.stack.push({ kind: 'array', value: array });
      return undefined;
    }
    const object: JsonObject = {};
    if (this.eat(CLOSE_OBJECT)) return object;
    this.stack.push({ kind: 'object', value: object, name: this.memberName(object) });
    return undefined;
  }

  /** Stores `value` in `frame`; true when a comma says another item follows, false when it closed. */
  private addToContainer(frame: Frame, value: JsonValue): boolean {
    if (frame.kind === 'array') frame.value.push(value);
    else defineMember(frame.value, frame.name, value);
    this.skipWhitespace();
    if (this.eat(COMMA)) {
      if (frame.kind === 'object') {
        this.skipWhitespace();
        frame.name = this.memberName(frame.value);
      }
      return true;
    }
    if (this.eat(frame.kind === 'array' ? CLOSE_ARRAY : CLOSE_OBJECT)) return false;
    return this.malformed(frame.kind === 'array' ? "expected ',' or ']'" : "expected ',' or '}'");
  }

  /** A member name and its colon; refuses a name already present (RFC 7493 §2.3, after unescaping). */
  private memberName(object: JsonObject): string {
    const at = this.pos;
    if (this.text.charCodeAt(at) !== QUOTE) this.malformed('expected a member name');
    const name = this.string();
    if (Object.hasOwn(object, name)) {
      throw new BatonError('json_duplicate_member', 'JSON object has a duplicate member name', {
        member: truncateName(name),
        ...this.position(at),
      });
    }
    this.skipWhitespace();
    if (!this.eat(COLON)) this.malformed("expected ':'");
    return name;
  }

  private scalar(c: number): JsonValue {
    if (c === QUOTE) return this.string();
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
    if (this.literal('true')) return true;
    if (this.literal('false')) return false;
    if (this.literal('null')) return null;
    return this.malformed(Number.isNaN(c) ? 'unexpected end of input' : 'expected a JSON value');
  }

  private literal(word: string): boolean {
    if (!this.text.startsWith(word, this.pos)) return false;
    this.pos += word.length;
    return true;
  }

  private number(): number {
    const at = this.pos;
    NUMBER.lastIndex = at;
    const match = NUMBER.exec(this.text);
    if (match === null) return this.malformed('invalid number');
    const token = match[0];
    this.pos = at + token.length;
    const value = Number(token);
    const why = numberProblem(token, value, match[1] === undefined && match[2] === undefined);
    if (why !== undefined) {
      throw new BatonError('json_number_out_of_range', `JSON number ${why}`, this.position(at));
    }
    return value;
  }

  /** A string token starting at the opening quote, unescaped. */
  private string(): string {
    const text = this.text;
    const at = this.pos;
    let i = at + 1;
    let runStart = i;
    let out = '';
    let escapedSurrogate = false;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        out += text.slice(runStart, i);
        const unit = this.escape(i);
        escapedSurrogate ||= unit.length === 1 && (unit.charCodeAt(0) & 0xf800) === 0xd800;
        out += unit;
        i += text.charCodeAt(i + 1) === 0x75 ? 6 : 2;
        runStart = i;
      } else if (c < 0x20 || Number.isNaN(c)) {
        this.pos = i;
        this.malformed(Number.isNaN(c) ? 'unterminated string' : 'control character in string');
      } else {
        i++;
      }
    }
    out += text.slice(runStart, i);
    this.pos = i + 1;
    // Raw text is already well formed, so only \u escapes can leave half a pair (RFC 7493 §2.1).
    if (escapedSurrogate && hasLoneSurrogate(out)) {
      throw new BatonError('json_lone_surrogate', 'JSON string contains a lone surrogate', this.position(at));
    }
    return out;
  }

  /** The text one escape at `i` (the backslash) stands for. */
  private escape(i: number): string {
    const kind = this.text.charAt(i + 1);
    const simple = SIMPLE_ESCAPES[kind];
    if (simple !== undefined) return simple;
    const hex = this.text.slice(i + 2, i + 6);
    if (kind === 'u' && /^[0-9A-Fa-f]{4}$/.test(hex)) return String.fromCharCode(parseInt(hex, 16));
    this.pos = i;
    return this.malformed('invalid escape sequence');
  }

  private skipWhitespace(): void {
    const text = this.text;
    let i = this.pos;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      i++;
    }
    this.pos = i;
  }

  private eat(c: number): boolean {
    if (this.text.charCodeAt(this.pos) !== c) return false;
    this.pos++;
    return true;
  }

  /** Where an error is: `offset` in UTF-16 code units of the text, `byteOffset` in its UTF-8 bytes. */
  private position(offset: number): { offset: number; byteOffset: number } {
    return { offset, byteOffset: Buffer.byteLength(this.text.slice(0, offset), 'utf8') };
  }

  private malformed(why: string): never {
    throw new BatonError('json_malformed', `malformed JSON: ${why}`, this.position(this.pos));
  }
}

/**
 * Why a number literal is refused, or undefined (docs/json.md "Numbers"): a digest over a rounded
 * amount is a digest over a different amount, so nothing is silently rounded to infinity, to zero,
 * or across the integers a double can no longer tell apart.
 */
function numberProblem(token: string, value: number, plainInteger: boolean): string | undefined {
  if (!Number.isFinite(value)) return 'overflows the double range';
  if (value === 0) {
    const mantissa = token.split(/[eE]/)[0] ?? token;
    return NON_ZERO_DIGIT.test(mantissa) ? 'underflows to zero' : undefined;
  }
  const magnitude = Math.abs(value);
  if (magnitude <= MAX_EXACT_INTEGER) return undefined;
  // Below 1e21 every such double is an integer that JCS writes as plain digits: refusing the whole band,
  // whatever the notation, keeps parse(canonicalize(parse(x))) defined.
  if (plainInteger || magnitude < EXPONENT_FORM_FROM) return 'is an integer outside ±(2^53-1)';
  return undefined;
}

/**
 * `line L, column C (byte B)` of a byte offset a parse error names (`details.byteOffset`): lines
 * and columns from 1, the column counted in characters, for messages about a file a person edits.
 */
export function positionIn(bytes: Uint8Array, byteOffset: number): string {
  const end = Math.min(byteOffset, bytes.length);
  let line = 1;
  let start = 0;
  for (let i = 0; i < end; i++) {
    if (bytes[i] === 0x0a) {
      line++;
      start = i + 1;
    }
  }
  const column = [...Buffer.from(bytes.subarray(start, end)).toString('utf8')].length + 1;
  return `line ${line}, column ${column} (byte ${byteOffset})`;
}
