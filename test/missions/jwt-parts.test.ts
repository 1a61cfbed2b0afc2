/**
 * The compact-form and header checks shared by the SET and Status verifiers (A3.2 steps 2–3, A3.4
 * step 2): the fast path for a well-formed compact JWS answers as the segment-by-segment check
 * does, and the memo of headers that passed answers exactly what a fresh check answers for the
 * same (typ, allowlist, segment), never another's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkHeader, compactDefect, MAX_COMPACT_BYTES } from '../../src/missions/jwt-parts.js';

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const compact = (header: unknown): string => `${b64(header)}.${b64({ jti: 'a' })}.c2ln`;

test('compactDefect: well-formed passes, each defect is named as before', () => {
  assert.equal(compactDefect('aGVhZA.cGF5bG9hZA.c2ln'), undefined);
  assert.equal(compactDefect('aGVhZA.cGF5bG9hZA.'), undefined, 'an empty signature is refused later, by alg');
  assert.equal(compactDefect('aGVhZA.cGF5bG9hZA'), 'not a three-segment compact JWS');
  assert.equal(compactDefect('a.b.c.d'), 'not a three-segment compact JWS');
  assert.equal(compactDefect('.cGF5bG9hZA.c2ln'), 'a segment is not base64url');
  assert.equal(compactDefect('aGVhZA..c2ln'), 'a segment is not base64url');
  assert.equal(compactDefect('aGVh+A.cGF5bG9hZA.c2ln'), 'a segment is not base64url');
  assert.equal(compactDefect('aGVhZA.cGF5bG9hZA.c2ln='), 'a segment is not base64url');
  assert.equal(compactDefect(`a.${'b'.repeat(MAX_COMPACT_BYTES)}.c`), 'larger than 64 KiB');
});

test('checkHeader: a header that passed once is still judged by the typ and allowlist of each call', () => {
  const jws = compact({ alg: 'ES256', typ: 'secevent+jwt', kid: 'k1' });
  assert.deepEqual(checkHeader(jws, 'secevent+jwt', ['ES256']), { alg: 'ES256', kid: 'k1' });
  assert.deepEqual(checkHeader(jws, 'secevent+jwt', ['ES256']), { alg: 'ES256', kid: 'k1' });
  assert.equal((checkHeader(jws, 'secevent+jwt', ['EdDSA']) as { check: string }).check, 'alg');
  assert.equal(
    (checkHeader(jws, 'mission-status-response+jwt', ['ES256']) as { check: string }).check,
    'typ',
  );
  assert.deepEqual(checkHeader(jws, 'secevent+jwt', ['EdDSA', 'ES256']), { alg: 'ES256', kid: 'k1' });
});

test('checkHeader: refusals stay refusals however often they are asked', () => {
  const cases: [unknown, string][] = [
    [{ alg: 'none', typ: 'secevent+jwt', kid: 'k1' }, 'alg'],
    [{ alg: 'ES256', typ: 'secevent+jwt' }, 'kid'],
    [{ alg: 'ES256', typ: 'secevent+jwt', kid: 'k1', crit: ['b64'] }, 'crit'],
    [{ alg: 'ES256', typ: 'JWT', kid: 'k1' }, 'typ'],
  ];
  for (const [header, check] of cases)
    for (let i = 0; i < 2; i++)
      assert.equal(
        (checkHeader(compact(header), 'secevent+jwt', ['ES256']) as { check: string }).check,
        check,
      );
  const duplicate = `${Buffer.from('{"alg":"ES256","alg":"ES256","typ":"secevent+jwt","kid":"k"}').toString('base64url')}.e30.c2ln`;
  assert.equal((checkHeader(duplicate, 'secevent+jwt', ['ES256']) as { check: string }).check, 'body');
});

test('checkHeader: many distinct headers, and long ones, are each checked on their own', () => {
  for (let i = 0; i < 200; i++) {
    const kid = `k${i}`;
    assert.deepEqual(
      checkHeader(compact({ alg: 'ES256', typ: 'secevent+jwt', kid }), 'secevent+jwt', ['ES256']),
      {
        alg: 'ES256',
        kid,
      },
    );
  }
  const long = 'x'.repeat(600);
  const jws = compact({ alg: 'ES256', typ: 'secevent+jwt', kid: long });
  assert.deepEqual(checkHeader(jws, 'secevent+jwt', ['ES256']), { alg: 'ES256', kid: long });
  assert.equal((checkHeader(jws, 'secevent+jwt', ['EdDSA']) as { check: string }).check, 'alg');
});
