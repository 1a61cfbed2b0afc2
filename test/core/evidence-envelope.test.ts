import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { CompactSign } from 'jose';
import { generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { isBatonError, type BatonErrorCode } from '../../src/core/errors.js';
import {
  DEFAULT_EVIDENCE_TYP,
  EVIDENCE_ENVELOPE_MEMBER,
  signEvidenceEnvelope,
  verifyEvidenceEnvelope,
} from '../../src/core/evidence-envelope.js';
import { canonicalize } from '../../src/core/jcs.js';
import { createLocalJwks, publishJwks } from '../../src/core/jose.js';

/** The Harness Evidence example of mission-aware-harness §11.1. */
const HARNESS_EVIDENCE = {
  event_id: 'hrn_7pQ4mN9s',
  event_type: 'resume_suppressed',
  mission: {
    id: 'msn_8RfX2Lqv9TqMv4z7sA2bN1k0YpEdHc9-',
    origin: 'https://as.example.com',
    authority_hash: 'sha-256:l3KvZ4mP5x0wQrR6tY2nD9bM7sX1cF8gH2vJ4kE5pNQ',
  },
  session_id: 'sess_agent_42',
  work_item: 'queue_invoice_retry_9',
  state: 'revoked',
  state_source: 'signal',
  decision: 'suppress',
  reason: 'mission_not_active',
  occurred_at: '2026-11-02T08:16:00Z',
} as const;

type Json = Record<string, unknown>;

async function rejectsWith(promise: Promise<unknown>, code: BatonErrorCode): Promise<void> {
  await assert.rejects(promise, (error: unknown) => isBatonError(error, code));
}

async function signed() {
  const signer = generateEd25519KeyPair();
  const evidence = await signEvidenceEnvelope(HARNESS_EVIDENCE, signer.privateKey);
  return { signer, evidence: evidence as unknown as Json };
}

const envelopeOf = (evidence: Json): Json => evidence[EVIDENCE_ENVELOPE_MEMBER] as Json;

test('round trip: attached JWS whose payload is the JCS of the object without the envelope', async () => {
  const { signer, evidence } = await signed();
  const envelope = envelopeOf(evidence);
  assert.deepEqual(Object.keys(envelope).sort(), ['format', 'value']);
  assert.equal(envelope['format'], 'jws-compact');
  const [header, payload] = String(envelope['value']).split('.') as [string, string];
  assert.equal(Buffer.from(payload, 'base64url').toString('utf8'), canonicalize(HARNESS_EVIDENCE));
  const protectedHeader = JSON.parse(Buffer.from(header, 'base64url').toString()) as Json;
  assert.deepEqual(protectedHeader, { alg: 'EdDSA', typ: DEFAULT_EVIDENCE_TYP, kid: signer.kid });

  const verified = await verifyEvidenceEnvelope(evidence, signer.publicKey);
  assert.deepEqual(verified.content, HARNESS_EVIDENCE);
  assert.equal(verified.header.kid, signer.kid);
  const jwks = createLocalJwks(publishJwks([generateEd25519KeyPair().publicKey, signer.publicKey]));
  assert.deepEqual((await verifyEvidenceEnvelope(evidence, jwks)).content, HARNESS_EVIDENCE);
  // Member order does not matter: JCS sorts members.
  const reordered = Object.fromEntries(Object.entries(evidence).reverse());
  assert.deepEqual((await verifyEvidenceEnvelope(reordered, signer.publicKey)).content, HARNESS_EVIDENCE);
});

test('changed, added or removed members after signing fail', async (t) => {
  const { signer, evidence } = await signed();
  const mission = evidence['mission'] as Json;
  const variants: Json[] = [
    { ...evidence, decision: 'continue' },
    { ...evidence, mission: { ...mission, id: 'msn_other' } },
    { ...evidence, extra: true },
    Object.fromEntries(Object.entries(evidence).filter(([name]) => name !== 'work_item')),
  ];
  for (const variant of variants)
    await rejectsWith(verifyEvidenceEnvelope(variant, signer.publicKey), 'signature_invalid');
  t.diagnostic(`checked ${variants.length} altered objects`);
});

test('a tampered or malformed envelope member fails', async (t) => {
  const { signer, evidence } = await signed();
  const envelope = envelopeOf(evidence);
  const value = String(envelope['value']);
  const [h, p, s] = value.split('.') as [string, string, string];
  const flipped = `${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'AQ' : 'AA'}`;
  await rejectsWith(
    verifyEvidenceEnvelope(
      { ...evidence, evidence_envelope: { ...envelope, value: flipped } },
      signer.publicKey,
    ),
    'signature_invalid',
  );
  const malformed: unknown[] = [
    undefined,
    null,
    'a string',
    { format: 'jws-flattened', value },
    { format: 'jws-compact', value, extra: 1 },
    { format: 'jws-compact' },
    { format: 'jws-compact', value: `${h}..${s}` }, // detached form: Baton envelopes are attached
    { format: 'jws-compact', value: 42 },
  ];
  for (const bad of malformed) {
    const object = { ...evidence, evidence_envelope: bad };
    if (bad === undefined) delete object.evidence_envelope;
    await rejectsWith(verifyEvidenceEnvelope(object, signer.publicKey), 'evidence_envelope_invalid');
  }
  await rejectsWith(verifyEvidenceEnvelope([evidence], signer.publicKey), 'evidence_envelope_invalid');
  t.diagnostic(`checked ${malformed.length + 2} tampered or malformed envelopes`);
});

test('a key with another kid, another typ, or a non-EdDSA algorithm fails', async () => {
  const { signer, evidence } = await signed();
  const other = generateEd25519KeyPair();
  await rejectsWith(verifyEvidenceEnvelope(evidence, other.publicKey), 'kid_mismatch');
  await rejectsWith(
    verifyEvidenceEnvelope(evidence, createLocalJwks(publishJwks([other.publicKey]))),
    'kid_mismatch',
  );
  await rejectsWith(
    verifyEvidenceEnvelope(evidence, signer.publicKey, { typ: 'application/mission-decision-evidence+json' }),
    'jose_claim_invalid',
  );
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const rs256 = await new CompactSign(Buffer.from(canonicalize(HARNESS_EVIDENCE)))
    .setProtectedHeader({ alg: 'RS256', typ: DEFAULT_EVIDENCE_TYP, kid: 'rsa-1' })
    .sign(rsa.privateKey);
  const rsaEvidence = { ...HARNESS_EVIDENCE, evidence_envelope: { format: 'jws-compact', value: rs256 } };
  await rejectsWith(verifyEvidenceEnvelope(rsaEvidence, rsa.publicKey), 'jose_algorithm_not_allowed');
});

test('a custom member name and typ; signing refuses an object that already has the member', async () => {
  const signer = generateEd25519KeyPair();
  const typ = 'application/mission-harness-evidence+json';
  const evidence = await signEvidenceEnvelope(HARNESS_EVIDENCE, signer.privateKey, { member: 'proof', typ });
  assert.equal(evidence.proof.format, 'jws-compact');
  const verified = await verifyEvidenceEnvelope(evidence, signer.publicKey, { member: 'proof', typ });
  assert.deepEqual(verified.content, HARNESS_EVIDENCE);
  await rejectsWith(verifyEvidenceEnvelope(evidence, signer.publicKey, { typ }), 'evidence_envelope_invalid');
  await rejectsWith(
    signEvidenceEnvelope(evidence, signer.privateKey, { member: 'proof' }),
    'evidence_envelope_invalid',
  );
});

test('a "__proto__" member is signed and checked like any other', async () => {
  const signer = generateEd25519KeyPair();
  const object = JSON.parse('{"__proto__":{"admin":true},"event_id":"e1"}') as Json;
  assert.ok(Object.hasOwn(object, '__proto__'));
  const evidence = (await signEvidenceEnvelope(object, signer.privateKey)) as Json;
  const verified = await verifyEvidenceEnvelope(evidence, signer.publicKey);
  assert.equal(canonicalize(verified.content), '{"__proto__":{"admin":true},"event_id":"e1"}');
  const stripped = JSON.parse(JSON.stringify(evidence).replace('"__proto__":{"admin":true},', '')) as Json;
  await rejectsWith(verifyEvidenceEnvelope(stripped, signer.publicKey), 'signature_invalid');
});
