/** HAR-26, A2.6, A4: the Harness Evidence object exactly as the draft defines it, signed (C-A5). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { digestJcs } from '../../src/core/digest.js';
import { generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { BatonError } from '../../src/core/errors.js';
import { decodeProtectedHeader } from 'jose';
import { harnessEvidence, signHarnessEvidence, verifyHarnessEvidence } from '../../src/missions/evidence.js';
import { MISSION, ORIGIN } from './fixtures.js';

const draftExample = {
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
};

test('A4 regression vector: JCS of the draft Harness Evidence example', () => {
  assert.equal(digestJcs(draftExample), 'sha-256:mJhsYar9hWUegk62mZ3tZEdkxF34xD4qUNTwzcyhinU');
});

test('HAR-26 the builder produces the draft example member for member', () => {
  const built = harnessEvidence(
    {
      eventType: 'resume_suppressed',
      mission: { id: MISSION, origin: ORIGIN, authority_hash: draftExample.mission.authority_hash },
      sessionId: 'sess_agent_42',
      workItem: 'queue_invoice_retry_9',
      state: 'revoked',
      stateSource: 'signal',
      decision: 'suppress',
      reason: 'mission_not_active',
    },
    'hrn_7pQ4mN9s',
    Date.parse('2026-11-02T08:16:00Z'),
  );
  // formatRfc3339 writes milliseconds; the example writes none: same instant, different bytes.
  assert.deepEqual({ ...built, occurred_at: '2026-11-02T08:16:00Z' }, draftExample);
  assert.equal(built.occurred_at, '2026-11-02T08:16:00.000Z');
  assert.equal(Object.hasOwn(built, 'freshness'), false);
  assert.equal(Object.hasOwn(built, 'actor'), false);
});

test('HAR-26 C-A5 signed in a jws-compact envelope, typ baton-harness-evidence+json; tampering fails', async () => {
  const pair = generateEd25519KeyPair();
  const e = harnessEvidence(
    {
      eventType: 'queue_suppressed',
      mission: { id: MISSION, origin: ORIGIN },
      workItem: 'wrk_1',
      state: 'revoked',
      stateSource: 'signal',
      checkedAt: 0,
      expiresAt: 1000,
      decision: 'suppress',
      reason: 'mission_not_active',
    },
    'hrn_1',
    5,
  );
  const signed = await signHarnessEvidence(e, pair.privateKey);
  assert.equal(signed.evidence_envelope.format, 'jws-compact');
  assert.equal(decodeProtectedHeader(signed.evidence_envelope.value).typ, 'baton-harness-evidence+json');
  assert.deepEqual(await verifyHarnessEvidence(signed, pair.publicKey), e);
  assert.deepEqual(e.freshness, {
    checked_at: '1970-01-01T00:00:00.000Z',
    expires_at: '1970-01-01T00:00:01.000Z',
  });
  await assert.rejects(
    verifyHarnessEvidence({ ...signed, decision: 'continue' }, pair.publicKey),
    BatonError,
  );
  await assert.rejects(verifyHarnessEvidence(signed, generateEd25519KeyPair().publicKey), BatonError);
});
