/**
 * Small strict readers for parsed JSON input (the output of core's parseStrictJson or an object a
 * caller built). Every reader names the path it refuses; messages never echo the value itself,
 * which may be a secret or part of a private request.
 */
import { BatonError } from '../core/errors.js';
import type { BatonErrorCode } from '../core/errors.js';

export type Fields = Readonly<Record<string, unknown>>;

/**
 * One policy for every text Baton keeps (docs/api.md "Text"): U+0000 is refused at input
 * validation, on every field of every command and inside the documents a command carries —
 * PostgreSQL's TEXT cannot hold it and SQLite's can, so accepting it would make the two engines
 * disagree (one stores, the other fails), and a NUL is never meaningful in a name or a request.
 */
export const NUL = '\u0000';
const NUL_REFUSED = 'must not contain U+0000';

export class Reader {
  constructor(private readonly code: BatonErrorCode) {}

  fail(path: string, why: string): never {
    throw new BatonError(this.code, `${path}: ${why}`, { path });
  }

  /** A plain object with exactly the allowed members; `required` ones must be present. */
  object(
    value: unknown,
    path: string,
    required: readonly string[],
    optional: readonly string[] = [],
  ): Fields {
    const fields = this.anyObject(value, path);
    for (const key of Object.keys(fields)) {
      if (!required.includes(key) && !optional.includes(key))
        this.fail(`${path}.${key}`, 'is not allowed here');
    }
    for (const key of required) {
      if (!Object.hasOwn(fields, key) || fields[key] === undefined)
        this.fail(`${path}.${key}`, 'is required');
    }
    return fields;
  }

  /** A plain object with any members (a provider request: the profile's reader checks them). */
  anyObject(value: unknown, path: string): Fields {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      this.fail(path, 'must be an object');
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) this.fail(path, 'must be a plain object');
    return value as Fields;
  }

  string(value: unknown, path: string, pattern?: RegExp, max = 512): string {
    if (typeof value !== 'string') this.fail(path, 'must be a string');
    if (value.length === 0 || value.length > max) this.fail(path, `must have 1..${max} characters`);
    if (!value.isWellFormed()) this.fail(path, 'must be well-formed Unicode');
    if (value.includes(NUL)) this.fail(path, NUL_REFUSED);
    if (pattern !== undefined && !pattern.test(value)) this.fail(path, `must match ${pattern.source}`);
    return value;
  }

  optionalString(value: unknown, path: string, pattern?: RegExp, max = 512): string | undefined {
    return value === undefined ? undefined : this.string(value, path, pattern, max);
  }

  integer(value: unknown, path: string, min: number, max: number = Number.MAX_SAFE_INTEGER): number {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) this.fail(path, 'must be an integer');
    if (value < min || value > max) this.fail(path, `must be between ${min} and ${max}`);
    return value;
  }

  boolean(value: unknown, path: string): boolean {
    if (typeof value !== 'boolean') this.fail(path, 'must be true or false');
    return value;
  }

  oneOf<T extends string>(value: unknown, path: string, allowed: readonly T[]): T {
    if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
      this.fail(path, `must be one of ${allowed.join(', ')}`);
    }
    return value as T;
  }

  /**
   * Refuse U+0000 in every string and member name inside a JSON document (a provider request, a
   * profile): docs/api.md "Text". Iterative, so a deep document cannot exhaust the stack.
   */
  noNul(value: unknown, path: string): void {
    const stack: [unknown, string][] = [[value, path]];
    for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
      const [v, at] = item;
      if (typeof v === 'string') {
        if (v.includes(NUL)) this.fail(at, NUL_REFUSED);
      } else if (Array.isArray(v)) {
        v.forEach((x, i) => stack.push([x, `${at}[${i}]`]));
      } else if (typeof v === 'object' && v !== null) {
        for (const [k, x] of Object.entries(v)) {
          if (k.includes(NUL)) this.fail(at, `a member name ${NUL_REFUSED}`);
          stack.push([x, `${at}.${k}`]);
        }
      }
    }
  }

  array(value: unknown, path: string, min = 0, max = 1000): readonly unknown[] {
    if (!Array.isArray(value)) this.fail(path, 'must be an array');
    if (value.length < min || value.length > max) this.fail(path, `must have ${min}..${max} items`);
    return value as readonly unknown[];
  }
}

/** Identifier-like names: lineages, profile ids, authority ids, creation keys (src/core/names.ts). */
export { NAME } from '../core/names.js';
