/**
 * Identifiers and secrets. Ids are opaque and domain-local (AOC-REQ-002: no new namespace is
 * claimed); the prefix only helps a human reading logs. Secrets are 256-bit random values shown
 * once and stored only as digests.
 */
import { randomBytes, randomUUID } from 'node:crypto';

export interface IdSource {
  /** A fresh opaque id such as `occ_3f2c…`. */
  id(prefix: string): string;
  /** A fresh 256-bit secret, base64url. */
  secret(): string;
}

export const randomIdSource: IdSource = {
  id: (prefix) => `${prefix}_${randomUUID().replaceAll('-', '')}`,
  secret: () => randomBytes(32).toString('base64url'),
};

/** Deterministic ids for tests and replays: `prefix_000001`, … and secrets derived from a counter. */
export function sequentialIdSource(seed = 'seq'): IdSource {
  let n = 0;
  return {
    id: (prefix) => `${prefix}_${String(++n).padStart(6, '0')}`,
    secret: () => Buffer.from(`${seed}-secret-${++n}`.padEnd(32, '.')).toString('base64url'),
  };
}
