/**
 * Measurement profiles (OBS-01, OBS-29, B5): `baton.measurement-profile/1` documents, pinned by
 * the digest of their JCS. Per evaluated dimension: expected invariant, reference evidence,
 * window, coding rules, tolerances and authorized updates; plus the CIF weights (exact decimal
 * strings, OBS-14) and which dimensions are required.
 */
import { BatonError, digestJcs, parseStrictJson, type Sha256Digest } from '../core/index.js';
import { DIMENSIONS, type Dimension } from './model.js';
import { parseWeights, type Weights } from './weights.js';

export const MEASUREMENT_PROFILE_TYPE = 'baton.measurement-profile/1';

export interface DimensionProfile {
  readonly invariant: string;
  readonly reference_evidence: string;
  readonly window: string;
  readonly coding_rules: string;
  readonly tolerances: string;
  readonly authorized_updates: readonly string[];
}

export interface MeasurementProfile {
  readonly type: typeof MEASUREMENT_PROFILE_TYPE;
  readonly id: string;
  readonly version: string;
  readonly dimensions: Readonly<Partial<Record<Dimension, DimensionProfile>>>;
  readonly required: readonly Dimension[];
  readonly weights: Readonly<Record<string, string>>;
  readonly weights_version: string;
}

export interface PinnedProfile {
  readonly profile: MeasurementProfile;
  readonly digest: Sha256Digest;
  readonly weights: Weights;
}

const TEXT_MEMBERS = ['invariant', 'reference_evidence', 'window', 'coding_rules', 'tolerances'] as const;
const TOP = ['type', 'id', 'version', 'dimensions', 'required', 'weights', 'weights_version'];

function bad(path: string, message: string): never {
  throw new BatonError('input_invalid', `measurement profile ${path} ${message}`, { path });
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function closed(value: unknown, names: readonly string[], path: string): Record<string, unknown> {
  if (!isObject(value)) bad(path, 'must be an object');
  for (const n of Object.keys(value)) if (!names.includes(n)) bad(`${path}.${n}`, 'is not a member');
  for (const n of names) if (!Object.hasOwn(value, n)) bad(`${path}.${n}`, 'is required');
  return value;
}

function text(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.length === 0) bad(path, 'must be a non-empty string');
  return value;
}

function readDimension(value: unknown, path: string): DimensionProfile {
  const o = closed(value, [...TEXT_MEMBERS, 'authorized_updates'], path);
  for (const n of TEXT_MEMBERS) text(o[n], `${path}.${n}`);
  const updates = o['authorized_updates'];
  if (!Array.isArray(updates)) bad(`${path}.authorized_updates`, 'must be an array');
  updates.forEach((u, i) => text(u, `${path}.authorized_updates[${i}]`));
  return o as unknown as DimensionProfile;
}

/** Read and pin a measurement profile (strict JSON text or a parsed value). */
export function readMeasurementProfile(input: string | Uint8Array | Record<string, unknown>): PinnedProfile {
  const value = typeof input === 'string' || input instanceof Uint8Array ? parseStrictJson(input) : input;
  const o = closed(value, TOP, '$');
  if (o['type'] !== MEASUREMENT_PROFILE_TYPE) bad('$.type', `must be ${MEASUREMENT_PROFILE_TYPE}`);
  text(o['id'], '$.id');
  text(o['version'], '$.version');
  text(o['weights_version'], '$.weights_version');
  if (!isObject(o['dimensions'])) bad('$.dimensions', 'must be an object');
  for (const [name, d] of Object.entries(o['dimensions'])) {
    if (!(DIMENSIONS as readonly string[]).includes(name)) bad(`$.dimensions.${name}`, 'is not a dimension');
    readDimension(d, `$.dimensions.${name}`);
  }
  const required = o['required'];
  if (!Array.isArray(required)) bad('$.required', 'must be an array');
  required.forEach((r, i) => {
    if (typeof r !== 'string' || !Object.hasOwn(o['dimensions'] as object, r)) {
      bad(`$.required[${i}]`, 'must name a dimension the profile defines');
    }
  });
  const weights = parseWeights(o['weights']);
  for (const name of weights.names) {
    if (!Object.hasOwn(o['dimensions'], name))
      bad(`$.weights.${name}`, 'weighs a dimension the profile does not define');
  }
  // ¶27 (OBS-14, B3.6): CIF = Σ wᵢdᵢ over the weighted dimensions, and an unresolved required
  // dimension makes the score incomplete. A required dimension without a weight would never be
  // looked at, so its UNKNOWNs could not leave the score incomplete: such a profile is refused (a
  // weight of "0" states the choice explicitly and keeps the dimension in the completeness test).
  required.forEach((r, i) => {
    if (!weights.names.includes(r as string)) bad(`$.required[${i}]`, 'must be a weighted dimension');
  });
  const profile = o as unknown as MeasurementProfile;
  return { profile, digest: digestJcs(profile), weights };
}

/**
 * Baton's namespace is closed to registered profiles (OBS-29: a profile defines what is
 * permissible; OBS-08: Baton's own ids are Baton's). `urn:baton:…` (compared without case, RFC
 * 8141) names Baton's built-in profiles: one pinned under such an id would never be used (the
 * built-in answers for it) or would pose as Baton's. Refused with `input_invalid` at `$.id`.
 */
export function refuseReservedProfileId(profile: Pick<MeasurementProfile, 'id'>): void {
  if (profile.id.toLowerCase().startsWith('urn:baton:')) {
    bad('$.id', 'is in Baton’s own namespace (urn:baton:), reserved for its built-in profiles');
  }
}

/** Baton's own profile for automatic handoff records (B3.3): what each dimension means there. */
export const HANDOFF_PROFILE: MeasurementProfile = {
  type: MEASUREMENT_PROFILE_TYPE,
  id: 'urn:baton:measurement-profile:handoff',
  version: '2',
  dimensions: {
    state: {
      invariant: 'the successor is delivered exactly the lineage’s open occurrences',
      reference_evidence: 'occurrence chains of the lineage up to the takeover seq',
      window: 'the takeover transaction',
      coding_rules:
        'MATCH iff delivered.reserved ∪ delivered.unresolved = the open set at that seq; UNKNOWN evidence_chain_unverified when the lineage chain or one of its occurrence chains does not verify',
      tolerances: 'none',
      authorized_updates: [],
    },
    memory: {
      invariant: 'executor memory and context carried over',
      reference_evidence: 'none: Baton does not observe executor memory',
      window: 'the takeover',
      coding_rules: 'always UNKNOWN',
      tolerances: 'none',
      authorized_updates: [],
    },
    policy: {
      invariant: 'open occurrences’ provider profiles stay registered; domain changes are configured',
      reference_evidence: 'profile_registered and domain_configured events',
      window: 'since the previous generation',
      coding_rules:
        'MATCH (authorized_update when the domain was reconfigured); MISMATCH for an unregistered profile digest; UNKNOWN evidence_chain_unverified when the lineage, an occurrence or the domain chain does not verify',
      tolerances: 'none',
      authorized_updates: ['domain_configured'],
    },
    authority: {
      invariant: 'takeover does not replenish or move authority',
      reference_evidence:
        'the generation_advanced event and authority:* events with its instant and actor (the log records no transaction identity)',
      window: 'the takeover transaction',
      coding_rules:
        'MATCH iff no authority:* event shares the takeover’s instant and actor (then its transaction wrote none); else UNKNOWN transaction_unidentified; UNKNOWN evidence_chain_unverified when the lineage chain does not verify',
      tolerances: 'none',
      authorized_updates: [],
    },
    lineage: {
      invariant: 'the generation advances by exactly one and the lineage chain verifies',
      reference_evidence: 'the lineage evidence chain',
      window: 'the lineage’s whole chain',
      coding_rules: 'MATCH iff generation = retiredGeneration + 1 and the chain verifies',
      tolerances: 'none',
      authorized_updates: [],
    },
  },
  required: ['state', 'policy', 'authority', 'lineage'],
  weights: { state: '0.25', policy: '0.25', authority: '0.25', lineage: '0.25' },
  weights_version: 'urn:baton:weights:handoff:1',
};
