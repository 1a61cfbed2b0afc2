/**
 * The `jws-compact` evidence envelope (DESIGN.md §5; docs/crypto.md "Evidence envelope"). Harness
 * Evidence defines no integrity envelope, so Baton reuses the Mission companion drafts' one
 * (AuthZEN Decision/Execution Evidence, Orchestration Evidence):
 *
 *   { ...object, "evidence_envelope": { "format": "jws-compact", "value": "<compact JWS>" } }
 *
 * The JWS is ATTACHED: its payload is the JCS (RFC 8785) bytes of the object without the envelope
 * member. Verification removes the member again, recomputes the JCS and requires it to equal the
 * signed payload, so a changed, added or removed member fails. The protected header carries the
 * object's media type as `typ`, so one kind of evidence cannot pass for another.
 */
import type { KeyObject } from 'node:crypto';
import { BatonError } from './errors.js';
import { canonicalBytes } from './jcs.js';
import { signJws, verifyJws, type JwsAlgorithm, type VerificationKey, type VerifiedHeader } from './jose.js';

export const EVIDENCE_ENVELOPE_MEMBER = 'evidence_envelope';
export const EVIDENCE_ENVELOPE_FORMAT = 'jws-compact';
/** Default `typ`; callers should pass the media type of the evidence kind they sign. */
export const DEFAULT_EVIDENCE_TYP = 'application/baton-evidence+json';

export interface EvidenceEnvelope {
  format: typeof EVIDENCE_ENVELOPE_FORMAT;
  value: string;
}

export interface EvidenceEnvelopeOptions<M extends string = typeof EVIDENCE_ENVELOPE_MEMBER> {
  member?: M;
  typ?: string;
}

export interface VerifyEvidenceEnvelopeOptions<M extends string> extends EvidenceEnvelopeOptions<M> {
  algorithms?: readonly JwsAlgorithm[];
}

export interface VerifiedEvidence {
  /** The object without its envelope member: exactly what was signed. */
  content: Record<string, unknown>;
  header: VerifiedHeader;
}

type JsonRecord = Readonly<Record<string, unknown>>;

function invalid(message: string, details: Record<string, unknown> = {}): never {
  throw new BatonError('evidence_envelope_invalid', message, details);
}

function assertPlainObject(value: unknown): asserts value is JsonRecord {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    invalid('evidence must be a JSON object');
}

function withoutMember(object: JsonRecord, member: string): Record<string, unknown> {
  // fromEntries defines own data properties, so a member named "__proto__" stays a member.
  return Object.fromEntries(Object.entries(object).filter(([name]) => name !== member));
}

/** Sign `object` and return a copy carrying the envelope in `member` (default "evidence_envelope"). */
export async function signEvidenceEnvelope<
  T extends JsonRecord,
  M extends string = typeof EVIDENCE_ENVELOPE_MEMBER,
>(
  object: T,
  privateKey: KeyObject,
  options: EvidenceEnvelopeOptions<M> = {},
): Promise<T & { [K in M]: EvidenceEnvelope }> {
  assertPlainObject(object);
  const member = options.member ?? EVIDENCE_ENVELOPE_MEMBER;
  if (Object.hasOwn(object, member)) invalid('object already carries an envelope member', { member });
  const value = await signJws(canonicalBytes(object), privateKey, {
    typ: options.typ ?? DEFAULT_EVIDENCE_TYP,
  });
  const envelope: EvidenceEnvelope = { format: EVIDENCE_ENVELOPE_FORMAT, value };
  return { ...object, [member]: envelope };
}

function readEnvelope(object: JsonRecord, member: string): string {
  if (!Object.hasOwn(object, member)) invalid('evidence has no envelope member', { member });
  const envelope = object[member];
  assertPlainObject(envelope);
  const names = Object.keys(envelope).sort();
  if (names.length !== 2 || names[0] !== 'format' || names[1] !== 'value') {
    invalid('envelope must have exactly "format" and "value"', { member });
  }
  // The drafts: implementations MUST reject envelopes with unsupported formats.
  if (envelope['format'] !== EVIDENCE_ENVELOPE_FORMAT) invalid('unsupported envelope format', { member });
  const value = envelope['value'];
  if (typeof value !== 'string' || !/^[\w-]+\.[\w-]+\.[\w-]+$/.test(value)) {
    invalid('envelope value must be an attached compact JWS', { member });
  }
  return value;
}

/**
 * Verify an enveloped object: well-formed envelope, JWS signature under the allowlist (default
 * EdDSA), kid rule, `typ`, and signed payload == JCS(object without the envelope member).
 */
export async function verifyEvidenceEnvelope<M extends string = typeof EVIDENCE_ENVELOPE_MEMBER>(
  object: unknown,
  key: VerificationKey,
  options: VerifyEvidenceEnvelopeOptions<M> = {},
): Promise<VerifiedEvidence> {
  assertPlainObject(object);
  const member = options.member ?? EVIDENCE_ENVELOPE_MEMBER;
  const jws = readEnvelope(object, member);
  const { payload, header } = await verifyJws(jws, key, {
    typ: options.typ ?? DEFAULT_EVIDENCE_TYP,
    ...(options.algorithms !== undefined && { algorithms: options.algorithms }),
  });
  const content = withoutMember(object, member);
  if (!Buffer.from(payload).equals(canonicalBytes(content))) {
    throw new BatonError('signature_invalid', 'the envelope signs different content than this object', {
      member,
    });
  }
  return { content, header };
}
