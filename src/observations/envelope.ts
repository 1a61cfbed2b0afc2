/**
 * Signed records (OBS-07, OBS-12, C-B10): the `jws-compact` evidence envelope over the record's
 * JCS without `evidence_envelope`, `typ baton-continuity-observation+json`, EdDSA. A signed record
 * must name its `producer`, `profile`, `audience`, `issued_at` and `expires_at`; the verifier
 * checks each of them against its own expectations before it accepts anything.
 */
import type { KeyObject } from 'node:crypto';
import {
  BatonError,
  parseRfc3339,
  signEvidenceEnvelope,
  verifyEvidenceEnvelope,
  type VerificationKey,
} from '../core/index.js';
import {
  OBSERVATION_JWS_TYP,
  OBSERVATION_PROFILE,
  type ObservationRecord,
  type ReadReport,
} from './model.js';
import { readRecordValue, type ReadOptions } from './parse.js';

/** Tolerated clock skew for `issued_at` in the future (B2: issued_at ≤ now + 30 s). */
export const ISSUED_AT_SKEW_MS = 30_000;

const SIGNED_MEMBERS = ['producer', 'profile', 'audience', 'issued_at', 'expires_at'] as const;

function refuseSigned(path: string, message: string): never {
  throw new BatonError('observation_record_invalid', `${path} ${message}`, { rule: 'envelope', path });
}

function requireSignedMembers(r: ObservationRecord): void {
  for (const name of SIGNED_MEMBERS) {
    if (r[name] === undefined) refuseSigned(`$.${name}`, 'is required in a signed record');
  }
}

export async function signRecord(
  record: ObservationRecord,
  privateKey: KeyObject,
): Promise<ObservationRecord> {
  const { record: checked } = readRecordValue(record);
  if (checked.evidence_envelope !== undefined)
    refuseSigned('$.evidence_envelope', 'the record is already signed');
  requireSignedMembers(checked);
  const signed = await signEvidenceEnvelope({ ...checked }, privateKey, {
    typ: OBSERVATION_JWS_TYP,
  });
  return signed;
}

export interface VerifyOptions extends ReadOptions {
  readonly key: VerificationKey;
  /** Who this verifier is: the record's `audience` must equal it. */
  readonly audience: string;
  /** Producers this verifier accepts (namespace check, OBS-12); absent = any. */
  readonly producers?: readonly string[];
  readonly now: number;
}

/** Verify a signed record end to end; an unsigned record is refused (it crossed a boundary). */
export async function verifyRecord(value: unknown, options: VerifyOptions): Promise<ReadReport> {
  const report = readRecordValue(value, options);
  const r = report.record;
  if (r.evidence_envelope === undefined)
    refuseSigned('$.evidence_envelope', 'an unsigned record is not accepted across a boundary');
  requireSignedMembers(r);
  if (r.profile !== OBSERVATION_PROFILE) refuseSigned('$.profile', 'is not a profile this verifier accepts');
  if (options.producers !== undefined && !options.producers.includes(r.producer ?? '')) {
    refuseSigned('$.producer', 'is not a producer this verifier accepts');
  }
  if (r.audience !== options.audience) refuseSigned('$.audience', 'does not name this verifier');
  if (parseRfc3339(r.issued_at ?? '', '$.issued_at') > options.now + ISSUED_AT_SKEW_MS)
    refuseSigned('$.issued_at', 'is in the future');
  if (parseRfc3339(r.expires_at ?? '', '$.expires_at') <= options.now)
    refuseSigned('$.expires_at', 'has passed: the record is stale');
  await verifyEvidenceEnvelope(r, options.key, { typ: OBSERVATION_JWS_TYP });
  return report;
}
