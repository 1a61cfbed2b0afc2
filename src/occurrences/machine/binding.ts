/**
 * AOC-REQ-003 / AOC-REQ-010 / AOC-CASE-007: every later admission, release or reconciliation must
 * match the immutable provider binding. A caller that names a binding field names it exactly.
 */
import type { OccurrenceRecord } from '../model.js';
import type { Rejection } from './common.js';
import { reject } from './common.js';

export interface ExpectedBinding {
  readonly profileId?: string;
  readonly profileVersion?: string;
  readonly account?: string;
  readonly environment?: string;
  readonly requestDigest?: string;
  readonly nativeKey?: string;
  readonly providerReference?: string;
}

export const EXPECTED_BINDING_FIELDS = [
  'profileId',
  'profileVersion',
  'account',
  'environment',
  'requestDigest',
  'nativeKey',
  'providerReference',
] as const satisfies readonly (keyof ExpectedBinding)[];

export function checkExpectedBinding(o: OccurrenceRecord, expected: ExpectedBinding): Rejection | undefined {
  for (const field of EXPECTED_BINDING_FIELDS) {
    const want = expected[field];
    if (want !== undefined && o.provider[field] !== want) {
      return reject(
        'provider_binding_conflict',
        `the ${field} differs from the occurrence's provider binding`,
        {
          field,
        },
      );
    }
  }
  return undefined;
}
