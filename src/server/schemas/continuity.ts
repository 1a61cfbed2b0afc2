/**
 * JSON schemas of the continuity routes (B2, B6). The record schema is the Baton binding
 * (`urn:baton:continuity-observation:1`), closed at every level; request bodies are checked by the
 * strict reader itself so each refusal keeps its rule and JSON path (B3.1).
 */
import { MAX_PRODUCER_ID, MAX_RECORD_ID, OBSERVATION_PROFILE } from '../../observations/index.js';
import { anyObject, array, bool, count, nullable, object, oneOf, type Schema } from './common.js';

const str: Schema = { type: 'string' };
const nstr = nullable(str);
const strings = array(str);

const byteDigest: Schema = object({
  algorithm: oneOf(['sha-256']),
  representation: str,
  artifact: str,
  value: str,
});

export const continuityRecord: Schema = {
  ...object(
    {
      version: oneOf(['1']),
      profile: oneOf([OBSERVATION_PROFILE]),
      producer: { type: 'string', minLength: 1, maxLength: MAX_PRODUCER_ID },
      record_id: { type: 'string', minLength: 1, maxLength: MAX_RECORD_ID },
      run_id: nstr,
      event_type: str,
      scope_id: str,
      authority_epoch: { anyOf: [{ type: 'integer', minimum: 0 }, { type: 'string' }, { type: 'null' }] },
      source_runtime: nstr,
      destination_runtime: nstr,
      observed_at: { type: 'string', format: 'date-time' },
      order: object({ domain: str, sequence: nstr, uncertainty_ms: nullable(count) }),
      invariants: array(
        object({
          dimension: str,
          status: oneOf(['MATCH', 'MISMATCH', 'UNKNOWN', 'NOT_APPLICABLE']),
          reference: nstr,
          reason: nstr,
        }),
      ),
      evidence: array(
        object({ locator: str, method: str, verification: str, byte_digest: nullable(byteDigest) }),
      ),
      outcome: object(
        {
          proposal: nstr,
          admission: nstr,
          effect: nstr,
          attempt: nstr,
          decision: nstr,
          commitment: nstr,
          settlement: nstr,
          operation_ref: nstr,
          decision_ref: nstr,
        },
        ['attempt', 'decision', 'commitment', 'settlement', 'operation_ref', 'decision_ref'],
      ),
      limitations: strings,
      supersedes: nstr,
      analysis_revision: str,
      classification: str,
      lineage: object({ parents: strings, actions: strings, coverage: nstr }),
      references: array(object({ type: str, digest: str, locator: str })),
      colocated_roles: strings,
      independence_claimed: bool,
      audience: str,
      issued_at: str,
      expires_at: str,
      extensions: anyObject,
      crit: strings,
      evidence_envelope: object({ format: oneOf(['jws-compact']), value: str }),
    },
    [
      'profile',
      'producer',
      'supersedes',
      'analysis_revision',
      'classification',
      'lineage',
      'references',
      'colocated_roles',
      'independence_claimed',
      'audience',
      'issued_at',
      'expires_at',
      'extensions',
      'crit',
      'evidence_envelope',
    ],
  ),
  description: 'A continuity observation record (application/baton-continuity-observation+json)',
};

/** The POST body: a record, read by Baton's strict reader (so its rules keep their codes and paths). */
export const recordBody: Schema = { ...anyObject, description: continuityRecord['description'] };

const stored: Schema = object({
  producer: str,
  record_id: str,
  digest: str,
  signed: bool,
  created_at: count,
  record: continuityRecord,
});
export const storedRecord: Schema = stored;
export const recordChain: Schema = object({ record: stored, corrections: array(stored) });
/**
 * The reader's flags travel with the answer (B7-4, B7-15, OBS-12): JSON paths of evidence
 * locators outside the approved prefixes (never fetched) and extension names kept uninterpreted.
 */
export const submitResult: Schema = object({
  status: oneOf(['created', 'exists']),
  record: stored,
  unapprovedLocators: array(str),
  uninterpreted: array(str),
});

const rational: Schema = object({ numerator: str, denominator: str, decimal: str });
export const ficResult: Schema = object({
  n: count,
  v: count,
  value: nullable(rational),
  reason: nullable(oneOf(['undefined_n_zero'])),
  universe: nullable(count),
  q: nullable(rational),
  global_bound: nullable(object({ lower: rational, upper: rational })),
  global_reason: nullable(oneOf(['universe_unknown', 'undefined_n_zero'])),
  sample: nullable(object({ size: count, seed: str })),
  audited_all: bool,
  failures: array(object({ occurrence: str, failed: array(oneOf(['C1', 'C2', 'C3', 'C4', 'C5'])) })),
});
const tally: Schema = object({
  match: count,
  mismatch: count,
  unknown: count,
  d: nullable(rational),
  unresolved: bool,
});
export const cifResult: Schema = object({
  complete: bool,
  value: nullable(rational),
  unresolved: strings,
  per_dimension: { type: 'object', additionalProperties: tally },
  conflicting: strings,
  producer_key_unpinned: strings,
  not_reverified: strings,
  weights_version: str,
  profile: object({ id: str, version: str, digest: str }),
  authorizes: { type: 'boolean', enum: [false] },
});
export const profileResult: Schema = object({
  id: str,
  version: str,
  digest: str,
  status: oneOf(['created', 'exists']),
});
export const coverageReport: Schema = {
  ...anyObject,
  description: 'The continuity report (baton.continuity-report/1), as `baton report --format json` writes it',
};

export const recordQuery: Schema = object({ producer: str, id: str });
export const ficQuery: Schema = object(
  {
    lineage: str,
    from: { type: 'string', format: 'date-time' },
    to: { type: 'string', format: 'date-time' },
    sample: { type: 'string', pattern: '^[0-9]{1,9}$' },
    seed: str,
  },
  ['lineage', 'from', 'to', 'sample', 'seed'],
);
/**
 * `verify`: `full` (the default) re-derives every record; `incremental` re-derives only what changed
 * and counts the records it did not re-verify UNKNOWN.
 */
export const cifQuery: Schema = object({ profile: str, verify: oneOf(['full', 'incremental']) }, [
  'profile',
  'verify',
]);
