/**
 * The strict reader (OBS-09, OBS-27, B3.1): the whole input is one record, validated in the
 * spec's order, the first failure named by code, rule and JSON path. Nothing is extracted from
 * prose: trailing text, a second object or a BOM is a byte-level refusal (parseStrictJson).
 */
import { BatonError, isBatonError, parseStrictJson, type JsonValue } from '../core/index.js';
import type { ObservationRecord, ReadReport } from './model.js';
import { refuse } from './refusal.js';
import { checkDigests, checkEnums, checkProfile, checkSemantics, checkTimes } from './rules.js';
import { checkShape } from './shape.js';

/** Locators Baton regards as its own; anything else is flagged and never fetched (B5, OBS-12). */
export const DEFAULT_APPROVED_LOCATOR_PREFIXES: readonly string[] = ['urn:baton:'];

export interface ReadOptions {
  readonly approvedLocatorPrefixes?: readonly string[];
  /**
   * The most bytes the input may hold (default the strict parser's, 1 MiB). The HTTP route passes
   * `Infinity`: its bytes were already bounded by the server's body limit (413 before it runs).
   */
  readonly maxBytes?: number;
}

function parseBytes(input: string | Uint8Array, maxBytes: number | undefined): JsonValue {
  try {
    return parseStrictJson(input, maxBytes === undefined ? {} : { maxBytes });
  } catch (error) {
    if (!isBatonError(error)) throw error;
    const member = typeof error.details['member'] === 'string' ? `.${error.details['member']}` : '';
    throw new BatonError(
      'observation_record_invalid',
      `the record is not one strict JSON text (${error.code})`,
      {
        rule: 'bytes',
        path: `$${member}`,
        json: error.code,
        ...(typeof error.details['offset'] === 'number' && { offset: error.details['offset'] }),
      },
      // The parser's refusal, with its byte offset, for a reader that names where the bytes stop.
      { cause: error },
    );
  }
}

/** Validate a parsed value (passes 2–7). */
export function readRecordValue(value: unknown, options: ReadOptions = {}): ReadReport {
  checkShape(value);
  const record = value as ObservationRecord;
  checkProfile(record);
  checkEnums(record);
  checkSemantics(record);
  checkTimes(record);
  checkDigests(record);
  const prefixes = options.approvedLocatorPrefixes ?? DEFAULT_APPROVED_LOCATOR_PREFIXES;
  const unapprovedLocators = record.evidence
    .map((e, i) => ({ e, path: `$.evidence[${i}].locator` }))
    .filter(({ e }) => !prefixes.some((p) => e.locator.startsWith(p)))
    .map(({ path }) => path);
  return {
    record,
    uninterpreted: Object.keys(record.extensions ?? {}).filter((n) => !(record.crit ?? []).includes(n)),
    unapprovedLocators,
  };
}

/** Validate record bytes (passes 1–7). Envelope and uniqueness are checked by envelope.ts and the store. */
export function readRecord(input: string | Uint8Array, options: ReadOptions = {}): ReadReport {
  const value = parseBytes(input, options.maxBytes);
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    refuse('type', '$', 'must be an object');
  return readRecordValue(value, options);
}
