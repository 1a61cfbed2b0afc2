import assert from 'node:assert/strict';
import {
  createHash,
  createPrivateKey,
  sign as rawSign,
  verify as rawVerify,
  type KeyObject,
} from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { generateEd25519KeyPair, importEd25519PrivateKey } from '../../src/core/ed25519.js';
import { ED25519_L, littleEndianToBigInt } from '../../src/core/ed25519-policy.js';
import { isBatonError } from '../../src/core/errors.js';
import { formatRfc3339, parseRfc3339 } from '../../src/core/time.js';
import {
  decodeLeaseHeader,
  encodeLeaseHeader,
  keyRing,
  leaseFromMcpMeta,
  parseFenceToken,
  signDocument,
  signLease,
  signingKeyFrom,
  verifyLease,
  verifyLeaseText,
  withMcpLease,
  type Lease,
  type LeaseChecks,
  type UnsignedLease,
} from '../../src/leases/index.js';
import { DRAFT_LEASE_MEMBERS } from './example.js';

/** The draft's §3 example, plus issued_at/expires_at (DESIGN.md §6). */
const EXAMPLE: UnsignedLease = {
  ...DRAFT_LEASE_MEMBERS,
  pre_image_state_hash: 'sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae',
  inverse_payload_jcs_hash: 'sha256:4fc82b26aecb47d2868c4efbe3581732a3e7cbcc6c2efb32062c08170a05eeb8',
  trace_anchor_ref: 'sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  issued_at: '2026-11-29T18:00:00.000Z',
  expires_at: '2026-11-29T18:00:30.000Z',
};
const NOW = parseRfc3339(EXAMPLE.issued_at);
/** RFC 8032 §7.1 TEST 1 secret key. */
const RFC8032_SEED = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');

// --- an independent implementation of the rules, from node:crypto alone ------------------------

/** JCS of a flat object of ASCII strings and integers: sorted members, JSON.stringify values. */
function flatJcs(object: Record<string, unknown>): string {
  const members = Object.keys(object)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${JSON.stringify(object[k])}`);
  return `{${members.join(',')}}`;
}

function independentKid(privateKey: KeyObject): string {
  const x = privateKey.export({ format: 'jwk' }).x ?? '';
  return `sha256:${createHash('sha256').update(Buffer.from(x, 'base64url')).digest('hex')}`;
}

function independentSign(lease: UnsignedLease, privateKey: KeyObject): Lease {
  const sig = rawSign(null, Buffer.from(flatJcs({ ...lease })), privateKey).toString('base64url');
  return {
    ...lease,
    signature: { alg: 'Ed25519', kid: independentKid(privateKey) as Lease['signature']['kid'], sig },
  };
}

function independentVerify(lease: Lease, publicKey: KeyObject): boolean {
  const { signature, ...body } = lease;
  return (
    signature.alg === 'Ed25519' &&
    rawVerify(null, Buffer.from(flatJcs(body)), publicKey, Buffer.from(signature.sig, 'base64url'))
  );
}

const rfcKey = importEd25519PrivateKey({ seed: RFC8032_SEED });
const rfcPkcs8 = createPrivateKey({
  key: rfcKey.export({ format: 'der', type: 'pkcs8' }),
  format: 'der',
  type: 'pkcs8',
});
const checks = (over: Partial<LeaseChecks> = {}): LeaseChecks => ({
  nowMs: NOW,
  keys: keyRing([rfcKey]),
  ...over,
});

test('Baton and an independent node:crypto implementation produce and accept the same signed lease', () => {
  const baton = signLease(EXAMPLE, signingKeyFrom(rfcKey));
  const other = independentSign(EXAMPLE, rfcPkcs8);
  assert.deepEqual(baton, other, 'Ed25519 is deterministic: identical documents');
  assert.ok(independentVerify(baton, rfcKey), "Baton's lease verifies elsewhere");
  assert.deepEqual(
    verifyLease(other, checks()),
    {
      ok: true,
      lease: other,
      checked: ['signature', 'recovery_mode', 'recovery_window', 'clock_skew', 'expiry'],
    },
    "another implementation's lease verifies",
  );
  const random = generateEd25519KeyPair();
  const foreign = independentSign({ ...EXAMPLE, lease_id: 'urn:uuid:other' }, random.privateKey);
  assert.equal(verifyLease(foreign, { nowMs: NOW, keys: keyRing([random.publicKey]) }).ok, true);
});

const example = signLease(EXAMPLE, signingKeyFrom(rfcKey));
const code = (lease: Lease, over: Partial<LeaseChecks> = {}): string => {
  const v = verifyLease(lease, checks(over));
  return v.ok ? 'valid' : v.rejection.code;
};
const resigned = (over: Partial<UnsignedLease>): Lease =>
  signLease({ ...EXAMPLE, ...over }, signingKeyFrom(rfcKey));
// signLease refuses what the verifier refuses on its face (docs/leases.md §2): signed raw, to test the verifier.
const forged = (over: Partial<UnsignedLease>): Lease =>
  signDocument({ ...EXAMPLE, ...over }, signingKeyFrom(rfcKey));

test('rule boundaries: skew, expiry, window inequality, fence epoch, pre-image, inverse payload', () => {
  const issued = NOW;
  const expires = parseRfc3339(EXAMPLE.expires_at);
  const rows: Array<[string, string, string]> = [
    ['offline, no state given', code(example), 'valid'],
    ['issued_at exactly 60 s ahead', code(example, { nowMs: issued - 60_000 }), 'valid'],
    ['issued_at 60.001 s ahead', code(example, { nowMs: issued - 60_001 }), 'ERR_CLOCK_SKEW'],
    ['now == expires_at', code(example, { nowMs: expires }), 'valid'],
    ['1 ms after expires_at', code(example, { nowMs: expires + 1 }), 'ERR_LEASE_EXPIRED'],
    ['t_req_ms == t_granted_ms', code(resigned({ t_req_ms: 2000 })), 'valid'],
    ['t_req_ms > t_granted_ms', code(forged({ t_req_ms: 2001 })), 'ERR_RECOVERY_WINDOW'],
    ['epoch one below the fence', code(example, { epoch: 1048578 }), 'valid'],
    ['epoch equal to the fence', code(example, { epoch: 1048579 }), 'ERR_STALE_FENCE_EPOCH'],
    ['epoch above the fence', code(example, { epoch: 1048580 }), 'ERR_STALE_FENCE_EPOCH'],
    ['state digest matches', code(example, { stateDigest: EXAMPLE.pre_image_state_hash }), 'valid'],
    [
      'state digest differs',
      code(example, { stateDigest: EXAMPLE.trace_anchor_ref }),
      'ERR_PRE_IMAGE_MISMATCH',
    ],
    [
      'inverse payload missing',
      code(example, { inverse: { staged: undefined } }),
      'ERR_INVERSE_PAYLOAD_MISMATCH',
    ],
    [
      'inverse payload differs',
      code(example, { inverse: { staged: { op: 'release' } } }),
      'ERR_INVERSE_PAYLOAD_MISMATCH',
    ],
    ['target differs', code(example, { target: 'https://erp.example.com/x' }), 'ERR_TARGET_MISMATCH'],
    ['replayed', code(example, { replayed: true }), 'ERR_LEASE_REPLAYED'],
    [
      'unknown mode beats window',
      code(forged({ recovery_mode: 'NONE', t_req_ms: 9999 })),
      'ERR_UNKNOWN_RECOVERY_MODE',
    ],
    [
      'signature beats everything',
      code({ ...forged({ recovery_mode: 'NONE' }), t_req_ms: 1 }),
      'ERR_LEASE_SIGNATURE',
    ],
    [
      'stale epoch beats pre-image',
      code(example, { epoch: 1048579, stateDigest: EXAMPLE.trace_anchor_ref }),
      'ERR_STALE_FENCE_EPOCH',
    ],
  ];
  for (const [name, actual, expected] of rows) assert.equal(actual, expected, name);
  const s = Buffer.from(example.signature.sig, 'base64url');
  // S + L verifies under a lax verifier (malleability); Baton refuses it.
  const sPlusL = littleEndianToBigInt(s.subarray(32)) + ED25519_L;
  const malleable = Buffer.concat([
    s.subarray(0, 32),
    Buffer.from(sPlusL.toString(16).padStart(64, '0'), 'hex').reverse(),
  ]);
  assert.equal(
    code({ ...example, signature: { ...example.signature, sig: malleable.toString('base64url') } }),
    'ERR_LEASE_SIGNATURE',
  );
  assert.equal(
    code({ ...example, signature: { ...example.signature, sig: `${example.signature.sig}==` } }),
    'ERR_LEASE_SIGNATURE',
  );
});

test('malformed leases: every missing member, wrong types and forms', (t) => {
  const text = JSON.stringify(example);
  const obj = JSON.parse(text) as Record<string, unknown>;
  const bad: Array<[string, unknown]> = [
    ['t_req_ms', -1],
    ['t_granted_ms', '2000'],
    ['cas_fence_epoch', 1.5],
    ['cas_fence_epoch', 0],
    ['pre_image_state_hash', EXAMPLE.pre_image_state_hash.toUpperCase()],
    ['trace_anchor_ref', 'sha-256:abc'],
    ['issued_at', '2026-11-29 18:00:00Z'],
    ['expires_at', EXAMPLE.issued_at],
    ['sor_target_uri', 'not a uri'],
    ['lease_id', ''],
    ['recovery_mode', 7],
    ['signature', 'Ed25519'],
  ];
  const variants = [
    ...Object.keys(obj).map((m) => {
      const { [m]: _gone, ...rest } = obj;
      return rest;
    }),
    ...(['alg', 'kid', 'sig'] as const).map((m) => {
      const { [m]: _gone, ...sig } = example.signature;
      return { ...obj, signature: sig };
    }),
    ...bad.map(([m, v]) => ({ ...obj, [m]: v })),
    { ...obj, signature: { ...example.signature, extra: 1 } },
  ];
  for (const v of variants) {
    const verdict = verifyLeaseText(JSON.stringify(v), checks());
    assert.equal(
      verdict.ok ? 'valid' : verdict.rejection.code,
      'ERR_LEASE_MALFORMED',
      JSON.stringify(v).slice(0, 120),
    );
  }
  for (const raw of [
    text.replace('{', '{"t_req_ms":450,'),
    `${text} `.replace(' ', 'x'),
    '\ufeff' + text,
    '[]',
  ]) {
    const verdict = verifyLeaseText(raw, checks());
    assert.equal(verdict.ok ? 'valid' : verdict.rejection.code, 'ERR_LEASE_MALFORMED');
  }
  t.diagnostic(`checked ${variants.length + 4} malformed leases`);
});

test('sor_target_uri: at most 2048 characters, the scheme included', () => {
  const uri = (length: number, scheme = 'https'): string => {
    const head = `${scheme}://erp.example.com/`;
    return head + 'a'.repeat(length - head.length);
  };
  const longest = uri(2048);
  assert.equal(code(resigned({ sor_target_uri: longest }), { target: longest }), 'valid');
  const malformed = (target: string): string => {
    // The signature is not reached: the form is checked first.
    const verdict = verifyLeaseText(JSON.stringify({ ...example, sor_target_uri: target }), checks());
    return verdict.ok ? 'valid' : verdict.rejection.code;
  };
  assert.equal(malformed(uri(2049)), 'ERR_LEASE_MALFORMED');
  assert.equal(malformed(uri(5001, 'x'.repeat(3000))), 'ERR_LEASE_MALFORMED', 'a long scheme counts too');
  assert.throws(() => resigned({ sor_target_uri: uri(2049) }), /sor_target_uri/);
});

test('property: any single-byte change to a signed lease is refused', (t) => {
  const bytes = Buffer.from(JSON.stringify(example));
  let runs = 0;
  fc.assert(
    fc.property(fc.nat(bytes.length - 1), fc.integer({ min: 1, max: 255 }), (index, delta) => {
      runs++;
      const changed = Buffer.from(bytes);
      changed[index] = (changed[index]! + delta) % 256;
      return !verifyLeaseText(changed, checks()).ok;
    }),
    { numRuns: 2000 },
  );
  t.diagnostic(`checked ${runs} mutated leases`);
});

test('carriage: header, fence token and MCP _meta', () => {
  const header = encodeLeaseHeader(example);
  assert.match(header, /^[A-Za-z0-9_-]+$/);
  assert.deepEqual(JSON.parse(decodeLeaseHeader(header)!.toString()), example);
  assert.deepEqual(JSON.parse(decodeLeaseHeader(JSON.stringify(example))!.toString()), example);
  assert.equal(decodeLeaseHeader(undefined), undefined);
  for (const bad of [`${header}=`, `${header}, ${header}`, '', ['a', 'b']]) {
    assert.throws(() => decodeLeaseHeader(bad), { code: 'ERR_LEASE_MALFORMED' });
  }
  assert.equal(parseFenceToken('1048579'), 1048579);
  assert.equal(parseFenceToken('0'), 0);
  for (const bad of ['01', '-1', '1.0', ' 1', '', null, '99999999999999999'])
    assert.throws(() => parseFenceToken(bad));
  const meta = withMcpLease({ progressToken: 't' }, example, { op: 'release', quantity: 3 });
  const back = leaseFromMcpMeta(meta);
  assert.deepEqual(back.lease, example);
  assert.deepEqual(back.inversePayload, { op: 'release', quantity: 3 });
  assert.equal(verifyLeaseText(back.leaseBytes!, checks()).ok, true);
  assert.equal(leaseFromMcpMeta({}).leaseBytes, undefined);
  assert.equal(formatRfc3339(NOW), EXAMPLE.issued_at);
});

// docs/leases.md §2: signLease runs the verifier's rules on the lease alone (checkLeaseFace) and
// throws the code the verifier would answer; the CLI test covers `baton lease sign`.
test("signLease refuses a lease every verifier refuses on its face, with the verifier's code", () => {
  const key = signingKeyFrom(rfcKey);
  const cases: Array<[Partial<UnsignedLease>, string]> = [
    [{ recovery_mode: 'YOLO' }, 'ERR_UNKNOWN_RECOVERY_MODE'],
    [{ t_req_ms: 99999, t_granted_ms: 1 }, 'ERR_RECOVERY_WINDOW'],
    [{ t_granted_ms: Number.MAX_SAFE_INTEGER }, 'ERR_RECOVERY_WINDOW'],
  ];
  const verdictCode = code;
  for (const [over, expected] of cases) {
    assert.throws(
      () => signLease({ ...EXAMPLE, ...over }, key),
      (e: unknown) => isBatonError(e) && e.code === expected && typeof e.details['rule'] === 'string',
      JSON.stringify(over),
    );
    // Signed raw, the verifier refuses it with that same code.
    assert.equal(verdictCode(forged(over)), expected);
  }
});
