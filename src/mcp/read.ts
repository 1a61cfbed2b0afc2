/**
 * Small strict readers for the gateway's own inputs (the policy document, tool arguments, `_meta`).
 * Each names the path it refuses and never echoes the value, which may be a private request.
 */
import { BatonError, type BatonErrorCode } from '../core/errors.js';
import type { JsonObject, JsonValue } from '../core/json.js';

export class Read {
  constructor(private readonly code: BatonErrorCode) {}

  fail(path: string, why: string): never {
    throw new BatonError(this.code, `${path}: ${why}`, { path });
  }

  /** A plain JSON object with only the allowed members; `required` ones present. */
  object(
    value: unknown,
    path: string,
    required: readonly string[],
    optional: readonly string[] = [],
  ): JsonObject {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      this.fail(path, 'must be an object');
    const o = value as JsonObject;
    for (const key of Object.keys(o)) {
      if (!required.includes(key) && !optional.includes(key))
        this.fail(`${path}.${key}`, 'is not allowed here');
    }
    for (const key of required) if (o[key] === undefined) this.fail(`${path}.${key}`, 'is required');
    return o;
  }

  string(value: unknown, path: string, pattern?: RegExp, max = 512): string {
    if (typeof value !== 'string') this.fail(path, 'must be a string');
    if (value.length === 0 || value.length > max) this.fail(path, `must have 1..${max} characters`);
    if (pattern !== undefined && !pattern.test(value)) this.fail(path, `must match ${pattern.source}`);
    return value;
  }

  integer(value: unknown, path: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
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

  array(value: unknown, path: string, min = 0, max = 64): readonly JsonValue[] {
    if (!Array.isArray(value)) this.fail(path, 'must be an array');
    if (value.length < min || value.length > max) this.fail(path, `must have ${min}..${max} items`);
    return value as JsonValue[];
  }
}

/** Identifier-like names, as the occurrences context accepts them (lineages, profiles, authorities). */
export const NAME = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$/;
