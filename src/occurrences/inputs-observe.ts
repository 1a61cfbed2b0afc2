/**
 * The observation input (AOC-REQ-009). It comes from Baton's own trusted status-source layer
 * (src/providers), which checks signatures against the profile's pins and states the verdict in
 * `authentication`. The service trusts that verdict only because it trusts that caller: the HTTP
 * API must never accept an observation, or its `authentication`, from an executor.
 */
import type { JsonValue } from '../core/json.js';
import { parseRfc3339 } from '../core/time.js';
import { ACKNOWLEDGEMENT_SOURCE, MAX_ALSO_MATCHED, OBSERVATION_RESULTS } from './machine/assess.js';
import type { CarriedBinding, MatchedItem, ObservationCommand, ObservationResult } from './machine/assess.js';
import { NAME, Reader } from './validate.js';

const r: Reader = new Reader('observation_invalid');
const STATUS = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}$/;

export interface ObservationInput {
  readonly occurrenceId: string;
  /** A status source id of the occurrence's profile. */
  readonly source: string;
  /** When the provider answered: RFC 3339 text or integer epoch milliseconds. */
  readonly observedAt: string | number;
  readonly result: ObservationResult;
  readonly nativeStatus?: string;
  /** The provider's answer as JSON; kept, or only digested when the profile marks requests private. */
  readonly response?: JsonValue;
  readonly authentication: { readonly verified: boolean; readonly pin?: string };
  /** The binding fields the answer itself carried. */
  readonly carried: Partial<CarriedBinding>;
  /** For listings: whether every page was read. Defaults to false (absence then proves nothing). */
  readonly complete?: boolean;
  /**
   * For listings: the answer's OTHER items that match the occurrence (at most MAX_ALSO_MATCHED).
   * All are judged together, whatever their order (AOC-CASE-009, docs/occurrences.md).
   */
  readonly alsoMatched?: readonly {
    readonly nativeStatus?: string;
    readonly carried: Partial<CarriedBinding>;
  }[];
}

export type AcknowledgementInput = Omit<ObservationInput, 'source'>;

const CARRIED = ['account', 'environment', 'requestDigest', 'nativeKey', 'providerReference'] as const;

function readTime(value: unknown): number {
  if (typeof value === 'number') return r.integer(value, '$.observedAt', 0);
  if (typeof value !== 'string')
    r.fail('$.observedAt', 'must be an RFC 3339 date-time or epoch milliseconds');
  try {
    return parseRfc3339(value);
  } catch {
    return r.fail('$.observedAt', 'must be an RFC 3339 date-time');
  }
}

function readCarried(value: unknown, at = '$.carried'): CarriedBinding {
  const f = r.object(value, at, [], [...CARRIED, 'amount', 'unit']);
  const get = (k: (typeof CARRIED)[number]): string | null =>
    r.optionalString(f[k], `${at}.${k}`, undefined, 512) ?? null;
  // Only when stated: format 1 observations keep their evidence bodies exactly as before.
  const amount = f['amount'] === undefined ? {} : { amount: r.integer(f['amount'], `${at}.amount`, 0) };
  const unit = f['unit'] === undefined ? {} : { unit: r.string(f['unit'], `${at}.unit`, undefined, 64) };
  return {
    ...amount,
    ...unit,
    account: get('account'),
    environment: get('environment'),
    requestDigest: get('requestDigest'),
    nativeKey: get('nativeKey'),
    providerReference: get('providerReference'),
  };
}

function readAlsoMatched(value: unknown): MatchedItem[] {
  if (value === undefined) return [];
  return r.array(value, '$.alsoMatched', 0, MAX_ALSO_MATCHED).map((item, n) => {
    const f = r.object(item, `$.alsoMatched[${n}]`, ['carried'], ['nativeStatus']);
    return {
      nativeStatus: r.optionalString(f['nativeStatus'], `$.alsoMatched[${n}].nativeStatus`, STATUS) ?? null,
      carried: readCarried(f['carried'], `$.alsoMatched[${n}].carried`),
    };
  });
}

export function readObservation(input: unknown, acknowledgement = false): ObservationCommand {
  const required = ['occurrenceId', 'observedAt', 'result', 'authentication', 'carried'];
  const f = r.object(input, '$', acknowledgement ? required : [...required, 'source'], [
    'nativeStatus',
    'response',
    'complete',
    ...(acknowledgement ? [] : ['alsoMatched']),
  ]);
  const result = r.oneOf(f['result'], '$.result', OBSERVATION_RESULTS);
  const alsoMatched = readAlsoMatched(f['alsoMatched']);
  if (alsoMatched.length > 0 && result !== 'found')
    r.fail('$.alsoMatched', 'is only allowed for a found result');
  const nativeStatus = r.optionalString(f['nativeStatus'], '$.nativeStatus', STATUS) ?? null;
  if (result === 'found' && nativeStatus === null) r.fail('$.nativeStatus', 'is required for a found result');
  if (result !== 'found' && nativeStatus !== null)
    r.fail('$.nativeStatus', 'is only allowed for a found result');
  const auth = r.object(f['authentication'], '$.authentication', ['verified'], ['pin']);
  const source = acknowledgement ? ACKNOWLEDGEMENT_SOURCE : r.string(f['source'], '$.source', NAME);
  if (!acknowledgement && source === ACKNOWLEDGEMENT_SOURCE) r.fail('$.source', 'use recordAcknowledgement');
  return {
    occurrenceId: r.string(f['occurrenceId'], '$.occurrenceId', NAME),
    source,
    observedAt: readTime(f['observedAt']),
    result,
    nativeStatus,
    response: f['response'] === undefined ? null : (f['response'] as JsonValue),
    authentication: {
      verified: r.boolean(auth['verified'], '$.authentication.verified'),
      pin: r.optionalString(auth['pin'], '$.authentication.pin') ?? null,
    },
    carried: readCarried(f['carried']),
    complete: f['complete'] === undefined ? false : r.boolean(f['complete'], '$.complete'),
    alsoMatched,
  };
}
