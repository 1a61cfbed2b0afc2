import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { canonicalBytes } from '../../src/core/jcs.js';
import { formatRfc3339, parseRfc3339 } from '../../src/core/time.js';
import { sha256HexTag } from '../../src/core/digest.js';
import { leaseSigningInput } from '../../src/leases/lease-jcs.js';
import { instantMs } from '../../src/leases/instant.js';
import { signingInput, type UnsignedLease } from '../../src/leases/index.js';
import { DRAFT_LEASE_MEMBERS } from './example.js';

const outcome = (f: () => number): number | string => {
  try {
    return f();
  } catch (error) {
    return (error as { code?: string }).code ?? 'threw';
  }
};

test('instantMs agrees with the core RFC 3339 parser on every instant and on near-misses', (t) => {
  const MIN = Date.parse('0000-01-01T00:00:00.000Z');
  const MAX = Date.parse('9999-12-31T23:59:59.999Z');
  let n = 0;
  fc.assert(
    fc.property(fc.integer({ min: MIN, max: MAX }), (ms) => {
      n++;
      const text = formatRfc3339(ms);
      return text.length !== 24 || (instantMs(text) === parseRfc3339(text) && instantMs(text) === ms);
    }),
    { numRuns: 3000 },
  );
  const base = '2024-02-29T23:59:59.999Z';
  const variants = [
    '2023-02-29T00:00:00.000Z',
    '2024-13-01T00:00:00.000Z',
    '2024-04-31T00:00:00.000Z',
    '2024-01-01T24:00:00.000Z',
    '2024-01-01T00:60:00.000Z',
    '2016-12-31T23:59:60.000Z',
    '2024-01-01t00:00:00.000z',
    '2024-01-01T00:00:00.000+00:00',
    '2024-01-01T00:00:00Z',
    '2024-01-01T00:00:00.0000Z',
    '+02024-01-01T00:00:00.000Z',
    '2024-01-01T00:00:00.00aZ',
    base,
  ];
  for (let i = 0; i < base.length; i++) {
    for (const c of '0123456789-:.TZ x') variants.push(base.slice(0, i) + c + base.slice(i + 1));
  }
  for (const v of variants)
    assert.equal(
      outcome(() => instantMs(v)),
      outcome(() => parseRfc3339(v)),
      v,
    );
  t.diagnostic(`checked ${n} instants and ${variants.length} spellings`);
});

const lease: UnsignedLease = {
  ...DRAFT_LEASE_MEMBERS,
  pre_image_state_hash: sha256HexTag('pre'),
  inverse_payload_jcs_hash: sha256HexTag('inverse'),
  trace_anchor_ref: sha256HexTag('trace'),
  issued_at: '2026-11-29T18:00:00.000Z',
  expires_at: '2026-11-29T18:00:30.000Z',
};

test('the lease signing input equals RFC 8785 JCS for any member values, fast path or not', (t) => {
  const members = Object.keys(lease) as Array<keyof UnsignedLease>;
  const value = fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constant(-0),
  );
  let n = 0;
  fc.assert(
    fc.property(
      fc.constantFrom(...members),
      value,
      fc.boolean(),
      fc.option(fc.string()),
      (member, v, signed, extra) => {
        n++;
        const doc: Record<string, unknown> = { ...lease, [member]: v };
        if (signed) doc['signature'] = { alg: 'Ed25519', kid: 'k', sig: 's' };
        if (extra !== null) doc[`x${extra}`] = 1;
        const bytes = (f: () => Buffer): string => {
          try {
            return f().toString('hex');
          } catch (error) {
            return `threw ${(error as { code?: string }).code ?? '?'}`;
          }
        };
        return (
          bytes(() => leaseSigningInput(doc as unknown as UnsignedLease)) === bytes(() => signingInput(doc))
        );
      },
    ),
    { numRuns: 3000 },
  );
  assert.ok(leaseSigningInput(lease).equals(canonicalBytes(lease)));
  t.diagnostic(`checked ${n} lease variants`);
});
