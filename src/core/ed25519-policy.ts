/**
 * Baton's Ed25519 verification policy: the encoding checks node:crypto (OpenSSL) does not do for us,
 * plus the ones it does, repeated so the policy does not depend on the OpenSSL build. The policy and
 * its reasoning are in docs/crypto.md; test/core/ed25519.test.ts proves it on Wycheproof and CCTV.
 *
 * Points are 32-byte little-endian encodings of y with the sign of x in the top bit (RFC 8032 §5.1.2).
 * Everything here is syntactic or a single Legendre symbol: no point arithmetic is needed because
 * non-canonical encodings are refused first, after which the small-order points have exactly one
 * encoding each.
 */

/** The field prime p = 2^255 - 19. */
export const ED25519_P = 2n ** 255n - 19n;
/** The order L of the prime-order subgroup (RFC 8032 §5.1). */
export const ED25519_L = 2n ** 252n + 27742317777372353535851937790883648493n;

const Y_MASK = (1n << 255n) - 1n;

function modPow(base: bigint, exponent: bigint): bigint {
  let result = 1n;
  let b = ((base % ED25519_P) + ED25519_P) % ED25519_P;
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % ED25519_P;
    b = (b * b) % ED25519_P;
  }
  return result;
}

/** The curve constant d = -121665/121666 mod p (RFC 8032 §5.1), computed rather than transcribed. */
export const ED25519_D = (((-121665n * modPow(121666n, ED25519_P - 2n)) % ED25519_P) + ED25519_P) % ED25519_P;

/** Little-endian bytes as an unsigned integer. */
export function littleEndianToBigInt(bytes: Uint8Array): bigint {
  let value = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[i] ?? 0);
  return value;
}

/**
 * The canonical encodings of the eight points of order dividing 8 (orders 1, 2, 4, 4, 8, 8, 8, 8).
 * The test recomputes them as the multiples of [L]P for curve points P, so this list is checked, not
 * trusted. Their other six encodings (y >= p, or x = -0) are non-canonical and refused before this list
 * is consulted.
 */
export const SMALL_ORDER_ENCODINGS: readonly string[] = [
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  '0100000000000000000000000000000000000000000000000000000000000000',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
];
const SMALL_ORDER = new Set(SMALL_ORDER_ENCODINGS);

/**
 * RFC 8032 §5.1.3 decoding fails for y >= p, and for x = 0 with the sign bit set ("x = -0");
 * x = 0 exactly when y = ±1, so both conditions are syntactic.
 */
export function isCanonicalPointEncoding(encoded: Uint8Array): boolean {
  if (encoded.length !== 32) return false;
  const word = littleEndianToBigInt(encoded);
  const y = word & Y_MASK;
  if (y >= ED25519_P) return false;
  const negativeZeroX = word >> 255n === 1n && (y === 1n || y === ED25519_P - 1n);
  return !negativeZeroX;
}

/** Whether a canonical encoding's y has a curve point: x² = (y² - 1)/(d·y² + 1) must be a square. */
export function isOnCurve(encoded: Uint8Array): boolean {
  const y = littleEndianToBigInt(encoded) & Y_MASK;
  const y2 = (y * y) % ED25519_P;
  const u = (y2 - 1n + ED25519_P) % ED25519_P;
  const v = (ED25519_D * y2 + 1n) % ED25519_P;
  // u/v is a square iff u·v is (v is never 0: -1/d is not a square). Euler's criterion.
  const legendre = modPow(u * v, (ED25519_P - 1n) / 2n);
  return legendre !== ED25519_P - 1n;
}

export function isSmallOrderEncoding(encoded: Uint8Array): boolean {
  return SMALL_ORDER.has(Buffer.from(encoded).toString('hex'));
}

export type PublicKeyDefect = 'length' | 'non_canonical' | 'not_on_curve' | 'small_order';

/** Why a raw public key A is refused by the policy, or undefined when it is acceptable. */
export function publicKeyDefect(raw: Uint8Array): PublicKeyDefect | undefined {
  if (raw.length !== 32) return 'length';
  if (!isCanonicalPointEncoding(raw)) return 'non_canonical';
  if (!isOnCurve(raw)) return 'not_on_curve';
  if (isSmallOrderEncoding(raw)) return 'small_order';
  return undefined;
}

export type SignatureDefect = 'length' | 'non_canonical_r' | 's_out_of_range';

/** Why a signature R || S is refused before the equation is checked, or undefined. */
export function signatureDefect(signature: Uint8Array): SignatureDefect | undefined {
  if (signature.length !== 64) return 'length';
  if (!isCanonicalPointEncoding(signature.subarray(0, 32))) return 'non_canonical_r';
  // RFC 8032 §5.1.7: S must be in [0, L); S + nL would make signatures malleable.
  if (littleEndianToBigInt(signature.subarray(32, 64)) >= ED25519_L) return 's_out_of_range';
  return undefined;
}
