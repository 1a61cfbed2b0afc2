/** Exact integer rationals for metrics (B3.5: integer rationals, decimals printed with stated precision). */
export interface Rational {
  readonly numerator: string;
  readonly denominator: string;
  /** Rounded down to `DECIMAL_PLACES` fraction digits. */
  readonly decimal: string;
}

export const DECIMAL_PLACES = 6;

const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? (a < 0n ? -a : a) : gcd(b, a % b));

export function rational(num: bigint | number, den: bigint | number): Rational {
  let n = BigInt(num);
  let d = BigInt(den);
  const g = gcd(n, d);
  if (g > 1n) {
    n /= g;
    d /= g;
  }
  const scale = 10n ** BigInt(DECIMAL_PLACES);
  const scaled = (n * scale) / d;
  const whole = scaled / scale;
  const frac = (scaled % scale).toString().padStart(DECIMAL_PLACES, '0');
  return { numerator: n.toString(), denominator: d.toString(), decimal: `${whole}.${frac}` };
}

/** Sum of fractions, exact. */
export function addFractions(terms: readonly (readonly [bigint, bigint])[]): [bigint, bigint] {
  let n = 0n;
  let d = 1n;
  for (const [tn, td] of terms) {
    n = n * td + tn * d;
    d *= td;
    const g = gcd(n, d);
    if (g > 1n) {
      n /= g;
      d /= g;
    }
  }
  return [n, d];
}
