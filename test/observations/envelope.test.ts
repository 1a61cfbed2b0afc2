/**
 * Signed records across a trust boundary (B7 13, 6; OBS-07, OBS-12, C-B10).
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { isBatonError } from '../../src/core/errors.js';
import {
  OBSERVATION_PROFILE,
  checkByteDigest,
  jcsDigestOf,
  signRecord,
  verifyRecord,
  type ObservationRecord,
} from '../../src/observations/index.js';
import { decidedRecord } from './support.js';

const key = generateEd25519KeyPair();
const NOW = Date.parse('2026-10-12T04:06:00Z');
const signable = (o: Record<string, unknown> = {}): ObservationRecord =>
  decidedRecord({
    profile: OBSERVATION_PROFILE,
    producer: 'urn:example:producer',
    audience: 'urn:example:verifier',
    issued_at: '2026-10-12T04:05:00Z',
    expires_at: '2026-10-12T05:05:00Z',
    ...o,
  });
const opts = { key: key.publicKey, audience: 'urn:example:verifier', now: NOW };

async function refusedWith(
  value: unknown,
  code: string,
  path?: string,
  o: Partial<typeof opts> = {},
): Promise<void> {
  await assert.rejects(verifyRecord(value, { ...opts, ...o }), (err: unknown) => {
    assert.ok(isBatonError(err), String(err));
    assert.equal(err.code, code, err.message);
    if (path !== undefined) assert.equal(err.details['path'], path);
    return true;
  });
}

test('B7-13: a signed record verifies for its audience while fresh', async () => {
  const signed = await signRecord(signable(), key.privateKey);
  const r = await verifyRecord(signed, opts);
  assert.equal(r.record.record_id, signed.record_id);
});

test('B7-13 OBS-12: wrong audience, expired, future, unknown profile, other key, edited payload, unsigned', async () => {
  const signed = await signRecord(signable(), key.privateKey);
  await refusedWith(signed, 'observation_record_invalid', '$.audience', {
    audience: 'urn:example:someone-else',
  });
  await refusedWith(signed, 'observation_record_invalid', '$.expires_at', {
    now: Date.parse('2026-10-12T05:05:00Z'),
  });
  await refusedWith(signed, 'observation_record_invalid', '$.issued_at', {
    now: Date.parse('2026-10-12T04:04:29Z'),
  });
  await refusedWith({ ...signed, profile: 'urn:other' }, 'observation_profile_unsupported', '$.profile');
  // Another key: the kid in the JWS header does not name it.
  await refusedWith(signed, 'kid_mismatch', undefined, { key: generateEd25519KeyPair().publicKey });
  await refusedWith({ ...signed, limitations: ['edited'] }, 'signature_invalid');
  await refusedWith(signable(), 'observation_record_invalid', '$.evidence_envelope');
  const { audience: _a, ...noAudience } = signable();
  await assert.rejects(signRecord(noAudience, key.privateKey), /\$\.audience/);
});

test('B7-6 OBS-10: a jcs digest that does not match the stored artifact fails; another representation never matches', () => {
  const artifact = { a: 1, b: [2, 3] };
  const d = jcsDigestOf('test artifact', artifact);
  assert.equal(checkByteDigest(d, 'jcs', Buffer.from('{"a":1,"b":[2,3]}')), 'match');
  assert.equal(checkByteDigest(d, 'jcs', Buffer.from('{"a":1,"b":[2,4]}')), 'mismatch');
  // The same bytes held as raw are a different artifact: never claimed equal (OBS-10).
  assert.equal(checkByteDigest(d, 'raw', Buffer.from('{"a":1,"b":[2,3]}')), 'representation_differs');
});
