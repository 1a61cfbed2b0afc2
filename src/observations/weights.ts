/**
 * CIF weights (OBS-14, B3.6): decimal strings with at most six fraction digits, summed exactly as
 * integer micro-units; each ≥ 0 and the sum exactly 1 000 000. No floating point decides it.
 */
import { BatonError } from '../core/index.js';

export const MICRO = 1_000_000;
const DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]{1,6}))?$/;

export interface Weights {
  readonly names: readonly string[];
  /** Each weight in micro-units. */
  readonly micro: Readonly<Record<string, number>>;
}

function bad(path: string, message: string): never {
  throw new BatonError('input_invalid', `weights ${path} ${message}`, { path });
}

export function parseWeights(value: unknown): Weights {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    bad('$.weights', 'must be an object');
  const micro: Record<string, number> = {};
  let sum = 0;
  for (const [name, w] of Object.entries(value)) {
    const m = typeof w === 'string' ? DECIMAL.exec(w) : null;
    if (m === null)
      bad(`$.weights.${name}`, 'must be a non-negative decimal string with at most 6 fraction digits');
    const units = Number(m[1]) * MICRO + Number((m[2] ?? '').padEnd(6, '0'));
    micro[name] = units;
    sum += units;
  }
  if (sum !== MICRO) bad('$.weights', `must sum to exactly 1 (they sum to ${sum / MICRO})`);
  return { names: Object.keys(micro), micro };
}
