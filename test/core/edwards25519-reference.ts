/**
 * A slow, independent edwards25519 reference (affine BigInt arithmetic, RFC 8032 §5.1) used only by
 * the tests to recompute what src/core/ed25519-policy.ts asserts: the small-order points and the
 * on-curve check. It shares no code with the module under test.
 */
export const P = 2n ** 255n - 19n;
export const L = 2n ** 252n + 27742317777372353535851937790883648493n;

export const mod = (a: bigint): bigint => ((a % P) + P) % P;

export function pow(base: bigint, exponent: bigint): bigint {
  let result = 1n;
  let b = mod(base);
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % P;
    b = (b * b) % P;
  }
  return result;
}

const inv = (a: bigint): bigint => pow(a, P - 2n);
export const D = mod(-121665n * inv(121666n));
const SQRT_M1 = pow(2n, (P - 1n) / 4n);

export interface Point {
  x: bigint;
  y: bigint;
}

export const IDENTITY: Point = { x: 0n, y: 1n };

/** RFC 8032 §5.1.3 decoding, without its canonicality checks; undefined when y has no x. */
export function decodeLoose(bytes: Uint8Array): Point | undefined {
  let word = 0n;
  for (let i = 31; i >= 0; i--) word = (word << 8n) | BigInt(bytes[i] ?? 0);
  const sign = word >> 255n;
  const y = mod(word & ((1n << 255n) - 1n));
  const u = mod(y * y - 1n);
  const v = mod(D * y * y + 1n);
  let x = mod(u * pow(v, 3n) * pow(u * pow(v, 7n), (P - 5n) / 8n));
  const vx2 = mod(v * x * x);
  if (vx2 === mod(-u)) x = mod(x * SQRT_M1);
  else if (vx2 !== u) return undefined;
  if ((x & 1n) !== sign) x = mod(-x);
  return { x, y };
}

export function add(p: Point, q: Point): Point {
  const t = mod(D * p.x * q.x * p.y * q.y);
  return {
    x: mod((p.x * q.y + q.x * p.y) * inv(1n + t)),
    y: mod((p.y * q.y + p.x * q.x) * inv(1n - t)),
  };
}

export function multiply(k: bigint, p: Point): Point {
  let result = IDENTITY;
  let addend = p;
  for (let e = k; e > 0n; e >>= 1n) {
    if (e & 1n) result = add(result, addend);
    addend = add(addend, addend);
  }
  return result;
}

export const equal = (p: Point, q: Point): boolean => p.x === q.x && p.y === q.y;

export function encode(p: Point): string {
  let word = p.y | ((p.x & 1n) << 255n);
  const out = Buffer.alloc(32);
  for (let i = 0; i < 32; i++) {
    out[i] = Number(word & 255n);
    word >>= 8n;
  }
  return out.toString('hex');
}

/** The order of a point of small order (1, 2, 4 or 8), or undefined if [8]p is not the identity. */
export function smallOrder(p: Point): number | undefined {
  let q = p;
  for (let n = 1; n <= 8; n++) {
    if (equal(q, IDENTITY)) return 8 % n === 0 ? n : undefined;
    q = add(q, p);
  }
  return undefined;
}
