/** Shared by the strict-JSON tests: run the parser and say what happened, never letting a crash pass. */
import assert from 'node:assert/strict';
import { BatonError } from '../../src/core/errors.js';
import type { BatonErrorCode } from '../../src/core/errors.js';
import { parseStrictJson } from '../../src/core/json.js';
import type { JsonLimits, JsonValue } from '../../src/core/json.js';

export type Outcome =
  { readonly ok: true; readonly value: JsonValue } | { readonly ok: false; readonly error: BatonError };

/** The outcome of parsing; anything thrown that is not a BatonError with a json_* code fails the test. */
export function outcome(input: string | Uint8Array, limits?: JsonLimits): Outcome {
  try {
    return { ok: true, value: parseStrictJson(input, limits) };
  } catch (error) {
    assert.ok(error instanceof BatonError, `not a BatonError: ${String(error)}`);
    assert.match(error.code, /^json_/, `unexpected code ${error.code}`);
    return { ok: false, error };
  }
}

/** Parse and require a refusal with `code`; returns the error for further checks. */
export function refusal(input: string | Uint8Array, code: BatonErrorCode, limits?: JsonLimits): BatonError {
  const result = outcome(input, limits);
  assert.ok(!result.ok, `expected ${code}, but the input was accepted`);
  assert.equal(result.error.code, code, result.error.message);
  return result.error;
}

/** Parse and require acceptance. */
export function accepted(input: string | Uint8Array, limits?: JsonLimits): JsonValue {
  const result = outcome(input, limits);
  if (!result.ok) assert.fail(`expected acceptance, got ${result.error.code}: ${result.error.message}`);
  return result.value;
}
